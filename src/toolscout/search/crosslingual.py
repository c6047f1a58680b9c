"""Cross-lingual search: a request in another language than the catalog's finds its tool.

:func:`enable_crosslingual` registers ``semantic`` and ``hybrid`` like
:func:`~toolscout.search.hybrid.enable_hybrid`, with two models behind them: a request that
looks English, against an English catalog, goes to the English model (MiniLM, the
``embed`` extra); any other goes to the multilingual one (USE multilingual v3, or
multilingual-e5-small with ``"multilingual-e5"``; the ``multilingual`` extra). Why two: on
English requests the multilingual models rank below MiniLM (nDCG@10 92 and 84 vs 98 on the
demo set, 74 and 67 vs 77 on metatool; docs/benchmarks.md), so routing keeps English quality
exactly where it was and gives other languages 75 instead of 32 (demo) and 70 instead of 34
(metatool).
Each model embeds the catalog on its first request, not before.

:func:`language_hint` is the warning a search that cannot cross languages adds when a
request looks non-English and the catalog English.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..errors import EmbeddingUnavailable, MissingExtra
from .hybrid import HybridSearch, enable_hybrid
from .language import catalog_is_english, looks_english
from .ranking import Ranking

if TYPE_CHECKING:
    from ..embed import Embedder
    from ..embed.cache import BlobStore
    from ..model import Tool
    from .index import ToolIndex

__all__ = ["CrossLingualSearch", "enable_crosslingual", "is_crosslingual", "language_hint"]

HINT = (
    "the request is not in English and the tools are: {what} does not match across "
    "languages; install toolscout[multilingual] and turn on multilingual embeddings "
    "(Gateway(..., embeddings=\"multilingual\"), or toolscout search --model multilingual)"
)


KEYWORD_ONLY = (
    "the request is not in English and the tools are: keyword search does not match across "
    "languages; search_type \"hybrid\" (the default here) does"
)


class CrossLingualSearch:
    """``semantic`` / ``hybrid`` through the English model or the multilingual one, per request."""

    def __init__(self, index: ToolIndex, multilingual: HybridSearch, english: HybridSearch | None) -> None:
        self.index = index
        self.multilingual = multilingual
        self.english = english
        self.dense = multilingual.dense

    def route(self, query: str) -> HybridSearch:
        """The search that serves ``query``: English model only for English on English."""
        if self.english is not None and looks_english(query) and _english_tools(self.index.tools):
            return self.english
        return self.multilingual

    def semantic(self, query: str, limit: int, mask: np.ndarray) -> Ranking:
        return self.route(query).semantic(query, limit, mask)

    def hybrid(self, query: str, limit: int, mask: np.ndarray) -> Ranking:
        return self.route(query).hybrid(query, limit, mask)


def enable_crosslingual(
    index: ToolIndex,
    multilingual: Embedder | str = "multilingual",
    english: Embedder | str | None = "default",
    *,
    store: BlobStore | None = None,
    progress: bool | None = None,
    query_encoder: Embedder | str | None = "auto",
) -> CrossLingualSearch:
    """Register cross-lingual ``semantic`` and ``hybrid`` on ``index``.

    Raises ``MissingExtra`` / ``EmbeddingUnavailable`` if the multilingual model cannot be
    loaded. Without the English model (``english=None``, or the ``embed`` extra missing)
    every request goes to the multilingual model. ``query_encoder``: how the English model
    embeds requests (:func:`~toolscout.search.hybrid.enable_hybrid`).
    """
    # Each model set up exactly as enable_hybrid sets it up alone (the multilingual one first:
    # if it fails, nothing is registered); the router's modes then replace theirs.
    multi = enable_hybrid(index, multilingual, store=store, progress=progress)
    eng: HybridSearch | None = None
    if english is not None:
        try:
            eng = enable_hybrid(index, english, store=store, progress=progress, query_encoder=query_encoder)
        except (MissingExtra, EmbeddingUnavailable):
            eng = None
    search = CrossLingualSearch(index, multi, eng)
    index.register_mode("semantic", search.semantic)
    index.register_mode("hybrid", search.hybrid)
    return search


def is_crosslingual(search: object) -> bool:
    """Whether ``search`` (a gateway's ``hybrid``) ranks across languages."""
    if isinstance(search, CrossLingualSearch):
        return True
    embedder = getattr(getattr(search, "dense", None), "embedder", None)
    return str(getattr(embedder, "model_id", "")).startswith("multilingual")


_LAST: list[tuple[tuple[int, int, str], bool]] = []


def _english_tools(tools: Sequence[Tool]) -> bool:
    """:func:`catalog_is_english` of the tools' descriptions, remembered for the last tool list
    seen (3 ms at 10k tools, paid again only when the list changes)."""
    key = (id(tools), len(tools), tools[0].name if tools else "")
    if not _LAST or _LAST[0][0] != key:
        _LAST[:] = [(key, catalog_is_english([t.description for t in tools[:: max(1, len(tools) // 200)]]))]
    return _LAST[0][1]


def language_hint(query: str, mode: str, search: object, tools: Sequence[Tool]) -> str | None:
    """The warning for ``query`` searched in ``mode``, or ``None`` when there is nothing to say:
    the request looks English, the search crosses languages, or the catalog is not English."""
    if mode not in ("keyword", "semantic", "hybrid") or looks_english(query):
        return None
    crosses = is_crosslingual(search)
    if mode != "keyword" and crosses:
        return None
    if not _english_tools(tools):
        return None
    if crosses:  # the model is there; this request asked for keyword search
        return KEYWORD_ONLY
    return HINT.format(what="keyword search" if mode == "keyword" else "the English embedding model")
