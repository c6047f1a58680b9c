"""Turning embeddings on for an index, as a gateway's ``embeddings`` option asks.

Kept out of the gateway: which search an option means (hybrid, cross-lingual, nothing) is
the embedding layer's knowledge; the gateway only holds what comes back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..search.crosslingual import CrossLingualSearch, enable_crosslingual
from ..search.hybrid import HybridSearch, enable_hybrid, enable_hybrid_if_available

if TYPE_CHECKING:
    from ..search.index import ToolIndex
    from ..storage import Store
    from .base import Embedder

__all__ = ["enable_embeddings"]


def enable_embeddings(
    index: ToolIndex,
    embeddings: bool | str | Embedder | None,
    store: Store | None,
    query_encoder: str | Embedder | None = "auto",
) -> HybridSearch | CrossLingualSearch | None:
    """``None``/``False``: keyword only. ``"auto"``: hybrid when the ``embed`` extra is
    installed. ``"multilingual"`` / ``"multilingual-e5"``: hybrid that also serves requests
    in other languages (:mod:`toolscout.search.crosslingual`). ``True``, a model spec or an
    :class:`Embedder`: hybrid, or raise :class:`~toolscout.errors.MissingExtra` /
    ``EmbeddingUnavailable`` now, at setup."""
    if embeddings is None or embeddings is False:
        return None
    if embeddings in ("multilingual", "multilingual-e5"):
        return enable_crosslingual(index, embeddings, store=store, query_encoder=query_encoder)
    if embeddings == "auto":
        return enable_hybrid_if_available(index, store=store, query_encoder=query_encoder)
    spec = "default" if embeddings is True else embeddings
    return enable_hybrid(index, spec, store=store, query_encoder=query_encoder)
