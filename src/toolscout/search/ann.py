"""Approximate nearest neighbours for the dense backend of a large catalog (``ann`` extra).

Exact dense search is one matrix-vector product per query: 13.6k x 384 is well under a
millisecond, but 1M x 384 reads 1.5 GB of float32 per query (~100 ms of CPU). From
:data:`ANN_FROM` docs, when the ``ann`` extra (usearch) is installed,
:class:`~toolscout.search.dense.DenseBackend` asks an HNSW graph (Malkov & Yashunin, 2018)
for the :data:`CANDIDATES` nearest docs and scores only those, exactly, from its own
float32 matrix; every other doc reads ``-inf``, which every consumer of dense scores
already treats as "not a match" (scores must beat the backend's ``min_score``). Below
:data:`ANN_FROM`, or without the extra, the exact product runs as before.

Why usearch: Apache-2.0; binary wheels for Linux, macOS and Windows (installs offline from
a wheel, no compiler); maintained; builds its graph on every core and can store vectors in
half precision (half the memory of the graph's copy). hnswlib ships source only (needs a
compiler) and has not been released since 2023; faiss-cpu is a far larger wheel. The extra
pins usearch below 2.20: from 2.20 (built on numkong) a process that imports it before
onnxruntime crashes on its first embedding (``tests/search/test_ann.py`` checks it in a subprocess).

The graph uses usearch's default construction and search parameters (connectivity 16,
expansion 128 to add, 64 to search), not values fitted to any benchmark; the recall they
give against exact search is measured in ``benchmarks/million.py``.

A filter (category, policy) is applied after the candidates are found, so a filter that
keeps few tools leaves few semantic candidates: keyword search, which filters first, still
finds them in hybrid mode.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

__all__ = ["ANN_FROM", "CANDIDATES", "AnnIndex", "ann_for", "available"]

ANN_FROM = 100_000
"""Docs from which an approximate search replaces the exact product (at 100k x 384 the
product is ~10 ms of CPU per query; the graph answers in well under that)."""

CANDIDATES = 256
"""Nearest docs fetched per query vector: hybrid fusion reads at most a few hundred."""


def available() -> bool:
    """Whether the ``ann`` extra (usearch) is installed (without importing it)."""
    return importlib.util.find_spec("usearch") is not None


def _usearch_index() -> Any:
    """usearch's ``Index`` class, loaded after onnxruntime when that is installed: loading
    usearch first makes a later ``import onnxruntime`` crash the process (segmentation
    fault; usearch 2.26 with onnxruntime on Linux), the other order is fine."""
    if importlib.util.find_spec("onnxruntime") is not None:
        import onnxruntime  # noqa: F401  # embed extra, loaded before usearch (docstring)
    from usearch.index import Index  # ann extra

    return Index


class AnnIndex:
    """An HNSW graph over unit vectors (inner product = cosine), doc id = row."""

    def __init__(self, matrix: np.ndarray, *, threads: int = 0) -> None:
        Index = _usearch_index()
        self.size, dim = matrix.shape
        self._index = Index(ndim=dim, metric="ip", dtype="f16")
        if self.size:
            self._index.add(np.arange(self.size, dtype=np.uint64), np.ascontiguousarray(matrix, np.float32), threads=threads)

    def nearest(self, vector: np.ndarray, k: int = CANDIDATES) -> np.ndarray:
        """The (about) ``k`` docs nearest ``vector``, nearest first."""
        if not self.size:
            return np.zeros(0, np.int64)
        found = self._index.search(np.asarray(vector, np.float32), min(k, self.size), threads=1)
        return np.asarray(found.keys, dtype=np.int64)

    def scores(self, matrix: np.ndarray, vector: np.ndarray, k: int = CANDIDATES) -> np.ndarray:
        """Exact similarities of the ``k`` nearest docs; ``-inf`` for every other doc."""
        docs = self.nearest(vector, k)
        out = np.full(self.size, -np.inf, np.float32)
        out[docs] = np.einsum("ij,j->i", matrix[docs], vector)
        return out


def ann_for(matrix: np.ndarray) -> AnnIndex | None:
    """A graph over ``matrix`` if it is large enough to need one and usearch is installed."""
    if len(matrix) < ANN_FROM or not available():
        return None
    return AnnIndex(matrix)
