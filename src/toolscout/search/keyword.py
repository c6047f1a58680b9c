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
``np.argpartition``. The sparse layouts are plain numpy arrays (no scipy: importing
scipy.sparse costs ~0.2 s of CPU, which an MCP client would wait for on every gateway start);
large catalogs (from 64k tools, built with scipy anyway) rank as :meth:`KeywordBackend.rank`
describes, with scipy's compiled sparse product.
Rebuilding reuses the analysed rows of tools that did not change (same object), so an
update after adding or removing a few tools re-tokenises only the new ones.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable, Iterable, Sequence
from itertools import chain, count, filterfalse
from operator import attrgetter
from typing import Any, NamedTuple

import numpy as np

from ..model import Tool, profiles_of
from .analyzer import analyze, clear_caches
from .base import Hit

__all__ = ["FIELD_WEIGHTS", "KeywordBackend", "release_freed_memory", "tool_fields"]

FIELDS: tuple[str, ...] = ("name", "description", "param_names", "param_text", "labels", "i18n")
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


_MAX_ENUM = 20
_SAMPLE = 4096
"""Docs sampled for a top-k bound (:meth:`KeywordBackend.top_sparse`, :meth:`KeywordBackend.rank`):
large enough that the bound sits near the true k-th score, small next to the docs a broad
query matches."""
_CHUNK = 65_536
"""Tools analysed at a time (bounds the token lists held at once)."""
_COUNT_TYPES = (np.dtype(np.uint8), np.dtype(np.uint16), np.dtype(np.float32))


def _small_counts(counts: np.ndarray) -> np.ndarray:
    """Term counts (whole numbers) in the smallest of uint8, uint16, float32 holding them:
    a quarter of the raw counts' memory in practice."""
    top = float(counts.max()) if len(counts) else 0.0
    if top <= 255:
        return counts.astype(np.uint8)
    return counts.astype(np.uint16) if top <= 65535 else counts


_SPARSE_FROM = 65_536
"""Docs from which :meth:`KeywordBackend.rank` keeps a scratch accumulator and reads only
the docs the query's terms hold: below, a fresh score vector is ~0.5 MB and one pass over
it costs less than the bookkeeping."""


class _Sparse(NamedTuple):
    """A compressed sparse matrix (rows of a CSR, or columns of a CSC) as plain arrays:
    entries of major line ``i`` are ``indices/data[indptr[i]:indptr[i + 1]]``, minor indices
    ascending and unique."""

    data: np.ndarray  # float32
    indices: np.ndarray  # int32: the minor index of each entry
    indptr: np.ndarray  # int64, one more than there are major lines


def _empty(lines: int = 0) -> _Sparse:
    return _Sparse(np.zeros(0, np.float32), np.zeros(0, np.int32), np.zeros(lines + 1, np.int64))


_SCIPY_ABOVE = 1_000_000
"""Entries from which :func:`_compress` hands the work to scipy (imported then): its C
counting sort beats numpy's comparison sort there (100k tools: ~3M entries, 0.17 s vs 0.3 s),
while below it numpy is as fast and scipy's import (~0.2 s of CPU) would dominate a small
catalog's build, e.g. an MCP gateway's start."""


def _compress(
    major: np.ndarray, minor: np.ndarray, values: np.ndarray | None, n_major: int, n_minor: int
) -> _Sparse:
    """Entries (major, minor, value) -> :class:`_Sparse`, duplicates summed; ``values=None``
    counts each entry as 1 (term frequencies: sorting keys alone is ~3x faster)."""
    if len(major) > _SCIPY_ABOVE:
        import scipy.sparse as sp

        if values is None:
            values = np.ones(len(major), np.float32)
        m = sp.coo_matrix((values, (major, minor)), shape=(n_major, max(n_minor, 1))).tocsr()
        m.sum_duplicates()  # sorts indices too
        return _Sparse(m.data.astype(np.float32, copy=False), m.indices.astype(np.int32, copy=False), m.indptr.astype(np.int64))
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
    return _Sparse(values.astype(np.float32, copy=False), (key - lines * width).astype(np.int32), indptr)


def _fields_block(fields: list[tuple[_Sparse, np.ndarray]], start: int, stop: int, width: int) -> Any:
    """Docs ``start:stop`` of the weighted fields summed (field order, float32), as a scipy
    CSC matrix over (doc - start, term): each entry is ``norm[doc] * count`` added field
    by field, exactly as summing whole fields gives."""
    import scipy.sparse as sp

    total: Any = None
    for m, norm in fields:
        lo, hi = int(m.indptr[start]), int(m.indptr[stop])
        indptr = m.indptr[start : stop + 1] - lo
        rows = np.repeat(np.arange(stop - start, dtype=np.int32), np.diff(indptr))
        values = norm[start:stop][rows] * m.data[lo:hi]
        part = sp.csr_matrix((values, m.indices[lo:hi], indptr), shape=(stop - start, width), copy=False)
        total = part if total is None else total + part
    return total.tocsc()


def _sum_fields(fields: list[tuple[_Sparse, np.ndarray]], n: int, width: int) -> _Sparse:
    """The weighted fields' sum as a (term, doc) :class:`_Sparse`, built a block of docs at a
    time into its final arrays: one copy of the summed matrix is alive, not two (adding
    whole fields held the sum so far and the new sum at once: the 1M-tool build's peak).
    Two passes over the blocks: the first counts each term's docs, the second writes each
    block's entries after the earlier blocks' (docs stay ascending in every term)."""
    step = _CHUNK
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
    return _Sparse(data, indices, indptr)


def _major_of(m: _Sparse) -> np.ndarray:
    """The major index of every entry."""
    return np.repeat(np.arange(len(m.indptr) - 1, dtype=np.int32), np.diff(m.indptr))


def _stack(a: _Sparse, b: _Sparse) -> _Sparse:
    """``b``'s lines after ``a``'s."""
    indptr = np.concatenate([a.indptr, b.indptr[1:] + a.indptr[-1]])
    return _Sparse(np.concatenate([a.data, b.data]), np.concatenate([a.indices, b.indices]), indptr)


def _take(m: _Sparse, lines: np.ndarray) -> _Sparse:
    """The given major lines of ``m``, in that order."""
    starts = m.indptr[lines]
    counts = m.indptr[lines + 1] - starts
    indptr = np.zeros(len(lines) + 1, np.int64)
    np.cumsum(counts, out=indptr[1:])
    pick = np.repeat(starts - indptr[:-1], counts) + np.arange(indptr[-1])
    return _Sparse(m.data[pick], m.indices[pick], indptr)


_SAFE = 1.0 - 1e-9
"""Bounds compare float64 sums taken in different orders: a margin far above their rounding."""
_F32_ROUNDING = 4 * 2.0**-24
"""Per query term, a margin above float32's rounding: :meth:`KeywordBackend.rank` sums
every doc's score in float32 (the accumulator is half the memory traffic of float64), and a
sum of ``t`` positive float32 values is within ``(t - 1) * 2**-24`` of the exact sum,
relatively. The docs returned are scored again in float64, in query-term order."""
_ONE = np.ones(1, np.float32)


def release_freed_memory() -> None:
    """Hand memory freed by a large build back to the OS (glibc keeps it otherwise)."""
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc: nothing to do
        pass


_MATVEC: list[Callable[..., Any] | None] = []


def _matvec() -> Callable[..., Any] | None:
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
            from scipy.sparse import _sparsetools

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


def _add_scores(acc: np.ndarray, indices: np.ndarray, data: np.ndarray, spans: list[tuple[int, int]]) -> None:
    """``acc[doc] += score`` for every posting of every span ``(start, stop)`` of
    ``indices``/``data``, span after span (float32, in place)."""
    matvec = _matvec() if indices.dtype == np.int32 and data.dtype == np.float32 == acc.dtype else None
    n = len(acc)
    for a, z in spans:
        if z <= a:
            continue
        if matvec is not None:
            matvec(n, 1, np.array([0, z - a], indices.dtype), indices[a:z], data[a:z], _ONE, acc)
        else:
            np.add.at(acc, indices[a:z], data[a:z])


def _distinct(docs: np.ndarray) -> np.ndarray:
    """``docs`` sorted, each once (``np.unique``'s hashing costs ~0.2 ms on a thousand)."""
    docs = np.sort(docs)
    if len(docs) > 1:
        first = np.empty(len(docs), bool)
        first[0] = True
        np.not_equal(docs[1:], docs[:-1], out=first[1:])
        docs = docs[first]
    return docs


def _kth(values: np.ndarray, k: int) -> float:
    """The ``k``-th largest of ``values`` (``len(values) >= k >= 1``)."""
    return float(np.partition(values, len(values) - k)[len(values) - k])


def _param_text(sub: Any) -> str:
    """A property's description, title and (string) enum values: what it accepts, in words."""
    if not isinstance(sub, dict):
        return ""
    parts = [sub.get(k) for k in ("title", "description")]
    enum = sub.get("enum")
    if isinstance(enum, list):
        parts.extend(v for v in enum[:_MAX_ENUM] if isinstance(v, str))
    return " ".join(p for p in parts if isinstance(p, str))


def _schema_params(schema: Any, depth: int = 0) -> Iterable[tuple[str, str]]:
    """(name, text) of the schema's properties, one nested level deep."""
    if not isinstance(schema, dict):
        return
    props = schema.get("properties")
    if isinstance(props, dict):
        for key, sub in props.items():
            yield str(key), _param_text(sub)
            if depth == 0 and isinstance(sub, dict):
                yield from _schema_params(sub, depth + 1)
                yield from _schema_params(sub.get("items"), depth + 1)


def _params(schema_json: str) -> tuple[str, str]:
    """The parameter names and the parameter text of a schema (its JSON text)."""
    params: list[tuple[str, str]] = []
    if '"properties":{"' in schema_json:  # canonical JSON: skip parsing empty schemas
        try:
            params = list(_schema_params(json.loads(schema_json)))
        except ValueError:
            params = []
    return " ".join(n for n, _ in params), " ".join(d for _, d in params)


def tool_fields(tool: Tool, schemas: dict[str, tuple[str, str]] | None = None) -> dict[str, str]:
    """The text of each indexed field of ``tool``. ``schemas`` memoises the parameter
    fields by schema text (tools often share a schema: it is then parsed once)."""
    schema = tool.schema_json
    if schemas is None:
        names, text = _params(schema)
    else:
        found = schemas.get(schema)
        names, text = found if found is not None else schemas.setdefault(schema, _params(schema))
    title = tool.annotations.title if tool.annotations and tool.annotations.title else ""
    labels = [tool.category or "", *tool.tags, tool.source_id or ""]
    return {
        "name": f"{tool.name} {tool.original_name or ''} {title}",
        "description": tool.description,
        "param_names": names,
        "param_text": text,
        "labels": " ".join(labels),
        "i18n": " ".join([*tool.display.values(), *tool.descriptions.values()]),
    }


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
        self._raw: dict[str, _Sparse] = {}  # raw term counts per field, one row per tool
        self._counts_loader: Callable[[], dict[str, np.ndarray] | None] | None = None  # see _counts
        self._scores = _empty()  # BM25F score per (term column, tool)
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

    def _analyse(self, tools: Sequence[Tool]) -> dict[str, _Sparse]:
        """Raw term counts per field for ``tools`` (rows in order), a chunk of tools at a
        time: the token lists of a whole 1M-tool catalog at once took over a GB."""
        parts = [self._analyse_chunk(tools[i : i + _CHUNK]) for i in range(0, len(tools), _CHUNK)]
        if len(parts) <= 1:
            return parts[0] if parts else self._analyse_chunk([])
        out: dict[str, _Sparse] = {}
        for field in self.weights:
            pieces = [part.pop(field) for part in parts]
            ends = np.cumsum([0, *(len(p.data) for p in pieces[:-1])])
            out[field] = _Sparse(
                np.concatenate([p.data for p in pieces]),
                np.concatenate([p.indices for p in pieces]),
                np.concatenate([pieces[0].indptr[:1], *(p.indptr[1:] + e for p, e in zip(pieces, ends, strict=True))]),
            )
        return out

    def _analyse_chunk(self, tools: Sequence[Tool]) -> dict[str, _Sparse]:
        vocab = self._vocab
        out: dict[str, _Sparse] = {}
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
            counts = _compress(rows, ids, None, len(tools), len(vocab))
            out[field] = counts._replace(data=_small_counts(counts.data))
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
        raw: dict[str, _Sparse] = {}
        for field in self.weights:
            if not old_tools and fresh:  # a cold build: the new rows are in order already
                raw[field] = new_raw[field]
                continue
            old = self._counts().get(field, _empty(len(old_tools))) if len(old_tools) else _empty()
            stacked = _stack(old, new_raw[field]) if fresh else old
            raw[field] = _take(stacked, order)
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
        distinct = dict.fromkeys(labels)
        position = dict(zip(distinct, range(len(distinct)), strict=True))
        label_of = np.asarray(list(map(position.__getitem__, labels)), np.int64)
        for column in (names, versions, originals, list(distinct)):
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

    def _parse_counts(self, arrays: dict[str, np.ndarray], n: int, width: int) -> dict[str, _Sparse] | None:
        """The per-field term counts in ``arrays``, or None if they do not fit."""
        raw: dict[str, _Sparse] = {}
        try:
            for field in self.weights:
                data, indices, indptr = (np.asarray(arrays[f"{field}.{k}"]) for k in ("data", "indices", "indptr"))
                if len(indptr) != n + 1 or (len(indices) and int(indices.max()) >= width):
                    return None
                if len(data) != len(indices) or int(indptr[0]) != 0 or int(indptr[-1]) != len(indices):
                    return None
                if len(indptr) > 1 and bool((np.diff(indptr) < 0).any()):
                    return None
                raw[field] = _Sparse(
                    data if data.dtype in _COUNT_TYPES else data.astype(np.float32),
                    indices.astype(np.int32, copy=False),
                    indptr.astype(np.int64),
                )
        except (KeyError, ValueError, TypeError, IndexError):
            return None
        return raw

    def _counts(self) -> dict[str, _Sparse]:
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
        self._scores = _Sparse(data.astype(np.float32, copy=False), indices.astype(np.int32, copy=False), indptr.astype(np.int64))
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
        big = sum(len(counts[f].data) for f in self.weights) > _SCIPY_ABOVE
        rows, cols, vals = [], [], []  # every field's weighted, length-normalised counts
        norms: list[tuple[_Sparse, np.ndarray]] = []
        for field, w in self.weights.items():
            m = counts[field]
            row_of = _major_of(m)
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
            tf = _sum_fields(norms, n, width)
            del norms
        else:
            tf = _compress(np.concatenate(cols), np.concatenate(rows), np.concatenate(vals), width, n)  # summed: CSC
        del rows, cols, vals
        if not tf.data.all():  # a zero field weight leaves explicit zeros: not matches
            keep = tf.data != 0
            col_of = _major_of(tf)[keep]
            indptr = np.zeros(width + 1, np.int64)
            np.cumsum(np.bincount(col_of, minlength=width), out=indptr[1:])
            tf = _Sparse(tf.data[keep], tf.indices[keep], indptr)
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
        self._scores = _Sparse(data, tf.indices, tf.indptr)
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
            _add_scores(acc, m.indices, m.data, spans)
            words = acc.view(np.uint32)  # scores are > 0: a non-zero word is a match
            total = int(np.count_nonzero(words)) if mask is None else int(np.count_nonzero((words != 0) & mask))
            if limit <= 0 or not total:
                return [], total
            pool = self._pool(acc, ids, spans, limit, mask)
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

    def _pool(
        self, acc: np.ndarray, ids: list[int], spans: list[tuple[int, int]], limit: int, mask: np.ndarray | None
    ) -> np.ndarray:
        """The allowed docs that may make the top ``limit`` by their float32 scores in
        ``acc`` (every query term added), ascending: a superset of the exact top
        ``limit``, ties at the cut included, and usually little more.

        ``bound`` is the k-th best float32 score of ``limit`` distinct allowed docs, so the
        exact k-th best score is at least ``floor = bound / (1 + eps)``: a doc of the top k
        has a float32 score of at least ``bound * (1 - eps) / (1 + eps)``, and a doc holding
        only terms whose highest scores add up to less than ``floor`` scores below it.
        """
        m = self._scores
        eps = _F32_ROUNDING * (len(ids) + 2)
        shrink = (1.0 - eps) / (1.0 + eps)
        ub = self._ub[ids].tolist()
        order = sorted(range(len(ids)), key=lambda j: -ub[j])  # stable: query order among equals
        rest = [0.0] * (len(order) + 1)  # highest scores of order[p:], summed
        for p in range(len(order) - 1, -1, -1):
            rest[p] = rest[p + 1] + ub[order[p]]
        bound = 0.0
        found: list[tuple[np.ndarray, np.ndarray]] = []  # distinct allowed docs (of one term), their scores
        seen = 0
        for p, j in enumerate(order):
            if rest[p] < bound / (1.0 + eps) * _SAFE:
                break  # a doc holding only the terms left scores below the k-th best
            a, z = spans[j]
            rows = m.indices[a:z]
            if seen < limit and z - a > 4 * _SAMPLE:
                # No bound yet and many docs to read: first a bound from an evenly spaced
                # sample of them (distinct docs), so that not all of them are kept.
                sample = rows[:: (z - a) // _SAMPLE]
                if mask is not None:
                    sample = sample[mask[sample]]
                if len(sample) >= limit:
                    bound = max(bound, _kth(acc.take(sample), limit))
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
                bound = max(bound, _kth(new[1], limit))
            elif seen >= limit and len(found) > 1 and bound == 0.0:
                docs = _distinct(np.concatenate([f[0] for f in found]))
                found, seen = [(docs, acc.take(docs))], len(docs)
                if seen >= limit:
                    bound = _kth(found[0][1], limit)
        if not found:
            return np.zeros(0, np.int32)
        threshold = bound * shrink
        pool = _distinct(np.concatenate([docs[values >= threshold] for docs, values in found]))
        if len(pool) > limit:
            values = acc.take(pool)
            bound = max(bound, _kth(values, limit))
            pool = pool[values >= bound * shrink]
        return pool

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

        A lower bound on the k-th best score comes from an evenly spaced sample of the docs
        (real docs with their full scores, so the bound is safe); one comparison over
        ``docs`` then leaves about ``limit * len(docs) / sample`` candidates to sort, where a
        partition of every matched doc cost ~1 ms per 200k docs.
        """
        if limit <= 0 or not len(docs):
            return []
        if len(docs) > limit:
            step = len(docs) // _SAMPLE
            sample = scores[::step] if step > 1 else scores[:0]
            theta = _kth(sample, limit) if len(sample) >= limit else 0.0  # a limit above the sample: none
            sel = np.flatnonzero(scores >= theta)
            if len(sel) > 4 * limit:  # a weak bound: partition what is left
                kth = np.partition(scores[sel], len(sel) - limit)[len(sel) - limit]
                sel = sel[scores[sel] >= kth]
            docs, scores = docs[sel], scores[sel]
            held = held[:, sel] if held is not None else None
        order = np.lexsort((docs, -scores))[:limit]
        docs, scores = docs[order], scores[order]
        if held is None:
            why = self._why(docs, used)
        else:
            terms = [t for t, _ in used]
            why = {}
            for doc, column in zip(docs.tolist(), held[:, order].T.tolist(), strict=True):
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
