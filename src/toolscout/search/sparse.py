"""The sparse-matrix kernel under keyword search: compressed sparse layouts as plain numpy
arrays, building them, and the top-k arithmetic over them.

The layouts are plain numpy arrays, not scipy matrices: importing scipy.sparse costs
~0.2 s of CPU, which an MCP client would wait for on every gateway start. scipy is imported
inside the few functions that hand it large work (a build above :data:`SCIPY_ABOVE`
entries, a large catalog's per-query product), only when that work arrives. Nothing here
knows about tools, fields or BM25: :mod:`toolscout.search.fields` says what a tool's text
is and :mod:`toolscout.search.keyword` how it is scored.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

__all__ = [
    "COUNT_TYPES",
    "SCIPY_ABOVE",
    "Sparse",
    "add_scores",
    "best",
    "candidate_pool",
    "compress",
    "distinct",
    "empty",
    "kth",
    "major_of",
    "matvec",
    "release_freed_memory",
    "score_docs",
    "small_counts",
    "stack",
    "sum_fields",
    "take",
]

_SAMPLE = 4096
"""Docs sampled for a top-k bound (:func:`candidate_pool`, :func:`best`): large enough that
the bound sits near the true k-th score, small next to the docs a broad query matches."""
_CHUNK = 65_536
"""Docs summed at a time by :func:`sum_fields` (bounds the blocks held at once)."""

COUNT_TYPES = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.float32))


def small_counts(counts: np.ndarray) -> np.ndarray:
    """Term counts (whole numbers) in the smallest of uint8, uint16, float32 holding them:
    a quarter of the raw counts' memory in practice."""
    top = float(counts.max()) if len(counts) else 0.0
    if top <= 255:
        return counts.astype(np.uint8)
    return counts.astype(np.uint16) if top <= 65535 else counts


class Sparse(NamedTuple):
    """A compressed sparse matrix (rows of a CSR, or columns of a CSC) as plain arrays:
    entries of major line ``i`` are ``indices/data[indptr[i]:indptr[i + 1]]``, minor indices
    ascending and unique."""

    data: np.ndarray  # float32
    indices: np.ndarray  # int32: the minor index of each entry
    indptr: np.ndarray  # int64, one more than there are major lines


def empty(lines: int = 0) -> Sparse:
    return Sparse(np.zeros(0, np.float32), np.zeros(0, np.int32), np.zeros(lines + 1, np.int64))


SCIPY_ABOVE = 1_000_000
"""Entries from which :func:`compress` hands the work to scipy (imported then): its C
counting sort beats numpy's comparison sort there (100k tools: ~3M entries, 0.17 s vs 0.3 s),
while below it numpy is as fast and scipy's import (~0.2 s of CPU) would dominate a small
catalog's build, e.g. an MCP gateway's start."""


def compress(
    major: np.ndarray, minor: np.ndarray, values: np.ndarray | None, n_major: int, n_minor: int
) -> Sparse:
    """Entries (major, minor, value) -> :class:`Sparse`, duplicates summed; ``values=None``
    counts each entry as 1 (term frequencies: sorting keys alone is ~3x faster)."""
    if len(major) > SCIPY_ABOVE:
        import scipy.sparse as sp  # here, not at the top: its import costs ~0.2 s (module docstring)

        if values is None:
            values = np.ones(len(major), np.float32)
        m = sp.coo_matrix((values, (major, minor)), shape=(n_major, max(n_minor, 1))).tocsr()
        m.sum_duplicates()  # sorts indices too
        return Sparse(m.data.astype(np.float32, copy=False), m.indices.astype(np.int32, copy=False), m.indptr.astype(np.int64))
    width = max(n_minor, 1)
    key = major.astype(np.int64) * width + minor
    if values is None:
        key = np.sort(key)
    else:
        bits = max(len(key) - 1, 1).bit_length()
        if (n_major * width) << bits < 1 << 63:  # room for the entry number below the key
            packed = np.sort((key << bits) | np.arange(len(key)))  # ~3x faster than argsort
            order, key = packed & ((1 << bits) - 1), packed >> bits
        else:
            order = np.argsort(key)
            key = key[order]
        values = values[order]
    first = np.ones(len(key), dtype=bool)
    np.not_equal(key[1:], key[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    if values is None:
        values = np.diff(np.append(starts, len(key))).astype(np.float32)
        key = key[starts]
    elif len(starts) < len(key):
        values = np.add.reduceat(values, starts)
        key = key[starts]
    lines = key // width
    indptr = np.zeros(n_major + 1, np.int64)
    np.cumsum(np.bincount(lines, minlength=n_major), out=indptr[1:])
    return Sparse(values.astype(np.float32, copy=False), (key - lines * width).astype(np.int32), indptr)


def _fields_block(fields: list[tuple[Sparse, np.ndarray]], start: int, stop: int, width: int) -> Any:
    """Docs ``start:stop`` of the weighted fields summed (field order, float32), as a scipy
    CSC matrix over (doc - start, term): each entry is ``norm[doc] * count`` added field
    by field, exactly as summing whole fields gives."""
    import scipy.sparse as sp  # here, not at the top: its import costs ~0.2 s (module docstring)

    total: Any = None
    for m, norm in fields:
        lo, hi = int(m.indptr[start]), int(m.indptr[stop])
        indptr = m.indptr[start : stop + 1] - lo
        rows = np.repeat(np.arange(stop - start, dtype=np.int32), np.diff(indptr))
        values = norm[start:stop][rows] * m.data[lo:hi]
        part = sp.csr_matrix((values, m.indices[lo:hi], indptr), shape=(stop - start, width), copy=False)
        total = part if total is None else total + part
    return total.tocsc()


def sum_fields(fields: list[tuple[Sparse, np.ndarray]], n: int, width: int, block: int = _CHUNK) -> Sparse:
    """The weighted fields' sum as a (term, doc) :class:`Sparse`, built a block of docs at a
    time into its final arrays: one copy of the summed matrix is alive, not two (adding
    whole fields held the sum so far and the new sum at once: the 1M-tool build's peak).
    Two passes over the blocks: the first counts each term's docs, the second writes each
    block's entries after the earlier blocks' (docs stay ascending in every term).
    ``block``: docs summed at a time."""
    step = block
    df = np.zeros(width, np.int64)
    for start in range(0, n, step):
        df += np.diff(_fields_block(fields, start, min(n, start + step), width).indptr)
    indptr = np.zeros(width + 1, np.int64)
    np.cumsum(df, out=indptr[1:])
    del df
    total = int(indptr[-1])
    data = np.empty(total, np.float32)
    indices = np.empty(total, np.int32)
    cursor = indptr[:-1].copy()
    for start in range(0, n, step):
        block = _fields_block(fields, start, min(n, start + step), width)
        bptr = block.indptr.astype(np.int64)
        per = np.diff(bptr)
        at = np.repeat(cursor - bptr[:-1], per) + np.arange(len(block.data), dtype=np.int64)
        data[at] = block.data
        indices[at] = block.indices + start
        cursor += per
        del block, bptr, per, at
    return Sparse(data, indices, indptr)


def major_of(m: Sparse) -> np.ndarray:
    """The major index of every entry."""
    return np.repeat(np.arange(len(m.indptr) - 1, dtype=np.int32), np.diff(m.indptr))


def stack(a: Sparse, b: Sparse) -> Sparse:
    """``b``'s lines after ``a``'s."""
    indptr = np.concatenate([a.indptr, b.indptr[1:] + a.indptr[-1]])
    return Sparse(np.concatenate([a.data, b.data]), np.concatenate([a.indices, b.indices]), indptr)


def take(m: Sparse, lines: np.ndarray) -> Sparse:
    """The given major lines of ``m``, in that order."""
    starts = m.indptr[lines]
    counts = m.indptr[lines + 1] - starts
    indptr = np.zeros(len(lines) + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    pick = np.repeat(starts - indptr[:-1], counts) + np.arange(indptr[-1])
    return Sparse(m.data[pick], m.indices[pick], indptr)


_SAFE = 1.0 - 1e-9
"""Bounds compare float64 sums taken in different orders: a margin far above their rounding."""
_F32_ROUNDING = 4 * 2.0**-24
"""Per query term, a margin above float32's rounding: :meth:`~toolscout.search.keyword.KeywordBackend.rank` sums
every doc's score in float32 (the accumulator is half the memory traffic of float64), and a
sum of ``t`` positive float32 values is within ``(t - 1) * 2**-24`` of the exact sum,
relatively. The docs returned are scored again in float64, in query-term order."""
_ONE = np.ones(1, np.float32)


def release_freed_memory() -> None:
    """Hand memory freed by a large build back to the OS (glibc keeps it otherwise)."""
    try:
        import ctypes  # only after a large build

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to do
        pass


_MATVEC: list[Callable[..., Any] | None] = []


def matvec() -> Callable[..., Any] | None:
    """scipy's compiled ``y += A @ x`` for a CSC matrix (``csc_matvec``), or None.

    It is what ``scipy.sparse.csc_matrix @ x`` runs, minus the fresh zeroed result (a 1M
    float vector, ~1 ms of page faults): called with one column of scores and ``x = 1`` it
    adds a term's scores to the accumulator in place, ~1.7 ns a posting where ``np.add.at``
    takes ~2.7 and fancy-index assignment ~6. It lives in scipy's private ``_sparsetools``
    module, so it is checked on a tiny case once; without it ``np.add.at`` does the same
    additions in the same order (float32, same results)."""
    if not _MATVEC:
        found: Callable[..., Any] | None = None
        try:
            from scipy.sparse import _sparsetools  # first large query only (module docstring)

            fn = _sparsetools.csc_matvec
            y = np.zeros(4, np.float32)
            fn(4, 1, np.array([0, 2], np.int32), np.array([1, 3], np.int32), np.array([0.5, 2.0], np.float32), _ONE, y)
            fn(4, 1, np.array([0, 1], np.int32), np.array([3], np.int32), np.array([1.0], np.float32), _ONE, y)
            if y.tolist() == [0.0, 0.5, 0.0, 3.0]:
                found = fn
        except Exception:  # any failure (an import, a changed signature): the numpy path
            found = None
        _MATVEC.append(found)
    return _MATVEC[0]


def add_scores(acc: np.ndarray, indices: np.ndarray, data: np.ndarray, spans: list[tuple[int, int]]) -> None:
    """``acc[doc] += score`` for every posting of every span ``(start, stop)`` of
    ``indices``/``data``, span after span (float32, in place)."""
    product = matvec() if indices.dtype == np.int32 and data.dtype == np.float32 == acc.dtype else None
    n = len(acc)
    for a, z in spans:
        if z <= a:
            continue
        if product is not None:
            product(n, 1, np.array([0, z - a], indices.dtype), indices[a:z], data[a:z], _ONE, acc)
        else:
            np.add.at(acc, indices[a:z], data[a:z])


def distinct(docs: np.ndarray) -> np.ndarray:
    """``docs`` sorted, each once (``np.unique``'s hashing costs ~0.2 ms on a thousand)."""
    docs = np.sort(docs)
    if len(docs) > 1:
        first = np.empty(len(docs), bool)
        first[0] = True
        np.not_equal(docs[1:], docs[:-1], out=first[1:])
        docs = docs[first]
    return docs


def score_docs(m: Sparse, spans: list[tuple[int, int]], docs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The scores of ``docs`` (ascending) summed over the columns ``spans`` of ``m``, in
    float64 and span order (what summing every doc's postings gives them, bit for bit),
    and ``held[t, j]``: whether ``docs[j]`` holds span ``t``'s term. A binary search of
    each column per doc: no pass over the columns' postings."""
    scores = np.zeros(len(docs), np.float64)
    held = np.zeros((len(spans), len(docs)), bool)
    for t, (a, z) in enumerate(spans):
        if z <= a:
            continue
        rows = m.indices[a:z]
        at = rows.searchsorted(docs)  # past the end: clipped to the last, which differs
        hit = np.equal(rows.take(at, mode="clip"), docs, out=held[t])
        np.add(scores, m.data[a:z].take(at, mode="clip"), out=scores, where=hit)
    return scores, held


def kth(values: np.ndarray, k: int) -> float:
    """The ``k``-th largest of ``values`` (``len(values) >= k >= 1``)."""
    return float(np.partition(values, len(values) - k)[len(values) - k])


def candidate_pool(
    m: Sparse,
    ub: np.ndarray,
    acc: np.ndarray,
    ids: list[int],
    spans: list[tuple[int, int]],
    limit: int,
    mask: np.ndarray | None,
    sample: int = _SAMPLE,
) -> np.ndarray:
    """The allowed docs that may make the top ``limit`` by their float32 scores in
    ``acc`` (every query term's column of ``m`` added), ascending: a superset of the exact
    top ``limit``, ties at the cut included, and usually little more. ``ub``: each term's
    highest score; ``spans``: each query term's ``(start, stop)`` in ``m``.

    ``bound`` is the k-th best float32 score of ``limit`` distinct allowed docs, so the
    exact k-th best score is at least ``floor = bound / (1 + eps)``: a doc of the top k
    has a float32 score of at least ``bound * (1 - eps) / (1 + eps)``, and a doc holding
    only terms whose highest scores add up to less than ``floor`` scores below it.
    ``sample``: docs of a long column sampled for a first bound.
    """
    eps = _F32_ROUNDING * (len(ids) + 2)
    shrink = (1.0 - eps) / (1.0 + eps)
    highest = ub[ids].tolist()
    order = sorted(range(len(ids)), key=lambda j: -highest[j])  # stable: query order among equals
    rest = [0.0] * (len(order) + 1)  # highest scores of order[p:], summed
    for p in range(len(order) - 1, -1, -1):
        rest[p] = rest[p + 1] + highest[order[p]]
    bound = 0.0
    found: list[tuple[np.ndarray, np.ndarray]] = []  # distinct allowed docs (of one term), their scores
    seen = 0
    for p, j in enumerate(order):
        if rest[p] < bound / (1.0 + eps) * _SAFE:
            break  # a doc holding only the terms left scores below the k-th best
        a, z = spans[j]
        rows = m.indices[a:z]
        if seen < limit and z - a > 4 * sample:
            # No bound yet and many docs to read: first a bound from an evenly spaced
            # sample of them (distinct docs), so that not all of them are kept.
            picked = rows[:: (z - a) // sample]
            if mask is not None:
                picked = picked[mask[picked]]
            if len(picked) >= limit:
                bound = max(bound, kth(acc.take(picked), limit))
                if rest[p] < bound / (1.0 + eps) * _SAFE:
                    break
        values = acc.take(rows)
        at = np.flatnonzero(values >= bound * shrink)
        if mask is not None:
            at = at[mask.take(rows.take(at))]
        if not len(at):
            continue
        new = (rows.take(at), values.take(at))
        found.append(new)
        seen += len(at)
        if len(at) >= limit:  # one term's docs are distinct
            bound = max(bound, kth(new[1], limit))
        elif seen >= limit and len(found) > 1 and bound == 0.0:
            docs = distinct(np.concatenate([f[0] for f in found]))
            found, seen = [(docs, acc.take(docs))], len(docs)
            if seen >= limit:
                bound = kth(found[0][1], limit)
    if not found:
        return np.zeros(0, np.int32)
    threshold = bound * shrink
    pool = distinct(np.concatenate([docs[values >= threshold] for docs, values in found]))
    if len(pool) > limit:
        values = acc.take(pool)
        bound = max(bound, kth(values, limit))
        pool = pool[values >= bound * shrink]
    return pool


def best(docs: np.ndarray, scores: np.ndarray, limit: int, sample: int = _SAMPLE) -> np.ndarray:
    """Positions of the ``limit`` best of ``docs`` (distinct, any order; ``scores`` aligned,
    > 0), best first, ties in doc order: exactly, including ties at the cut.

    A lower bound on the k-th best score comes from an evenly spaced sample of the docs
    (real docs with their full scores, so the bound is safe); one comparison over ``docs``
    then leaves about ``limit * len(docs) / sample`` candidates to sort, where a partition
    of every matched doc cost ~1 ms per 200k docs. ``sample``: how many docs at most.
    """
    if len(docs) <= limit:
        return np.lexsort((docs, -scores))[:limit]
    step = len(docs) // sample
    sampled = scores[::step] if step > 1 else scores[:0]
    theta = kth(sampled, limit) if len(sampled) >= limit else 0.0  # a limit above the sample: none
    sel = np.flatnonzero(scores >= theta)
    if len(sel) > 4 * limit:  # a weak bound: partition what is left
        kth_score = np.partition(scores[sel], len(sel) - limit)[len(sel) - limit]
        sel = sel[scores[sel] >= kth_score]
    return sel[np.lexsort((docs[sel], -scores[sel]))[:limit]]
