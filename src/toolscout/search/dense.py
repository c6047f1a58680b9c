"""Dense (embedding) search: one float32 matrix, one product per request.

At 10k tools x 384 dims the matrix is 15 MB and a query costs well under a millisecond
once its vector is known; query vectors are kept in an LRU cache so a repeated query
(agents repeat themselves) skips the model entirely. A request's texts (the request, its
clauses, its sub-intents') are scored in one product, packed for onnxruntime on larger
catalogs (:mod:`~toolscout.search.dense_product`), and kept for the request's sub-searches.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..accounting.telemetry import stage
from ..embed.base import Embedder, check_vectors
from ..embed.cache import BlobStore, VectorCache
from ..embed.text import tool_text
from ..errors import EmbeddingUnavailable
from ..progress import step
from .ann import AnnIndex, ann_for
from .base import Hit, top_docs
from .dense_product import PackedProduct, einsum_product
from .dense_product import available as can_pack
from .sparse import release_freed_memory

if TYPE_CHECKING:
    from ..model import Tool

__all__ = ["DenseBackend"]

_SIMS_BYTES = 8 << 20
"""Similarity vectors kept for texts asked for again (at 13.6k tools, the last ~150 texts;
at 1M, the last two)."""
_PROGRESS_FROM = 1  # any embedding is a step: the reporter shows it only once it runs a second
PACK_FROM = 4096
"""Tool vectors from which the exact product is packed (:mod:`~toolscout.search.dense_product`);
below, ``einsum`` over them costs a few tens of microseconds a vector."""


class DenseBackend:
    """A :class:`~toolscout.search.base.Backend` over embeddings of ``tool_text(tool)``.

    ``search`` returns only docs whose cosine similarity is above ``min_score``: a dense
    model scores every doc, and an unrelated doc must not count as a match.
    """

    name = "dense"

    def __init__(
        self,
        embedder: Embedder,
        store: BlobStore | None = None,
        *,
        min_score: float = 0.0,
        query_cache_size: int = 2048,
        progress: bool | None = None,
        query_embedder: Embedder | None = None,
        packed: bool | None = None,
    ) -> None:
        """``packed``: the exact product by :class:`~toolscout.search.dense_product.PackedProduct`:
        ``None`` (default) from :data:`PACK_FROM` tool vectors with the ``embed`` extra, built in
        a background thread after each rebuild (``einsum`` until it is ready); ``True``: always,
        built during the rebuild; ``False``: never."""
        if query_embedder is not None and query_embedder.dim != embedder.dim:
            raise EmbeddingUnavailable(
                f"query encoder {query_embedder.model_id} has dimension {query_embedder.dim}, "
                f"the tool vectors {embedder.dim}"
            )
        self.embedder = embedder
        self.cache = VectorCache(embedder, store)
        # Queries may use a faster encoder of the same vector space (docs/hybrid.md, Latency).
        self.query_embedder = query_embedder or embedder
        self._query_cache = self.cache if query_embedder is None else VectorCache(query_embedder, store)
        self.min_score = min_score
        self.progress = True if progress is None else progress  # shown where toolscout.progress reports
        self._matrix = np.zeros((0, embedder.dim), dtype=np.float32)
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._query_cache_size = query_cache_size
        self._lock = threading.Lock()
        self._sims: OrderedDict[str, np.ndarray] = OrderedDict()  # see _similarities_of_many
        self.packing = packed
        """``packed`` as given, read at each rebuild (a test or an operator may change it)."""
        self._product: tuple[np.ndarray, PackedProduct] | None = None  # (the matrix it packs, it)
        self._ann: AnnIndex | None = None
        self.products = 0
        """Matrix products run (one per call, whatever its number of vectors): what tests and
        benchmarks count to see a request's texts scored in one product."""

    @property
    def size(self) -> int:
        return len(self._matrix)

    @property
    def warnings(self) -> list[str]:
        return self.cache.warnings

    def rebuild(self, tools: Sequence[Tool]) -> None:
        texts = [tool_text(t) for t in tools]
        todo = self.cache.missing(texts)
        if self.progress and todo >= _PROGRESS_FROM:
            self._matrix = self._embed_with_bar(texts, todo)
        else:
            self._matrix = self.cache.embed(texts)
        with self._lock:
            self._sims.clear()
            self._product = None
        self._ann = ann_for(self._matrix)  # None below ANN_FROM docs or without the ann extra
        self._pack(self._matrix)

    def _pack(self, matrix: np.ndarray) -> None:
        """Build the packed product for ``matrix`` (the exact path only), now or beside the searches."""
        wanted = self.packing
        if wanted is False or self._ann is not None or not len(matrix):
            return
        if (wanted is None and len(matrix) < PACK_FROM) or not can_pack():
            return
        if wanted is True:
            self._adopt(matrix)
        else:
            threading.Thread(target=self._adopt, args=(matrix,), name="toolscout-pack", daemon=True).start()

    def _adopt(self, matrix: np.ndarray) -> None:
        try:
            product = PackedProduct(matrix)
        except Exception:  # out of memory, a broken runtime: einsum stays
            return
        with self._lock:
            if matrix is self._matrix:  # not a rebuild meanwhile
                self._product = (matrix, product)
        if len(matrix) >= PACK_FROM:
            release_freed_memory()  # the model bytes the build went through

    @property
    def packed(self) -> bool:
        """Whether the exact product currently runs packed (:mod:`~toolscout.search.dense_product`)."""
        return self._product is not None

    def _embed_with_bar(self, texts: list[str], todo: int) -> np.ndarray:
        with step(f"embedding {todo:,} tools ({self.embedder.model_id})", total=len(texts)) as advance:
            return self.cache.embed(texts, progress=advance)

    def query_vector(self, query: str) -> np.ndarray:
        """The query's unit vector, from the LRU cache when seen before."""
        return self.query_vectors([query])[0]

    def query_vectors(self, queries: list[str]) -> np.ndarray:
        """Unit vectors of ``queries``; those not in the LRU cache are embedded in one batch."""
        with self._lock:
            found = _recently_used(self._queries, queries)
        todo = [q for q in dict.fromkeys(queries) if q not in found]
        if todo:
            try:
                with stage("embedding"):
                    vectors = self.query_embedder.embed(todo)
            except EmbeddingUnavailable:
                raise
            except Exception as exc:  # an endpoint that is down, a broken session
                raise EmbeddingUnavailable(f"embedding the query failed: {exc}") from exc
            encoder = self.query_embedder
            vectors = check_vectors(np.asarray(vectors), len(todo), encoder.dim, encoder.model_id)
            with self._lock:
                for q, v in zip(todo, vectors, strict=True):
                    found[q] = self._queries[q] = v
                while len(self._queries) > self._query_cache_size:
                    self._queries.popitem(last=False)
        return np.stack([found[q] for q in queries]) if queries else np.zeros((0, self.embedder.dim), np.float32)

    def warm(self, queries: Sequence[str]) -> None:
        """Put ``queries`` in the query LRU, those not there yet in one encoder call (the
        texts several searches of one request will ask for; keys as :meth:`scores` makes them)."""
        texts = list(dict.fromkeys(map(_squash, queries)))
        vectors = self.query_vectors(texts)
        if self.size and len(texts) <= self._sims_capacity():  # every text's scores kept for its search
            self._similarities_of_many(texts, vectors.astype(np.float32, copy=False))

    def prime_queries(self, queries: list[str]) -> None:
        """Embed many queries at once (batched, through the vector cache) into the query LRU:
        for evaluations and warm-up lists of common requests."""
        queries = list(dict.fromkeys(map(_squash, queries)))
        vectors = self._query_cache.embed(queries)
        with self._lock:
            self._query_cache_size = max(self._query_cache_size, len(queries))
            for query, vector in zip(queries, vectors, strict=True):
                self._queries[query] = vector

    def scores(self, query: str, variants: Sequence[str] = ()) -> np.ndarray:
        """Cosine similarity of the query with every doc; with ``variants`` (e.g. the
        clauses of a multi-part request), each doc's best similarity over all of them."""
        if not self.size:
            return np.zeros(0, dtype=np.float32)
        texts = list(dict.fromkeys(map(_squash, [query, *variants])))
        vectors = self.query_vectors(texts).astype(np.float32, copy=False)
        with stage("dense"):
            sims = self._similarities_of_many(texts, vectors)
            best = sims[0].copy()
            for other in sims[1:]:
                np.maximum(best, other, out=best)
        return best

    def _sims_capacity(self) -> int:
        """How many texts' similarity vectors :meth:`_similarities_of_many` keeps."""
        return max(1, _SIMS_BYTES // max(4 * len(self._matrix), 1))

    def _similarities_of_many(self, texts: list[str], vectors: np.ndarray) -> list[np.ndarray]:
        """:meth:`_similarities` of each text's vector, those not kept from before in one
        product, kept for the next few texts: one request with several sub-intents asks for
        the same text's scores in its whole search and in the sub-search of that part (a
        product over every tool vector each time: ~1 ms at 13.6k tools). Read only; dropped
        when the tools change."""
        matrix = self._matrix
        with self._lock:
            found = _recently_used(self._sims, texts)
        todo = [i for i, text in enumerate(texts) if text not in found]
        if todo:
            fresh = self._similarities(matrix, vectors[todo])
            with self._lock:
                keep = matrix is self._matrix  # not a rebuild meanwhile
                for i, sims in zip(todo, fresh, strict=True):
                    sims.flags.writeable = False
                    found[texts[i]] = sims
                    if keep:
                        self._sims[texts[i]] = sims
                while len(self._sims) > self._sims_capacity():
                    self._sims.popitem(last=False)
        return [found[text] for text in texts]

    def _similarities(self, matrix: np.ndarray, vectors: np.ndarray) -> np.ndarray:
        """Exact cosines of each of ``vectors`` with every tool vector (one product: packed
        when built, else ``einsum``), or from a large catalog's ANN graph the nearest docs'
        (others -inf)."""
        self.products += 1
        ann, packed = self._ann, self._product
        if ann is not None:
            return np.stack([ann.scores(matrix, v) for v in vectors])
        if packed is not None and packed[0] is matrix:
            try:
                return packed[1](vectors)
            except Exception:  # a runtime failure: einsum from now on, never a failed search
                with self._lock:
                    if self._product is packed:
                        self._product = None
        return einsum_product(matrix, vectors)

    def search(self, query: str, *, limit: int, mask: np.ndarray | None = None) -> list[Hit]:
        if limit <= 0 or not self.size or not query.strip():
            return []
        scores = self.scores(query)
        return top_hits(scores, limit, mask, self.min_score, "dense")


def _recently_used(lru: OrderedDict[str, np.ndarray], keys: Sequence[str]) -> dict[str, np.ndarray]:
    """The entries ``lru`` holds for ``keys``, each marked as just used (the caller holds
    the lock that guards ``lru``)."""
    found: dict[str, np.ndarray] = {}
    for key in keys:
        kept = lru.get(key)
        if kept is not None:
            lru.move_to_end(key)
            found[key] = kept
    return found


def _squash(text: str) -> str:
    """One space between words: the query cache's key (agents resend a query with stray
    spaces or newlines; a BERT tokenizer ignores them, so the vector is the same)."""
    return " ".join(text.split())


def top_hits(
    scores: np.ndarray, limit: int, mask: np.ndarray | None, floor: float, why: str
) -> list[Hit]:
    """The ``limit`` best docs allowed by ``mask`` with a score above ``floor`` (ties: the
    earlier doc, :func:`~toolscout.search.base.top_docs`)."""
    scores = np.where(mask, scores, -np.inf) if mask is not None else scores
    top = top_docs(scores, limit, floor)
    return [Hit(int(d), float(scores[d]), why) for d in top]
