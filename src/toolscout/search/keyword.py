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
each field comes from :mod:`toolscout.search.fields`; the formula's arithmetic is
:mod:`toolscout.search.bm25f`, snapshots' keys and checks :mod:`toolscout.search.keyword_snapshot`,
and keyword mode's ranking :mod:`toolscout.search.keyword_ranking`; this module builds the
index and answers queries over it. Large
catalogs (from 64k tools) rank as :meth:`KeywordBackend.rank` describes.
Rebuilding reuses the analysed rows of tools that did not change (same object), so an
update after adding or removing a few tools re-tokenises only the new ones.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from itertools import chain, count, filterfalse
from typing import Any

import numpy as np

from ..model import Tool
from .analyzer import analyze, clear_caches
from .base import Hit
from .bm25f import score_columns, term_bounds
from .fields import FIELDS, tool_fields
from .keyword_ranking import KeywordRanking
from .keyword_snapshot import SNAPSHOT_FORMAT, parse_counts, parse_scores, snapshot_key
from .sparse import (
    Sparse,
    add_scores,
    best,
    candidate_pool,
    compress,
    empty,
    release_freed_memory,
    score_docs,
    small_counts,
    stack,
    take,
)

__all__ = [
    "FIELDS", "FIELD_WEIGHTS", "SNAPSHOT_FORMAT", "KeywordBackend", "KeywordRanking", "release_freed_memory", "tool_fields",
]

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

CHUNK = 65_536
"""Tools analysed (and their fields summed) at a time in a build: bounds the token lists
and blocks held at once."""
SPARSE_FROM = 65_536
"""Docs from which :meth:`KeywordBackend.rank` keeps a scratch accumulator and reads only
the docs the query's terms hold: below, a fresh score vector is ~0.5 MB and one pass over
it costs less than the bookkeeping."""
SAMPLE = 4096
_LOOKUP_COST = 32
"""About how many postings' reading one allowed doc's lookup in one term's postings costs
(a binary search's cache misses against a sequential pass): :meth:`KeywordBackend.rank`
scores few allowed docs one by one below that."""
"""Docs sampled for a first bound on the k-th best score in the large-catalog top k."""


VARIANTS: dict[str, dict[str, float]] = {
    "bm25f": FIELD_WEIGHTS,
    # Plain BM25 over name + description as one bag of words: the baseline to beat.
    "bm25": {"name": 1.0, "description": 1.0},
}


class KeywordBackend:
    """BM25F keyword backend (see the module docstring for the formula and weights).

    ``sparse_from``, ``chunk`` and ``sample`` size the work, never the answers (the same
    hits, bit for bit, at any setting): the catalog size from which :meth:`rank` skips the
    pass over every doc, the tools handled at a time in a build, and the docs sampled for
    a first top-k bound. Tests set them small to run the large-catalog paths on small
    catalogs; a machine with little memory may want a smaller ``chunk``.
    :attr:`loaded_from` says how the index got its scores: ``"build"`` (analysed and
    scored here), ``"snapshot"`` (the stored scores) or ``"snapshot counts"`` (scored
    again from the stored term counts).
    """

    name = "keyword"

    def __init__(
        self,
        *,
        weights: dict[str, float] | None = None,
        k1: float = K1,
        b: float = B,
        variant: str = "bm25f",
        analyzer: Callable[[str], list[str]] = analyze,
        sparse_from: int = SPARSE_FROM,
        chunk: int = CHUNK,
        sample: int = SAMPLE,
    ) -> None:
        if variant not in VARIANTS:
            raise ValueError(f"unknown variant {variant!r}; choose from {sorted(VARIANTS)}")
        self.variant = variant
        self.weights = dict(weights if weights is not None else VARIANTS[variant])
        self.k1, self.b = k1, b
        self.analyzer = analyzer
        self.sparse_from, self.chunk, self.sample = sparse_from, max(1, chunk), max(1, sample)
        self.loaded_from = "build"
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
        self.columns_read = 0
        """Term columns (posting lists) searches have read so far (what a query costs)."""

    # -- building -------------------------------------------------------------------------
    def _fields_of(self, tool: Tool, schemas: dict[str, tuple[str, str]] | None = None) -> dict[str, str]:
        fields = tool_fields(tool, schemas)
        if self.variant == "bm25":
            return {"name": fields["name"].split(" ", 1)[0], "description": fields["description"]}
        return fields

    def _analyse(self, tools: Sequence[Tool]) -> dict[str, Sparse]:
        """Raw term counts per field for ``tools`` (rows in order), a chunk of tools at a
        time: the token lists of a whole 1M-tool catalog at once took over a GB."""
        step = self.chunk
        parts = [self._analyse_chunk(tools[i : i + step]) for i in range(0, len(tools), step)]
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
        if len(fresh) >= self.chunk:
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
        self.loaded_from = "build"

    # -- snapshots ------------------------------------------------------------------------
    def snapshot_key(self, tools: Sequence[Tool], profiles: tuple[list[int], list[Any]] | None = None) -> str:
        """Identifies an index over ``tools`` with these settings: a snapshot stored under
        this key is valid exactly for the same tools (every indexed field), analyzer and
        weights. ``profiles`` is ``profiles_of(tools)`` if the caller has it already."""
        settings = f"{self.variant}|{sorted(self.weights.items())}"
        settings += f"|{self.k1}|{self.b}|{getattr(self.analyzer, '__qualname__', '?')}"
        return snapshot_key(settings, tools, profiles)

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
        raw = parse_counts(arrays, self.weights, len(tools), width) if has_counts else {}
        if raw is None or (not has_counts and (counts is None or "scores.data" not in arrays)):
            return False
        self._vocab = dict(zip(terms, range(len(terms)), strict=True))
        self._raw = raw
        self._counts_loader = None if has_counts else counts
        self._tools = list(tools)
        self.loaded_from = "snapshot"
        if not self._restore_scores(arrays, width):
            self._compute_scores()
            self.loaded_from = "snapshot counts"
        return True

    def _counts(self) -> dict[str, Sparse]:
        """The per-field term counts, fetched now if a restore left them in the store."""
        loader = self._counts_loader
        if loader is not None:
            self._counts_loader = None
            found = loader()
            raw = parse_counts(found, self.weights, len(self._tools), max(len(self._vocab), 1)) if found else None
            self._raw = raw if raw is not None else self._analyse(self._tools)
        return self._raw

    def _restore_scores(self, arrays: dict[str, np.ndarray], width: int) -> bool:
        """Take the snapshot's BM25F scores if it has them in the right shape."""
        found = parse_scores(arrays, len(self._tools), width)
        if found is None:
            return False
        self._scores, self._idf = found
        self._n = len(self._tools)
        self._index_terms()
        return True

    def _compute_scores(self) -> None:
        n = len(self._tools)
        width = max(len(self._vocab), 1)
        self._scores, self._idf = score_columns(self._counts(), self.weights, self.k1, self.b, n, width, self.chunk)
        self._n = n
        self._index_terms()

    def _index_terms(self) -> None:
        """Each term's highest score: :meth:`rank`'s bound on what a term can add."""
        self._ub = term_bounds(self._scores)


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
        if not used or self._n == 0:
            return np.zeros(self._n, dtype=np.float32), used
        return self._summed(used)[0], used

    def _summed(self, used: list[tuple[str, int]]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The terms' scores summed over every doc (float64, query-term order), the docs of
        their postings one term after another, and where each term's postings end."""
        m = self._scores
        ptr = m.indptr
        self.columns_read += len(used)
        ids = [i for _, i in used]
        starts, stops = ptr.take(ids), ptr.take(np.add(ids, 1))
        if len(used) == 1:
            a, z = int(starts[0]), int(stops[0])
            rows, vals = m.indices[a:z], m.data[a:z]
        else:
            spans = list(zip(starts.tolist(), stops.tolist(), strict=True))
            rows = np.concatenate([m.indices[a:z] for a, z in spans])
            vals = np.concatenate([m.data[a:z] for a, z in spans])
        return np.bincount(rows, weights=vals, minlength=self._n), rows, np.cumsum(stops - starts)

    def _held(self, rows: np.ndarray, ends: np.ndarray, terms: int) -> Callable[[np.ndarray], np.ndarray]:
        """``held(docs)[t, j]``: whether ``docs[j]`` holds term ``t``, read from the query's
        postings (``rows``, term after term, ``ends``) in one pass over them, not one binary
        search of each term's postings per hit (most of a small catalog's search once)."""

        def held(docs: np.ndarray) -> np.ndarray:
            slot = np.full(self._n, -1, np.int64)
            slot[docs] = np.arange(len(docs))
            at = slot.take(rows)
            found = np.flatnonzero(at >= 0)
            out = np.zeros((terms, len(docs)), bool)
            out[np.searchsorted(ends, found, side="right"), at.take(found)] = True
            return out

        return held

    # -- querying at scale ----------------------------------------------------------------
    @property
    def sparse(self) -> bool:
        """Whether :meth:`rank` skips the pass over every doc (large catalogs)."""
        return self._n >= self.sparse_from

    def rank(self, query: str, limit: int, mask: np.ndarray | None = None, count: bool = True) -> tuple[list[Hit], int]:
        """The ``limit`` best allowed docs (as :meth:`top` over :meth:`scores` would return
        them, ties included) and how many allowed docs match any query term (with
        ``count=False``, where that costs a pass over every doc, the hits' number instead).

        On a large catalog no pass over every doc's float score: see :meth:`_rank_sparse`.
        """
        used = [(t, self._vocab[t]) for t in self.terms(query) if t in self._vocab]
        if not used or self._n == 0:
            return [], 0
        few = self._few_allowed(mask, used) if mask is not None else None
        if few is not None:
            return self._rank_few(few, used, limit)
        if self._n < self.sparse_from:  # a pass over every doc is cheaper than the bookkeeping
            scores, rows, ends = self._summed(used)
            if mask is not None:
                scores = np.where(mask, scores, 0.0)
            matched = np.flatnonzero(scores > 0)
            held = self._held(rows, ends, len(used))
            return self.top_sparse(matched, scores[matched], used, limit, lambda pos: held(matched[pos])), len(matched)
        acc, mine = self._accumulator()
        try:
            return self._rank_sparse(acc, used, limit, mask, count)
        finally:
            if mine:
                self._acc_lock.release()

    def _rank_sparse(
        self, acc: np.ndarray, used: list[tuple[str, int]], limit: int, mask: np.ndarray | None, count: bool = True
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
        self.columns_read += len(ids)
        try:
            add_scores(acc, m.indices, m.data, spans)
            total = -1  # not counted: the hits' number (below)
            if count:
                words = acc.view(np.uint32)  # scores are > 0: a non-zero word is a match
                total = int(np.count_nonzero(words)) if mask is None else int(np.count_nonzero((words != 0) & mask))
            if limit <= 0 or not total:
                return [], max(total, 0)
            pool = candidate_pool(m, self._ub, acc, ids, spans, limit, mask, self.sample)
        finally:
            if postings * 16 <= self._n:  # few: put the touched entries back to zero
                for a, z in spans:
                    acc[m.indices[a:z].astype(np.intp)] = 0.0
            else:  # a memset of the whole vector is cheaper
                acc.fill(0.0)
        # Query-term order, float64: the dense path's sums. Which terms each doc holds is
        # kept for the hits' explanations (no second search of the postings).
        scores, held = score_docs(m, spans, pool)
        hits = self.top_sparse(pool, scores, used, limit, held)
        return hits, total if total >= 0 else len(hits)

    def _few_allowed(self, mask: np.ndarray, used: list[tuple[str, int]]) -> np.ndarray | None:
        """The allowed docs, when they are so few that looking each up in the query's
        postings costs less than reading the postings (a server's siblings: a few dozen
        docs, where the request's terms hold thousands); else ``None``."""
        ptr = self._scores.indptr
        postings = sum(int(ptr[i + 1] - ptr[i]) for _, i in used)
        allowed = int(np.count_nonzero(mask))
        return np.flatnonzero(mask) if allowed * len(used) * _LOOKUP_COST <= postings else None

    def _rank_few(self, docs: np.ndarray, used: list[tuple[str, int]], limit: int) -> tuple[list[Hit], int]:
        """:meth:`rank` over a few allowed ``docs``: each scored on its own (the same sums)."""
        ptr = self._scores.indptr
        self.columns_read += len(used)
        spans = [(int(ptr[i]), int(ptr[i + 1])) for _, i in used]
        scores, held = score_docs(self._scores, spans, docs)
        matched = np.flatnonzero(scores > 0)
        return self.top_sparse(docs[matched], scores[matched], used, limit, held[:, matched]), len(matched)

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

    def top(self, scores: np.ndarray, used: list[tuple[str, int]], limit: int) -> tuple[list[Hit], int]:
        """The ``limit`` best docs with a positive score, best first (ties: doc order), and how
        many docs scored above zero (one pass over ``scores`` finds both)."""
        matched = np.flatnonzero(scores > 0)
        return self.top_sparse(matched, scores[matched], used, limit), len(matched)

    def top_sparse(
        self,
        docs: np.ndarray,
        scores: np.ndarray,
        used: list[tuple[str, int]],
        limit: int,
        held: np.ndarray | Callable[[np.ndarray], np.ndarray] | None = None,
    ) -> list[Hit]:
        """The ``limit`` best of ``docs`` (distinct, any order; ``scores`` aligned, > 0), best
        first, ties in doc order: exactly, including ties at the cut. ``held[t, j]``: whether
        ``docs[j]`` holds ``used[t]``, if the caller knows (else looked up for the hits); or
        ``held(positions)``: that array for the docs at those positions only.

        The selection is :func:`~toolscout.search.sparse.best`.
        """
        if limit <= 0 or not len(docs):
            return []
        pos = best(docs, scores, limit, self.sample)
        docs, scores = docs[pos], scores[pos]
        held = held(pos) if callable(held) else held[:, pos] if held is not None else None
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
