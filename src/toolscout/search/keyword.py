"""Keyword search: BM25F over a tool's fields, precomputed into a sparse matrix.

Scoring is BM25F (Robertson, Zaragoza & Taylor, "Simple BM25 extension to multiple weighted
fields", CIKM 2004): each field's term frequency is length-normalised on its own, weighted,
and summed *before* the single saturation, so a word found in the name and the description
is not counted as two independent pieces of evidence::

    tf~(t, d) = sum_f  w_f * tf_f(t, d) / (1 - b + b * len_f(d) / avglen_f)
    score(q, d) = sum_{t in q}  idf(t) * tf~ * (k1 + 1) / (k1 + tf~)
    idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))            (Lucene's non-negative idf)

k1 = 1.2 and b = 0.75 are the textbook defaults (not fitted to any data set). The field
weights follow what each field says about a tool: the name states its purpose, so it counts
3x (as seed 003 does); prose and category count 1x; parameter names 1x; parameter
descriptions, titles and enum values 0.5x (long, often generic). docs/search.md shows the measurement against plain
BM25 over name + description (the "bm25" variant below), which is kept for that comparison.

Every (doc, term) score is computed once at build time into a compressed sparse column
layout, so a query sums only its own term columns (``np.bincount``) and picks the top k with
``np.argpartition``. The layouts and the arithmetic over them are the kernel in
:mod:`toolscout.search.sparse` (plain numpy arrays; scipy only for large work); the text of
each field comes from :mod:`toolscout.search.fields`; this module is BM25F itself. Large
catalogs (from 64k tools) rank as :meth:`KeywordBackend.rank` describes.
Rebuilding reuses the analysed rows of tools that did not change (same object), so an
update after adding or removing a few tools re-tokenises only the new ones.
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Callable, Sequence
from itertools import chain, count, filterfalse
from operator import attrgetter
from typing import Any

import numpy as np

from ..model import Tool, profiles_of
from . import sparse
from .analyzer import analyze, clear_caches
from .base import Hit
from .fields import FIELDS, tool_fields
from .ranking import Ranking
from .sparse import (
    COUNT_TYPES,
    Sparse,
    add_scores,
    best,
    candidate_pool,
    compress,
    empty,
    major_of,
    release_freed_memory,
    small_counts,
    stack,
    sum_fields,
    take,
)

__all__ = ["FIELDS", "FIELD_WEIGHTS", "KeywordBackend", "KeywordRanking", "release_freed_memory", "tool_fields"]

FIELD_WEIGHTS: dict[str, float] = {
    "name": 3.0,
    "description": 1.0,
    "param_names": 1.0,
    "param_text": 0.5,
    "labels": 1.0,
    "i18n": 1.0,
}
K1 = 1.2
B = 0.75
SNAPSHOT_FORMAT = "toolscout-bm25f-3"  # bump when the analyzer, the fields or the key change

_CHUNK = 65_536
"""Tools analysed at a time (bounds the token lists held at once)."""
_SPARSE_FROM = 65_536
"""Docs from which :meth:`KeywordBackend.rank` keeps a scratch accumulator and reads only
the docs the query's terms hold: below, a fresh score vector is ~0.5 MB and one pass over
it costs less than the bookkeeping."""


VARIANTS: dict[str, dict[str, float]] = {
    "bm25f": FIELD_WEIGHTS,
    # Plain BM25 over name + description as one bag of words: the baseline to beat.
    "bm25": {"name": 1.0, "description": 1.0},
}


class KeywordBackend:
    """BM25F keyword backend (see the module docstring for the formula and weights)."""

    name = "keyword"

    def __init__(
        self,
        *,
        weights: dict[str, float] | None = None,
        k1: float = K1,
        b: float = B,
        variant: str = "bm25f",
        analyzer: Callable[[str], list[str]] = analyze,
    ) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r}; choose from {sorted(VARIANTS)}")
        self.variant = variant
        self.weights = dict(weights if weights is not None else VARIANTS[variant])
        self.k1, self.b = k1, b
        self.analyzer = analyzer
        self._last_terms: tuple[str, list[str]] | None = None
        self._vocab: dict[str, int] = {}
        self._tools: list[Tool] = []
        self._raw: dict[str, Sparse] = {}  # raw term counts per field, one row per tool
        self._counts_loader: Callable[[], dict[str, np.ndarray] | None] | None = None  # see _counts
        self._scores = empty()  # BM25F score per (term column, tool)
        self._idf = np.zeros(0, dtype=np.float32)
        self._n = 0
        self._acc = np.zeros(0, np.float32)  # rank's scratch, all zeros between queries
        self._acc_lock = threading.Lock()
        self._ub = np.zeros(0, np.float32)  # each term's highest score (rank's bound)

    # -- building -------------------------------------------------------------------------
    def _fields_of(self, tool: Tool, schemas: dict[str, tuple[str, str]] | None = None) -> dict[str, str]:
        fields = tool_fields(tool, schemas)
        if self.variant == "bm25":
            return {"name": fields["name"].split(" ", 1)[0], "description": fields["description"]}
        return fields

    def _analyse(self, tools: Sequence[Tool]) -> dict[str, Sparse]:
        """Raw term counts per field for ``tools`` (rows in order), a chunk of tools at a
        time: the token lists of a whole 1M-tool catalog at once took over a GB."""
        parts = [self._analyse_chunk(tools[i : i + _CHUNK]) for i in range(0, len(tools), _CHUNK)]
        if len(parts) <= 1:
            return parts[0] if parts else self._analyse_chunk([])
        out: dict[str, Sparse] = {}
        for field in self.weights:
            pieces = [part.pop(field) for part in parts]
            ends = np.cumsum([0, *(len(p.data) for p in pieces[:-1])])
            out[field] = Sparse(
                np.concatenate([p.data for p in pieces]),
                np.concatenate([p.indices for p in pieces]),
                np.concatenate([pieces[0].indptr[:1], *(p.indptr[1:] + e for p, e in zip(pieces, ends, strict=True))]),
            )
        return out

    def _analyse_chunk(self, tools: Sequence[Tool]) -> dict[str, Sparse]:
        vocab = self._vocab
        out: dict[str, Sparse] = {}
        schemas: dict[str, tuple[str, str]] = {}
        texts = [self._fields_of(t, schemas) for t in tools]
        del schemas
        analyzer = self.analyzer
        for field in self.weights:
            # Equal texts are analysed once (labels, shared parameter texts, copies): the
            # analyzer is pure, and its term lists are only read.
            memo: dict[str, list[str]] = {}
            docs = [
                found if (found := memo.get(text)) is not None else memo.setdefault(text, analyzer(text))
                for text in (fields.get(field, "") for fields in texts)
            ]
            del memo
            lengths = np.fromiter((len(d) for d in docs), np.int64, len(docs))
            flat = list(chain.from_iterable(docs))
            # New terms numbered in first-seen order, not in a set's (hash-seed) order: every
            # process then numbers a catalog alike, and replicas' snapshots agree
            vocab.update(zip(filterfalse(vocab.__contains__, dict.fromkeys(flat)), count(len(vocab))))
            ids = np.fromiter(map(vocab.__getitem__, flat), np.int32, len(flat))
            rows = np.repeat(np.arange(len(docs), dtype=np.int32), lengths)
            # duplicates summed: raw term frequencies, stored in the smallest type that holds them
            counts = compress(rows, ids, None, len(tools), len(vocab))
            out[field] = counts._replace(data=small_counts(counts.data))
        return out

    def rebuild(self, tools: Sequence[Tool]) -> None:
        """Index ``tools`` (doc id ``i`` is ``tools[i]``), re-analysing only changed tools."""
        tools = list(tools)
        old_tools = self._tools
        old_rows = {id(t): i for i, t in enumerate(old_tools)}  # the same object: unchanged
        fresh: list[Tool] = []
        source: list[int] = []  # for each new position: its row in stack(old rows, fresh rows)
        for tool in tools:
            row = old_rows.get(id(tool))
            if row is not None:
                source.append(row)
            else:
                source.append(len(old_tools) + len(fresh))
                fresh.append(tool)
        del old_rows
        new_raw = self._analyse(fresh) if fresh else {}
        if len(fresh) >= _CHUNK:
            # The analysis's token lists are garbage now, and its word caches hold mostly
            # the catalog's words (up to 600k entries, ~0.1 GB; queries refill them): hand
            # that heap back to the OS before the scores take their peak.
            if self.analyzer is analyze:
                clear_caches()
            release_freed_memory()
        order = np.asarray(source, dtype=np.int64)
        raw: dict[str, Sparse] = {}
        for field in self.weights:
            if not old_tools and fresh:  # a cold build: the new rows are in order already
                raw[field] = new_raw[field]
                continue
            old = self._counts().get(field, empty(len(old_tools))) if len(old_tools) else empty()
            stacked = stack(old, new_raw[field]) if fresh else old
            raw[field] = take(stacked, order)
        self._raw = raw
        self._tools = tools
        self._compute_scores()

    # -- snapshots ------------------------------------------------------------------------
    def snapshot_key(self, tools: Sequence[Tool], profiles: tuple[list[int], list[Any]] | None = None) -> str:
        """Identifies an index over ``tools`` with these settings: a snapshot stored under
        this key is valid exactly for the same tools (every indexed field), analyzer and
        weights. ``profiles`` is ``profiles_of(tools)`` if the caller has it already."""
        h = hashlib.sha256(f"{SNAPSHOT_FORMAT}|{self.variant}|{sorted(self.weights.items())}".encode())
        h.update(f"|{self.k1}|{self.b}|{getattr(self.analyzer, '__qualname__', '?')}".encode())
        # Column by column (C-level joins, no per-tool formatting: 1M tools in ~0.5 s): the
        # names, versions and original names, each with its lengths (so no text can pass
        # for two), then each tool's labels as a code into their distinct texts. Labels come
        # from the tools' shared profiles: formatted once per profile.
        names = list(map(attrgetter("name"), tools))
        versions = list(map(attrgetter("_version"), tools))  # computed ones: no property call
        if None in versions:
            versions = list(map(attrgetter("version"), tools))
        originals = list(map(repr, map(attrgetter("original_name"), tools)))
        codes, profiles = profiles_of(tools) if profiles is None else profiles
        labels = [
            repr((p.category, p.tags, p.source_id, sorted(p.display.items()), sorted(p.descriptions.items())))
            for p in profiles
        ]
        unique = dict.fromkeys(labels)
        position = dict(zip(unique, range(len(unique)), strict=True))
        label_of = np.asarray(list(map(position.__getitem__, labels)), np.int64)
        for column in (names, versions, originals, list(unique)):
            h.update(np.fromiter(map(len, column), np.int64, len(column)).tobytes())
            h.update("\x1f".join(column).encode())
        h.update(label_of[np.asarray(codes, np.int64)].astype("<i8").tobytes() if codes else b"")
        return h.hexdigest()[:32]

    def snapshot(self) -> dict[str, np.ndarray]:
        """The analysed index as plain arrays (numbers only; no pickle), for a store."""
        arrays, counts = self.snapshot_parts()
        return {**arrays, **counts}

    def snapshot_parts(self) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
        """:meth:`snapshot` in two parts: what searching needs (vocabulary, BM25F scores)
        and the per-field term counts, which only a rebuild after a change (and
        :meth:`explain`) reads: a restart can leave them in the store until then."""
        terms = sorted(self._vocab, key=self._vocab.__getitem__)
        arrays: dict[str, np.ndarray] = {"vocab": np.frombuffer("\n".join(terms).encode(), dtype=np.uint8)}
        # The BM25F scores too: recomputing them from the counts is most of a restart's CPU
        # at 1M tools (a sort of every entry), reading them is a copy.
        arrays["scores.data"], arrays["scores.indices"], arrays["scores.indptr"] = self._scores
        arrays["idf"] = self._idf
        counts: dict[str, np.ndarray] = {}
        for field, m in self._counts().items():
            counts[f"{field}.data"] = m.data
            counts[f"{field}.indices"] = m.indices
            counts[f"{field}.indptr"] = m.indptr
        return arrays, counts

    def restore(
        self,
        tools: Sequence[Tool],
        arrays: dict[str, np.ndarray],
        counts: Callable[[], dict[str, np.ndarray] | None] | None = None,
    ) -> bool:
        """Load a :meth:`snapshot` taken over the same ``tools``; False (and no change) if it
        does not fit, so the caller rebuilds. Without the term counts in ``arrays``,
        ``counts`` fetches them (the second of :meth:`snapshot_parts`) when first needed;
        if it then finds none that fit, the tools are analysed again."""
        try:
            raw_vocab = bytes(arrays["vocab"]).decode()
            terms = raw_vocab.split("\n") if raw_vocab else []
        except (KeyError, ValueError, TypeError, UnicodeDecodeError):
            return False
        width = max(len(terms), 1)
        has_counts = all(f"{field}.data" in arrays for field in self.weights)
        raw = self._parse_counts(arrays, len(tools), width) if has_counts else {}
        if raw is None or (not has_counts and (counts is None or "scores.data" not in arrays)):
            return False
        self._vocab = dict(zip(terms, range(len(terms)), strict=True))
        self._raw = raw
        self._counts_loader = None if has_counts else counts
        self._tools = list(tools)
        if not self._restore_scores(arrays, width):
            self._compute_scores()
        return True

    def _parse_counts(self, arrays: dict[str, np.ndarray], n: int, width: int) -> dict[str, Sparse] | None:
        """The per-field term counts in ``arrays``, or None if they do not fit."""
        raw: dict[str, Sparse] = {}
        try:
            for field in self.weights:
                data, indices, indptr = (np.asarray(arrays[f"{field}.{k}"]) for k in ("data", "indices", "indptr"))
                if len(indptr) != n + 1 or (len(indices) and int(indices.max()) >= width):
                    return None
                if len(data) != len(indices) or int(indptr[0]) != 0 or int(indptr[-1]) != len(indices):
                    return None
                if len(indptr) > 1 and bool((np.diff(indptr) < 0).any()):
                    return None
                raw[field] = Sparse(
                    data if data.dtype in COUNT_TYPES else data.astype(np.float32),
                    indices.astype(np.int32, copy=False),
                    indptr.astype(np.int64),
                )
        except (KeyError, ValueError, TypeError, IndexError):
            return None
        return raw

    def _counts(self) -> dict[str, Sparse]:
        """The per-field term counts, fetched now if a restore left them in the store."""
        loader = self._counts_loader
        if loader is not None:
            self._counts_loader = None
            found = loader()
            raw = self._parse_counts(found, len(self._tools), max(len(self._vocab), 1)) if found else None
            self._raw = raw if raw is not None else self._analyse(self._tools)
        return self._raw

    def _restore_scores(self, arrays: dict[str, np.ndarray], width: int) -> bool:
        """Take the snapshot's BM25F scores if it has them in the right shape."""
        try:
            data, indices, indptr = (np.asarray(arrays[f"scores.{k}"]) for k in ("data", "indices", "indptr"))
            idf = np.asarray(arrays["idf"], dtype=np.float32)
        except KeyError:
            return False
        n = len(self._tools)
        if len(indptr) != width + 1 or len(idf) != width or len(data) != len(indices) or int(indptr[-1]) != len(data):
            return False
        if len(indices) and (int(indices.max()) >= n or int(indices.min()) < 0):
            return False
        self._scores = Sparse(data.astype(np.float32, copy=False), indices.astype(np.int32, copy=False), indptr.astype(np.int64))
        self._idf = idf
        self._n = n
        self._index_terms()
        return True

    def _compute_scores(self) -> None:
        n = len(self._tools)
        width = max(len(self._vocab), 1)
        # Large catalogs sum the fields column-wise in scipy (C), one field at a time: the
        # entries of all fields at once, sorted, took over a GB at 1M tools. Both ways add
        # a (term, doc)'s fields in field order, in float32: the same scores.
        counts = self._counts()
        big = sum(len(counts[f].data) for f in self.weights) > sparse.SCIPY_ABOVE
        rows, cols, vals = [], [], []  # every field's weighted, length-normalised counts
        norms: list[tuple[Sparse, np.ndarray]] = []
        for field, w in self.weights.items():
            m = counts[field]
            row_of = major_of(m)
            lengths = np.bincount(row_of, weights=m.data, minlength=n).astype(np.float32)
            avg = float(lengths.mean()) if n and lengths.mean() > 0 else 1.0
            norm = (w / (1.0 - self.b + self.b * lengths / avg)).astype(np.float32)
            if big:
                norms.append((m, norm))
                continue
            rows.append(row_of)
            cols.append(m.indices)
            vals.append(norm[row_of] * m.data)
        if big:
            tf = sum_fields(norms, n, width)
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
            last = int(np.searchsorted(tf.indptr, tf.indptr[first] + _CHUNK * 64, side="right")) - 1
            last = min(width, max(last, first + 1))
            lo, hi = int(tf.indptr[first]), int(tf.indptr[last])
            part = np.repeat(idf[first:last], per[first:last])
            part *= data[lo:hi]
            part *= self.k1 + 1.0
            part /= data[lo:hi] + self.k1
            data[lo:hi] = part
            first = last
        del per
        self._scores = Sparse(data, tf.indices, tf.indptr)
        self._idf = idf
        self._n = n
        self._index_terms()

    def _index_terms(self) -> None:
        """Each term's highest score: :meth:`rank`'s bound on what a term can add."""
        m = self._scores
        df = np.diff(m.indptr)
        ub = np.zeros(len(df), np.float32)
        some = df > 0
        if some.any():
            ub[some] = np.maximum.reduceat(m.data, m.indptr[:-1][some])
        self._ub = ub

    # -- querying -------------------------------------------------------------------------
    def terms(self, query: str) -> list[str]:
        """The query's distinct terms. The last query's are kept: one search asks for them
        several times (scores, the relevance bound, the usage prior). Do not modify."""
        last = self._last_terms
        if last is not None and last[0] == query:
            return last[1]
        out = list(dict.fromkeys(self.analyzer(query)))
        self._last_terms = (query, out)
        return out

    def max_score(self, query: str) -> float:
        """The score a tool would reach by matching every query term without limit (for 0..1).

        Only terms some tool uses count: a word no tool contains cannot be matched by any, so
        it lowers nobody's relevance.
        """
        ids = [self._vocab[t] for t in self.terms(query) if t in self._vocab]
        return float(self._idf[ids].sum()) * (self.k1 + 1.0) if ids else 0.0

    def scores(self, query: str) -> tuple[np.ndarray, list[tuple[str, int]]]:
        """Dense score vector over all docs, and the (term, term id) pairs that were used."""
        used = [(t, self._vocab[t]) for t in self.terms(query) if t in self._vocab]
        m = self._scores
        ptr = m.indptr
        if not used or self._n == 0:
            return np.zeros(self._n, dtype=np.float32), used
        if len(used) == 1:
            a, z = ptr[used[0][1]], ptr[used[0][1] + 1]
            rows, vals = m.indices[a:z], m.data[a:z]
        else:
            rows = np.concatenate([m.indices[ptr[i] : ptr[i + 1]] for _, i in used])
            vals = np.concatenate([m.data[ptr[i] : ptr[i + 1]] for _, i in used])
        return np.bincount(rows, weights=vals, minlength=self._n), used

    # -- querying at scale ----------------------------------------------------------------
    @property
    def sparse(self) -> bool:
        """Whether :meth:`rank` skips the pass over every doc (large catalogs)."""
        return self._n >= _SPARSE_FROM

    def rank(self, query: str, limit: int, mask: np.ndarray | None = None) -> tuple[list[Hit], int]:
        """The ``limit`` best allowed docs (as :meth:`top` over :meth:`scores` would return
        them, ties included) and how many allowed docs match any query term.

        On a large catalog no pass over every doc's float score: see :meth:`_rank_sparse`.
        """
        used = [(t, self._vocab[t]) for t in self.terms(query) if t in self._vocab]
        if not used or self._n == 0:
            return [], 0
        if self._n < _SPARSE_FROM:  # a pass over every doc is cheaper than the bookkeeping
            scores, used = self.scores(query)
            if mask is not None:
                scores = np.where(mask, scores, 0.0)
            return self.top(scores, used, limit), self.count_matches(scores)
        acc, mine = self._accumulator()
        try:
            return self._rank_sparse(acc, used, limit, mask)
        finally:
            if mine:
                self._acc_lock.release()

    def _rank_sparse(
        self, acc: np.ndarray, used: list[tuple[str, int]], limit: int, mask: np.ndarray | None
    ) -> tuple[list[Hit], int]:
        """:meth:`rank` on a large catalog (docs/search.md#scaling-a-million-tools).

        1. Every posting of every query term is added into ``acc`` (float32, all zeros
           before and after) by scipy's compiled CSC product, ~1.7 ns a posting: long
           natural-language queries (toolpool's: 13 terms, 340k postings at the median)
           hold too many candidates for MaxScore's per-doc lookups (~45 ns each) to pay.
        2. The match count is the number of non-zero words of ``acc`` (integer view: ~0.1 ms
           for 1M docs, where a float comparison pass costs ~0.8 ms).
        3. The top k: terms are read best first (by their highest score); each term's docs
           scoring at least a bound on the k-th best score join a small pool, whose k-th
           best raises the bound. Once the terms left could not add up to the bound, a doc
           holding only those cannot make the top k, and their postings are not read again.
        4. The pool (float32 within rounding of the k-th best) is scored again in float64,
           in query-term order: exactly what scoring every doc gives, ties included.
        """
        m = self._scores
        ptr = m.indptr
        ids = [i for _, i in used]
        starts = ptr.take(ids).tolist()
        spans = list(zip(starts, ptr.take(np.add(ids, 1)).tolist(), strict=True))
        postings = sum(z - a for a, z in spans)
        try:
            add_scores(acc, m.indices, m.data, spans)
            words = acc.view(np.uint32)  # scores are > 0: a non-zero word is a match
            total = int(np.count_nonzero(words)) if mask is None else int(np.count_nonzero((words != 0) & mask))
            if limit <= 0 or not total:
                return [], total
            pool = candidate_pool(m, self._ub, acc, ids, spans, limit, mask)
        finally:
            if postings * 16 <= self._n:  # few: put the touched entries back to zero
                for a, z in spans:
                    acc[m.indices[a:z].astype(np.intp)] = 0.0
            else:  # a memset of the whole vector is cheaper
                acc.fill(0.0)
        # Query-term order, float64: the dense path's sums. Which terms each doc holds is
        # kept for the hits' explanations (no second search of the postings).
        scores = np.zeros(len(pool), np.float64)
        held = np.zeros((len(spans), len(pool)), bool)
        for t, (a, z) in enumerate(spans):
            rows = m.indices[a:z]
            at = rows.searchsorted(pool)  # past the end: clipped to the last, which differs
            hit = np.equal(rows.take(at, mode="clip"), pool, out=held[t])
            np.add(scores, m.data[a:z].take(at, mode="clip"), out=scores, where=hit)
        return self.top_sparse(pool, scores, used, limit, held), total

    def shared_terms(self, query: str) -> list[str] | None:
        """The query's distinct terms if they are the standard analyzer's (what the usage
        prior is keyed by), else ``None``."""
        return self.terms(query) if self.analyzer is analyze else None

    def ranking(self, query: str, mask: np.ndarray) -> KeywordRanking:
        """``query``'s ranking within ``mask``, for the finishing step (:mod:`~toolscout.search.signals`)."""
        return KeywordRanking(self, query, mask)

    def matches(self, query: str, doc: int) -> bool:
        """Whether ``doc`` holds any of the query's terms."""
        used = [(t, self._vocab[t]) for t in self.terms(query) if t in self._vocab]
        return bool(self._why(np.array([doc], np.int64), used))

    def _accumulator(self) -> tuple[np.ndarray, bool]:
        """The shared zeroed scratch vector (and True: release the lock after), or a private
        one while another thread holds it."""
        if self._acc_lock.acquire(blocking=False):
            if len(self._acc) != self._n:
                self._acc = np.zeros(self._n, np.float32)
            return self._acc, True
        return np.zeros(self._n, np.float32), False

    def search(self, query: str, *, limit: int, mask: np.ndarray | None = None) -> list[Hit]:
        return self.rank(query, limit, mask)[0]

    def count_matches(self, scores: np.ndarray) -> int:
        return int(np.count_nonzero(scores > 0))

    def top(self, scores: np.ndarray, used: list[tuple[str, int]], limit: int) -> list[Hit]:
        """The ``limit`` best docs with a positive score, best first (ties: doc order)."""
        matched = np.flatnonzero(scores > 0)
        return self.top_sparse(matched, scores[matched], used, limit)

    def top_sparse(
        self, docs: np.ndarray, scores: np.ndarray, used: list[tuple[str, int]], limit: int, held: np.ndarray | None = None
    ) -> list[Hit]:
        """The ``limit`` best of ``docs`` (distinct, any order; ``scores`` aligned, > 0), best
        first, ties in doc order: exactly, including ties at the cut. ``held[t, j]``: whether
        ``docs[j]`` holds ``used[t]``, if the caller knows (else looked up for the hits).

        The selection is :func:`~toolscout.search.sparse.best`.
        """
        if limit <= 0 or not len(docs):
            return []
        pos = best(docs, scores, limit)
        docs, scores = docs[pos], scores[pos]
        held = held[:, pos] if held is not None else None
        if held is None:
            why = self._why(docs, used)
        else:
            terms = [t for t, _ in used]
            why = {}
            for doc, column in zip(docs.tolist(), held.T.tolist(), strict=True):
                names = [t for t, h in zip(terms, column, strict=True) if h]
                if names:
                    why[doc] = "keyword: " + ", ".join(names)
        return [Hit(int(d), float(s), why.get(int(d), "keyword")) for d, s in zip(docs.tolist(), scores.tolist(), strict=True)]

    def _why(self, docs: np.ndarray, used: list[tuple[str, int]]) -> dict[int, str]:
        """``"keyword: term, term"`` per doc: which query terms it contains (a binary search
        of each term's sorted postings per doc, not a pass over them)."""
        m = self._scores
        ptr = m.indptr
        found: dict[int, list[str]] = {}
        docs = np.asarray(docs)
        for term, i in used:
            rows = m.indices[ptr[i] : ptr[i + 1]]
            if not len(rows):
                continue
            pos = np.minimum(np.searchsorted(rows, docs), len(rows) - 1)
            for doc in docs[rows[pos] == docs].tolist():
                found.setdefault(doc, []).append(term)
        return {doc: "keyword: " + ", ".join(terms) for doc, terms in found.items()}

    def explain(self, query: str, name: str) -> list[tuple[str, float, dict[str, float]]]:
        """``name``'s score for ``query`` taken apart: ``(term, score, {field: part})`` for
        each query term the tool holds, the parts summing to the term's score and the terms
        to the tool's score. BM25F saturates the fields' sum, so each field gets the share
        its weighted, length-normalised count has of that sum. Read by the web console: a
        ranking should be explained, not guessed at."""
        doc = next((i for i, t in enumerate(self._tools) if t.name == name), None)
        if doc is None or not self._n:
            return []
        rows: dict[str, tuple[np.ndarray, np.ndarray, float]] = {}
        counts = self._counts()
        for field, w in self.weights.items():
            m = counts[field]
            a, z = int(m.indptr[doc]), int(m.indptr[doc + 1])
            avg = float(m.data.sum()) / self._n or 1.0  # as _compute_scores: mean field length
            norm = w / (1.0 - self.b + self.b * float(m.data[a:z].sum()) / avg)
            rows[field] = (m.indices[a:z], m.data[a:z], norm)
        out: list[tuple[str, float, dict[str, float]]] = []
        for term in self.terms(query):
            tid = self._vocab.get(term)
            if tid is None:
                continue
            parts = {f: norm * float(data[cols == tid].sum()) for f, (cols, data, norm) in rows.items()}
            tf = sum(parts.values())
            if tf <= 0:
                continue
            score = float(self._idf[tid]) * tf * (self.k1 + 1.0) / (tf + self.k1)
            out.append((term, score, {f: score * v / tf for f, v in parts.items() if v > 0}))
        return out

    def __len__(self) -> int:
        return len(self._tools)


class KeywordRanking(Ranking):
    """Keyword mode's ranking: BM25F scores of the (possibly rewritten) text. Without a
    rescoring signal it takes :meth:`KeywordBackend.rank`'s path (no pass over every doc
    on a large catalog); with one, the dense score vector is rescored before the top k."""

    def __init__(self, backend: KeywordBackend, query: str, mask: np.ndarray) -> None:
        super().__init__("keyword", query)
        self._kw = backend
        self._mask = mask
        self._scores: np.ndarray | None = None  # the rescored, masked scores (rescored path)
        self._bound: float | None = None

    @property
    def bound(self) -> float:
        if self._bound is None:
            self._bound = self._kw.max_score(self.text) or 1.0
        return self._bound

    def cut(self, limit: int) -> tuple[list[Hit], int]:
        kw, text, mask = self._kw, self.text, self._mask
        bound = self.bound
        if not self.rescores:  # no pass over every doc (docs/search.md#scaling)
            return kw.rank(text, limit, None if mask.all() else mask)
        scores, used = kw.scores(text)
        scores = np.where(mask, self.adjusted(scores, bound), 0.0)  # bounded: a share of a full match
        self._scores = scores
        return kw.top(scores, used, limit), kw.count_matches(scores)

    def matched(self, doc: int) -> bool:
        if self._scores is None:
            return self._kw.matches(self.text, doc)
        return bool(self._scores[doc] > 0)

    def relevance(self, score: float, hits: Sequence[Hit]) -> float:
        return min(1.0, score / self.bound)
