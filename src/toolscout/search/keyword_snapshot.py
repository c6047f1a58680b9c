"""The keyword index's snapshots: the key that says which tools a snapshot fits, and the
checks that a stored snapshot's arrays have the shape the index needs.

Kept apart from :mod:`toolscout.search.keyword` so the backend reads as building and
querying; a snapshot is plain numpy arrays (no pickle), and anything that does not fit is
refused here (``None``) so the caller rebuilds instead of crashing on a damaged store.

:func:`restore_keyword` and :func:`save_keyword` put a snapshot in a store and take it back:
a cold start loads the analysed keyword index instead of re-analysing every tool (about
10x faster). The key covers every indexed field, so a changed catalog or analyzer is a miss
and rebuilds. Snapshot problems never fail a search.

The term counts are kept apart (:data:`COUNTS_NS`): only a rebuild after a change reads
them, so a restart leaves them in the store until then (1M tools: half the snapshot). Their
term ids are those of the vocabulary they were saved with, and processes can number terms
differently (a fresh build numbers them as it meets them, so alike in every process, but an
index grown by changes appends new terms as they came): replicas that share one store and
save at once can leave one's snapshot and the other's counts under one key. So both parts
carry a digest of the vocabulary (:data:`NUMBERED_BY`, computed at the save: a restore
hashes nothing), and a restore takes only counts numbered as its snapshot is; others are a
miss (the tools are analysed again), never counts read against the wrong terms.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from operator import attrgetter
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import ToolscoutError
from ..model import Tool, profiles_of
from .base import Backend, Snapshots, can
from .sparse import COUNT_TYPES, Sparse

if TYPE_CHECKING:
    from ..storage import Store

__all__ = [
    "COUNTS_NS", "NUMBERED_BY", "SNAPSHOT_FORMAT", "SNAPSHOT_NS", "parse_counts", "parse_scores", "restore_keyword",
    "save_keyword", "snapshot_key",
]

SNAPSHOT_NS = "index.keyword"
"""The store namespace of the keyword index's snapshot (its scores and vocabulary)."""
COUNTS_NS = "index.keyword.counts"
"""The store namespace of the snapshot's term counts, kept apart (see the module's notes)."""
NUMBERED_BY = "numbered_by"
"""The array, in both parts, holding the digest of the vocabulary the counts are numbered by."""

SNAPSHOT_FORMAT = "toolscout-bm25f-3"  # bump when the analyzer, the fields or the key change


def snapshot_key(
    settings: str, tools: Sequence[Tool], profiles: tuple[list[int], list[Any]] | None = None
) -> str:
    """Identifies an index over ``tools`` with these ``settings`` (the backend's variant,
    weights, k1, b and analyzer as text): a snapshot stored under this key is valid exactly
    for the same tools (every indexed field). ``profiles`` is ``profiles_of(tools)`` if the
    caller has it already."""
    h = hashlib.sha256(f"{SNAPSHOT_FORMAT}|{settings}".encode())
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


def parse_counts(
    arrays: Mapping[str, np.ndarray], fields: Iterable[str], n: int, width: int
) -> dict[str, Sparse] | None:
    """The per-field term counts in ``arrays`` (``n`` docs, ``width`` terms), or None if
    they do not fit."""
    raw: dict[str, Sparse] = {}
    try:
        for field in fields:
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


def parse_scores(arrays: Mapping[str, np.ndarray], n: int, width: int) -> tuple[Sparse, np.ndarray] | None:
    """The snapshot's BM25F score columns and idf if it has them in the right shape."""
    try:
        data, indices, indptr = (np.asarray(arrays[f"scores.{k}"]) for k in ("data", "indices", "indptr"))
        idf = np.asarray(arrays["idf"], dtype=np.float32)
    except KeyError:
        return None
    if len(indptr) != width + 1 or len(idf) != width or len(data) != len(indices) or int(indptr[-1]) != len(data):
        return None
    if len(indices) and (int(indices.max()) >= n or int(indices.min()) < 0):
        return None
    return Sparse(data.astype(np.float32, copy=False), indices.astype(np.int32, copy=False), indptr.astype(np.int64)), idf


def _numbering(vocab: np.ndarray) -> np.ndarray:
    """A digest of a snapshot's vocabulary (its terms in id order, as bytes), as an array to
    store beside it: term counts are valid only with the numbering they were made with."""
    return np.frombuffer(hashlib.blake2b(np.ascontiguousarray(vocab), digest_size=16).digest(), np.uint8)


def restore_keyword(
    store: Store | None, tools: list[Tool], kw: Backend, profiles: tuple[list[int], list[Any]] | None = None
) -> bool:
    """Load ``kw``'s snapshot for ``tools`` from ``store``; False (analyse them) on a miss."""
    if store is None or not tools or not can(kw, Snapshots):
        return False
    try:
        key = kw.snapshot_key(tools, profiles)
        arrays = store.get_arrays(SNAPSHOT_NS, key)
    except ToolscoutError:
        return False
    if arrays is None:
        return False
    mark = arrays.get(NUMBERED_BY)
    numbering = bytes(mark) if mark is not None else None

    def counts() -> dict[str, np.ndarray] | None:
        try:
            found = store.get_arrays(COUNTS_NS, key)
        except ToolscoutError:
            return None
        theirs = found.get(NUMBERED_BY) if found is not None else None
        if numbering is None or theirs is None or bytes(theirs) != numbering:
            return None  # numbered by another writer (or not recorded): not these terms
        return found

    return kw.restore(tools, arrays, counts)


def save_keyword(
    store: Store | None, tools: list[Tool], kw: Backend, profiles: tuple[list[int], list[Any]] | None = None
) -> None:
    """Save ``kw``'s snapshot of ``tools`` in ``store``, replacing any other (never raises)."""
    if store is None or not tools or not can(kw, Snapshots):
        return
    try:
        key = kw.snapshot_key(tools, profiles)
        arrays, counts = kw.snapshot_parts()
        arrays[NUMBERED_BY] = counts[NUMBERED_BY] = _numbering(arrays["vocab"])
        store.clear(SNAPSHOT_NS)  # keep only the current catalog's snapshot
        store.clear(COUNTS_NS)
        store.put_arrays(COUNTS_NS, key, counts)
        store.put_arrays(SNAPSHOT_NS, key, arrays)
    except ToolscoutError:
        pass
