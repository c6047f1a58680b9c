"""BM25F's arithmetic: per-field term counts in, one score per (term, tool) out.

The formula and the weights are :mod:`toolscout.search.keyword`'s (its docstring); this
module only turns counts into the compressed score columns a query sums, so the backend
class keeps building, snapshots and querying, and the numbers live in one place.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from . import sparse
from .sparse import Sparse, compress, major_of, sum_fields

__all__ = ["score_columns", "term_bounds"]

_ENTRIES = 65_536 * 64
"""(term, tool) entries turned into scores at a time: bounds the temporary array."""


def score_columns(
    counts: Mapping[str, Sparse],
    weights: Mapping[str, float],
    k1: float,
    b: float,
    n: int,
    width: int,
    block: int = 65_536,
) -> tuple[Sparse, np.ndarray]:
    """The BM25F score of every (term, doc) pair as term columns (CSC, docs sorted in each
    column), and each term's idf. ``counts``: per field, raw term counts, one row per doc;
    ``width``: the vocabulary's size; ``block``: docs summed at a time on a large catalog."""
    # Large catalogs sum the fields column-wise in scipy (C), one field at a time: the
    # entries of all fields at once, sorted, took over a GB at 1M tools. Both ways add
    # a (term, doc)'s fields in field order, in float32: the same scores.
    big = sum(len(counts[f].data) for f in weights) > sparse.SCIPY_ABOVE
    rows, cols, vals = [], [], []  # every field's weighted, length-normalised counts
    norms: list[tuple[Sparse, np.ndarray]] = []
    for field, w in weights.items():
        m = counts[field]
        row_of = major_of(m)
        lengths = np.bincount(row_of, weights=m.data, minlength=n).astype(np.float32)
        avg = float(lengths.mean()) if n and lengths.mean() > 0 else 1.0
        norm = (w / (1.0 - b + b * lengths / avg)).astype(np.float32)
        if big:
            norms.append((m, norm))
            continue
        rows.append(row_of)
        cols.append(m.indices)
        vals.append(norm[row_of] * m.data)
    if big:
        tf = sum_fields(norms, n, width, block)
        del norms
    else:
        tf = compress(np.concatenate(cols), np.concatenate(rows), np.concatenate(vals), width, n)  # summed: CSC
    del rows, cols, vals
    if not tf.data.all():  # a zero field weight leaves explicit zeros: not matches
        keep = tf.data != 0
        col_of = major_of(tf)[keep]
        indptr = np.zeros(width + 1, np.int64)
        np.cumsum(np.bincount(col_of, minlength=width), out=indptr[1:])
        tf = Sparse(tf.data[keep], tf.indices[keep], indptr)
    df = np.diff(tf.indptr).astype(np.float64)
    idf = np.log1p((n - df + 0.5) / (df + 0.5)).astype(np.float32)
    # Into tf's own array, a range of terms at a time, in the same float32 operations
    # and order as ``repeat(idf) * tf * (k1 + 1) / (tf + k1)``: one entry-sized array
    # alive, not two (1M tools: ~100 MB less at the build's peak).
    data = tf.data if tf.data.dtype == np.float32 and tf.data.flags.writeable else tf.data.astype(np.float32)
    per = np.diff(tf.indptr)
    first = 0
    while first < width:
        last = int(np.searchsorted(tf.indptr, tf.indptr[first] + _ENTRIES, side="right")) - 1
        last = min(width, max(last, first + 1))
        lo, hi = int(tf.indptr[first]), int(tf.indptr[last])
        part = np.repeat(idf[first:last], per[first:last])
        part *= data[lo:hi]
        part *= k1 + 1.0
        part /= data[lo:hi] + k1
        data[lo:hi] = part
        first = last
    del per
    return Sparse(data, tf.indices, tf.indptr), idf


def term_bounds(scores: Sparse) -> np.ndarray:
    """Each term's highest score: the keyword backend's bound on what a term can add."""
    df = np.diff(scores.indptr)
    ub = np.zeros(len(df), np.float32)
    some = df > 0
    if some.any():
        ub[some] = np.maximum.reduceat(scores.data, scores.indptr[:-1][some])
    return ub
