"""Hybrid search: keyword + dense + name signals, fused by each backend's confidence.

Why not plain Reciprocal Rank Fusion: RRF gives every backend's list the same say on every
query. On tool retrieval one backend is often plainly right and the other plainly lost
(a query naming ``getPostmodernTheory``'s words exactly vs. a paraphrase that shares no word
with the tool), and equal-weight RRF then drags the right answer down: measured on the data
in docs/hybrid.md, peers' RRF hybrids score below their own best single backend.

The rule here (see docs/hybrid.md for the measurements):

1. Each backend contributes only what it really returned: keyword docs with a positive
   BM25F score, dense docs above the similarity floor (no zero-score tail).
2. Scores are put on one scale per query: keyword score / best keyword score, and dense
   similarity rescaled between a reference level (the similarity of the ``_REF``-th doc,
   i.e. "what an unrelated tool scores for this query") and the best similarity.
3. Each list is weighted by the backend's confidence *for this query*:
   keyword by coverage, how much of the query's (IDF-weighted) terms the best keyword doc
   matches (``top / max_score``: 1.0 when the best tool contains every query word);
   dense by how far its best doc stands out of the reference level.
4. An exact tool name in the query wins outright (the index does that for every mode).
"""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..errors import EmbeddingUnavailable
from .base import Hit

if TYPE_CHECKING:
    from ..embed.base import Embedder
    from ..embed.cache import BlobStore
    from ..model import Tool
    from .dense import DenseBackend
    from .index import ToolIndex
    from .keyword import KeywordBackend

__all__ = ["FusionInput", "Variant", "fuse", "rewrite"]

_POOL = 100  # candidates taken from each backend
_REF = 20  # rank whose dense similarity stands for "unrelated" for this query


@dataclass(frozen=True, slots=True)
class Variant:
    """One rewritten form of the query and its weight in the cross-variant fusion."""

    text: str
    weight: float
    kind: str  # "original" | "stripped" | "identifier"


_LEADING = re.compile(
    r"^\s*(?:(?:hey|hi|ok|okay|so|um|please)[,!\s]+)*"
    r"(?:(?:can|could|would|will) (?:you|i|we)(?: please)?(?: help me(?: to)?)?"
    r"|(?:please )?help me(?: to)?|i(?:'d| would) like to|i (?:want|need|wish) to|i'm looking for|i am looking for"
    r"|how (?:do|can|could|should) (?:i|we|you)|is (?:there|it possible to)(?: a way to)?|what(?:'s| is) the"
    r"|which tool(?: can| could| should| would)?|find me|show me|tell me|let me|please)\b[\s,]*",
    re.I,
)
_IDENT = re.compile(r"`([^`]+)`|\b([A-Za-z][A-Za-z0-9]*(?:[_.:/-][A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*)\b")


def rewrite(query: str) -> list[Variant]:
    """The original query, a form without leading question/politeness words, and any
    identifiers it names (``write_file``, ``getWeather``), as weighted variants (seed 002)."""
    q = " ".join(query.split())
    variants = [Variant(q, 1.0, "original")]
    stripped = q
    for _ in range(3):  # "please, can you help me ..." peels in steps
        shorter = _LEADING.sub("", stripped, count=1).strip(" ,?!.")
        if shorter == stripped:
            break
        stripped = shorter
    stripped = stripped.rstrip("?!. ")
    if stripped and stripped.lower() != q.rstrip("?!. ").lower():
        variants.append(Variant(stripped, 0.8, "stripped"))
    for m in _IDENT.finditer(q):
        ident = (m.group(1) or m.group(2)).strip()
        if ident and ident != q and all(v.text != ident for v in variants):
            variants.append(Variant(ident, 0.6, "identifier"))
    return variants


@dataclass(slots=True)
class FusionInput:
    """What the backends returned for one query (only real hits)."""

    kw_docs: np.ndarray
    kw_scores: np.ndarray
    kw_bound: float  # score a doc matching every query term would reach
    dense_docs: np.ndarray
    dense_scores: np.ndarray
    dense_ref: float  # similarity of an unrelated doc for this query


def confidences(inp: FusionInput) -> tuple[float, float]:
    """(keyword, dense) confidence for this query, each in 0..1."""
    kw = float(inp.kw_scores[0] / inp.kw_bound) if len(inp.kw_docs) and inp.kw_bound > 0 else 0.0
    if len(inp.dense_docs):
        top = float(inp.dense_scores[0])
        dense = max(0.0, top - inp.dense_ref) / max(1e-6, 1.0 - inp.dense_ref)
    else:
        dense = 0.0
    return min(1.0, kw), min(1.0, dense)


def fuse(inp: FusionInput, limit: int) -> list[Hit]:
    """Confidence-weighted combination of the normalised scores (module docstring)."""
    wk, wd = confidences(inp)
    scores: dict[int, float] = {}
    why: dict[int, list[str]] = {}
    if len(inp.kw_docs) and wk > 0:
        top = float(inp.kw_scores[0])
        for d, s in zip(inp.kw_docs.tolist(), inp.kw_scores.tolist(), strict=True):
            scores[d] = scores.get(d, 0.0) + wk * s / top
            why.setdefault(d, []).append("keyword")
    if len(inp.dense_docs) and wd > 0:
        span = max(1e-6, float(inp.dense_scores[0]) - inp.dense_ref)
        for d, s in zip(inp.dense_docs.tolist(), inp.dense_scores.tolist(), strict=True):
            part = (s - inp.dense_ref) / span
            if part <= 0:
                break
            scores[d] = scores.get(d, 0.0) + wd * part
            why.setdefault(d, []).append("semantic")
    ranked = sorted(scores, key=lambda d: (-scores[d], d))[:limit]
    return [Hit(d, scores[d], "hybrid: " + "+".join(why[d])) for d in ranked]


class Ranked(list[Hit]):
    """A ranker's hits plus warnings for the result metadata (e.g. a keyword fallback)."""

    def __init__(self, hits: Sequence[Hit] = (), warnings: Sequence[str] = ()) -> None:
        super().__init__(hits)
        self.warnings = list(warnings)


def keyword_input(kw: KeywordBackend, query: str, mask: np.ndarray | None, pool: int = _POOL) -> tuple[np.ndarray, np.ndarray, float]:
    """The keyword backend's real hits (positive score, allowed), best first, and its bound."""
    scores, _used = kw.scores(query)
    if mask is not None and len(scores):
        scores = np.where(mask, scores, 0.0)
    docs = np.flatnonzero(scores > 0)
    if len(docs) > pool:
        docs = docs[np.argpartition(-scores[docs], pool - 1)[:pool]]
    docs = docs[np.lexsort((docs, -scores[docs]))]
    return docs, scores[docs].astype(np.float64), float(kw.max_score(query))


def dense_input(dense: DenseBackend, query: str, mask: np.ndarray | None, pool: int = _POOL) -> tuple[np.ndarray, np.ndarray, float]:
    """Dense candidates above the reference level, best first, and that level."""
    scores = dense.scores(query).astype(np.float64)
    if mask is not None and len(scores):
        scores = np.where(mask, scores, -np.inf)
    allowed = int(np.count_nonzero(np.isfinite(scores)))
    if not allowed:
        return np.zeros(0, np.int64), np.zeros(0), 0.0
    k = min(pool, allowed)
    docs = np.argpartition(-scores, k - 1)[:k] if k < len(scores) else np.arange(len(scores))
    docs = docs[np.lexsort((docs, -scores[docs]))]
    docs = docs[np.isfinite(scores[docs])]
    ref = float(scores[docs[min(_REF, len(docs)) - 1]]) if len(docs) >= _REF else 0.0
    ref = max(ref, dense.min_score)
    keep = scores[docs] > ref
    return docs[keep], scores[docs][keep], ref


class HybridSearch:
    """Adds the ``semantic`` and ``hybrid`` modes to a :class:`~toolscout.search.index.ToolIndex`.

    The dense index follows the catalog lazily: when the index's tool list changes, the next
    query re-embeds only tools whose text changed (the vector cache keeps the rest). If the
    model or endpoint fails, ``hybrid`` answers from keyword search and ``semantic`` returns
    nothing, both with a warning; neither raises.
    """

    def __init__(self, index: ToolIndex, dense: DenseBackend) -> None:
        self.index = index
        self.dense = dense
        self._built: list[Tool] | None = None
        self._error: str | None = None
        self._lock = threading.Lock()

    def _ensure(self) -> str | None:
        """Bring the dense index up to date; the error text if embeddings are unusable."""
        tools = self.index.tools
        with self._lock:
            if tools is not self._built:
                try:
                    self.dense.rebuild(tools)
                    self._error = None
                except EmbeddingUnavailable as exc:
                    self._error = exc.message
                self._built = tools
            return self._error

    def _dense(self, query: str, mask: np.ndarray) -> tuple[tuple[np.ndarray, np.ndarray, float] | None, list[str]]:
        error = self._ensure()
        warnings = list(self.dense.warnings)
        self.dense.warnings.clear()
        if error is None:
            try:
                return dense_input(self.dense, query, mask), warnings
            except EmbeddingUnavailable as exc:
                error = exc.message
        return None, [*warnings, f"semantic search unavailable ({error}); keyword results only"]

    def semantic(self, query: str, limit: int, mask: np.ndarray) -> Ranked:
        dense, warnings = self._dense(query, mask)
        if dense is None:
            return Ranked([], warnings)
        docs, scores, _ref = dense
        return Ranked([Hit(int(d), float(s), "semantic") for d, s in zip(docs[:limit], scores[:limit], strict=True)], warnings)

    def hybrid(self, query: str, limit: int, mask: np.ndarray) -> Ranked:
        kw = self.index.backend("keyword")
        kd, ks, bound = keyword_input(kw, query, mask)  # type: ignore[arg-type]
        dense, warnings = self._dense(query, mask)
        if dense is None:
            return Ranked([Hit(int(d), float(s), "keyword") for d, s in zip(kd[:limit], ks[:limit], strict=True)], warnings)
        dd, ds, ref = dense
        return Ranked(fuse(FusionInput(kd, ks, bound, dd, ds, ref), limit), warnings)


def enable_hybrid(
    index: ToolIndex,
    embedder: Embedder | str = "default",
    *,
    store: BlobStore | None = None,
    progress: bool | None = None,
) -> HybridSearch:
    """Register ``semantic`` and ``hybrid`` on ``index`` (``auto`` then means hybrid).

    ``embedder`` is an :class:`~toolscout.embed.Embedder` or a spec for
    :func:`~toolscout.embed.load_embedder`; ``store`` (a :class:`~toolscout.store.Store`)
    keeps vectors across restarts. Raises ``MissingExtra`` / ``EmbeddingUnavailable`` here,
    at setup, if the model cannot be loaded at all.
    """
    from ..embed import load_embedder
    from .dense import DenseBackend

    search = HybridSearch(index, DenseBackend(load_embedder(embedder), store, progress=progress))
    index.register_mode("semantic", search.semantic)
    index.register_mode("hybrid", search.hybrid)
    return search


__all__ += ["HybridSearch", "Ranked", "dense_input", "enable_hybrid", "keyword_input"]
