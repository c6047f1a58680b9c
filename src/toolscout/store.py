"""The embedded store: one SQLite file holding a catalog's tool records and other parts' caches.

Why SQLite: a 10k-tool catalog reloads in a fraction of a second without re-parsing the
declaration files, readers never block the writer (WAL), and a transaction makes every write
all-or-nothing, so a process killed mid-save leaves the previous catalog intact.

Format (``FORMAT_VERSION`` = 1)::

    meta(key TEXT PRIMARY KEY, value TEXT)            format_version, saved_at, tool_count
    tools(pos INTEGER PRIMARY KEY, name TEXT UNIQUE,   one row per tool, in catalog order;
          version TEXT, schema TEXT, record TEXT)      schema = Tool.schema_json verbatim,
                                                       record = Tool.to_dict() minus the schema
    blobs(ns TEXT, key TEXT, value BLOB, meta TEXT,    key/value namespaces for other parts
          updated_at REAL, PRIMARY KEY (ns, key))      (upstream tool lists, embeddings...)

Each save also writes the same tools as columns (``blobs`` namespace ``catalog.columns``, key
= the save's ``saved_at``; see ``_tool_columns``), which ``load_tools`` reads in one piece:
1M tools load in about 2 s of CPU instead of about 25 s of row decoding. Triggers on
``tools`` drop the columns whenever a row changes (a version without columns saving, an
edit by hand), so the rows stay the record and are read whenever the columns are missing.
Descriptions and schema texts of tools that mostly have their own stay in the columns until
first read (:class:`~toolscout.model.DeferredTool`, ``_DeferredTexts``; docs/store.md).

A store written by a newer toolscout (higher ``format_version``) is refused with
:class:`~toolscout.errors.StoreError` rather than misread.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import sqlite3
import struct
import threading
import time
import zipfile
import zlib
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain, repeat
from operator import attrgetter
from pathlib import Path
from typing import Any

from .errors import StoreError
from .model import (
    DEFERRED_SLOTS,
    EMPTY_MAP,
    PROFILE_FIELDS,
    Annotations,
    DeferPolicy,
    DeferredTool,
    Tool,
    compact_json,
    shared_profile,
)

__all__ = ["FORMAT_VERSION", "Entry", "Store", "load_tools", "save_catalog", "tools_digest"]

FORMAT_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tools (
    pos INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    version TEXT NOT NULL,
    schema TEXT NOT NULL,
    record TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS blobs (
    ns TEXT NOT NULL,
    key TEXT NOT NULL,
    value BLOB,
    meta TEXT NOT NULL DEFAULT '{}',
    updated_at REAL NOT NULL,
    PRIMARY KEY (ns, key)
);
"""

_NOT_A_STORE_HINT = (
    "The file is not a toolscout store or is damaged; delete it and save the catalog again "
    "(Catalog.save(path)), or open a declaration file (.yaml/.json/.jsonl) instead."
)

_BUSY_HINT = "Another process is writing this store; retry when it has finished."


@dataclass(frozen=True, slots=True)
class Entry:
    """One value of a blob namespace, with the metadata stored next to it."""

    value: bytes | str
    meta: dict[str, Any] = field(default_factory=dict)
    updated_at: float = 0.0

    @property
    def text(self) -> str:
        return self.value if isinstance(self.value, str) else self.value.decode()


class Store:
    """A toolscout store file. Every write is one transaction; reads never block on writes.

    One ``Store`` object may be shared by threads (calls are serialised by a lock); other
    processes may open the same file concurrently.
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.RLock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                self.path, isolation_level=None, check_same_thread=False, timeout=10.0
            )
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(f"cannot open store {self.path}: {exc}", path=str(self.path)) from exc
        try:
            self._setup()
        except BaseException:
            self._db.close()
            raise

    def _setup(self) -> None:
        with self._guard("open"):
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            has_meta = self._db.execute(
                "SELECT 1 FROM sqlite_master WHERE type='table' AND name='meta'"
            ).fetchone()
            row = (
                self._db.execute("SELECT value FROM meta WHERE key='format_version'").fetchone()
                if has_meta
                else None
            )
            if row is not None:
                self._check_version(row[0])  # before touching anything a newer format owns
                return  # an existing store: opening it writes nothing, so readers never wait
            if self._db.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]:
                raise StoreError(  # another program's database: never write our tables into it
                    f"{self.path} is an SQLite database but not a toolscout store",
                    hint="Pass a new file name, or a file written by Catalog.save.",
                    path=str(self.path),
                )
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for statement in filter(str.strip, _SCHEMA.split(";")):
                    self._db.execute(statement)
                self._db.execute(
                    "INSERT OR IGNORE INTO meta VALUES ('format_version', ?)",
                    (str(FORMAT_VERSION),),
                )
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def _check_version(self, value: str) -> None:
        found = int(value) if value.isdigit() else -1
        if not 1 <= found <= FORMAT_VERSION:
            raise StoreError(
                f"store {self.path} has format version {value}; this toolscout reads up to "
                f"{FORMAT_VERSION}",
                hint="Upgrade toolscout, or save the catalog again with this version.",
                path=str(self.path),
                format_version=value,
            )

    # -- plumbing ------------------------------------------------------------------
    @contextmanager
    def _guard(self, action: str) -> Iterator[None]:
        """Turn sqlite errors into StoreError (the caller gets a hint, never a raw crash)."""
        with self._lock:
            try:
                yield
            except sqlite3.DatabaseError as exc:
                busy = isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc)
                raise StoreError(
                    f"store {self.path}: {action} failed: {exc}",
                    hint=_BUSY_HINT if busy else _NOT_A_STORE_HINT,
                    path=str(self.path),
                ) from exc
            except sqlite3.Error as exc:
                raise StoreError(
                    f"store {self.path}: {action} failed: {exc}", path=str(self.path)
                ) from exc

    @contextmanager
    def _write(self, action: str) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed whole, or rolled back whole on any exception."""
        with self._guard(action):
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- tools ---------------------------------------------------------------------
    def save_tools(self, tools: Iterable[Tool]) -> int:
        """Replace the stored tools with ``tools``, atomically; returns how many were written.

        ``tools`` may be a lazy iterable: if it raises half-way (or the process dies), the
        previous tools stay as they were.
        """
        with self._write("save tools") as db:
            for statement in _COLUMN_TRIGGERS:
                db.execute(statement)
            db.execute("DELETE FROM blobs WHERE ns=?", (_COLUMNS_NS,))
            db.execute("DELETE FROM tools")
            saved = list(tools)  # inside the transaction: a lazy iterable that raises rolls back
            db.executemany("INSERT INTO tools VALUES (?, ?, ?, ?, ?)", map(_tool_row, range(len(saved)), saved))
            (count,) = db.execute("SELECT count(*) FROM tools").fetchone()
            saved_at = repr(time.time())
            db.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                [("saved_at", saved_at), ("tool_count", str(count))],
            )
            # The same tools as columns, read back by load_tools: keyed by this save's time,
            # and dropped by a trigger whenever a row changes (a version without columns
            # saving, an edit by hand), so the rows stay the record.
            if _FAST and saved:
                value = _npz(_tool_columns(saved))
                db.execute(
                    "INSERT INTO blobs VALUES (?, ?, ?, '{}', ?)", (_COLUMNS_NS, saved_at, value, time.time())
                )
        return count

    def load_tools(self) -> list[Tool]:
        """The stored tools in saved order (schemas are kept as stored text, not re-parsed).

        Read from the columns the last save wrote next to the rows (one blob: no row-by-row
        decoding), else from the rows."""
        with self._guard("load tools"):
            meta = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
        if _FAST and "saved_at" in meta:
            arrays = self.get_arrays(_COLUMNS_NS, meta["saved_at"])
            if arrays is not None:
                try:
                    tools = _tools_from_columns(arrays)
                except (ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError):
                    tools = None  # damaged: the rows are the record
                if tools is not None and str(len(tools)) == meta.get("tool_count"):
                    return tools
        with self._guard("load tools"):
            sql = "SELECT version, schema, record FROM tools ORDER BY pos"
            rows = self._db.execute(sql).fetchall()
        try:
            # One JSON parse for all records: 10k small json.loads calls cost twice as much.
            records = json.loads("[" + ",".join(r[2] for r in rows) + "]")
            return [_restore(rec, r[1], r[0]) for rec, r in zip(records, rows, strict=True)]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise StoreError(
                f"store {self.path}: a tool record is malformed: {exc}",
                hint=_NOT_A_STORE_HINT,
                path=str(self.path),
            ) from exc

    def tool_names(self) -> list[str]:
        with self._guard("list tools"):
            return [r[0] for r in self._db.execute("SELECT name FROM tools ORDER BY pos")]

    def info(self) -> dict[str, str]:
        """The ``meta`` table: format_version, saved_at, tool_count."""
        with self._guard("read meta"):
            return dict(self._db.execute("SELECT key, value FROM meta").fetchall())

    # -- blob namespaces -------------------------------------------------------------
    def put(
        self, ns: str, key: str, value: bytes | str, meta: dict[str, Any] | None = None
    ) -> None:
        """Store ``value`` (bytes or text, returned as given) under ``(ns, key)``."""
        self.put_many(ns, [(key, value, meta)])

    def put_many(
        self, ns: str, items: Iterable[tuple[str, bytes | str, dict[str, Any] | None]]
    ) -> int:
        """Store many values in one transaction (e.g. a batch of embeddings)."""
        now = time.time()
        rows = [(ns, k, _check_value(v), json.dumps(m or {}), now) for k, v, m in items]
        with self._write(f"put into '{ns}'") as db:
            db.executemany("INSERT OR REPLACE INTO blobs VALUES (?, ?, ?, ?, ?)", rows)
        return len(rows)

    def get(self, ns: str, key: str) -> Entry | None:
        with self._guard(f"get from '{ns}'"):
            row = self._db.execute(
                "SELECT value, meta, updated_at FROM blobs WHERE ns=? AND key=?", (ns, key)
            ).fetchone()
        if row is None:
            return None
        try:
            meta = json.loads(row[1])
        except ValueError as exc:
            raise StoreError(
                f"store {self.path}: metadata of '{ns}/{key}' is damaged: {exc}",
                hint="Delete the entry (Store.delete) and write it again.",
                path=str(self.path),
            ) from exc
        return Entry(row[0], meta if isinstance(meta, dict) else {}, row[2])

    def _blob_bytes(self, ns: str, key: str) -> bytes | None:
        """A bytes value read straight from its pages (``blobopen``: one copy, where a
        SELECT makes two; 1M tools' snapshot, ~200 MB: 0.4 -> 0.2 s), else None."""
        with self._guard(f"get from '{ns}'"):
            db = self._db
            if db.in_transaction:  # not ours to end: the plain way
                row = db.execute("SELECT value FROM blobs WHERE ns=? AND key=?", (ns, key)).fetchone()
                return row[0] if row is not None and isinstance(row[0], bytes) else None
            db.execute("BEGIN")  # the rowid and the value from one snapshot
            try:
                found = db.execute(
                    "SELECT rowid, typeof(value) FROM blobs WHERE ns=? AND key=?", (ns, key)
                ).fetchone()
                if found is None or found[1] != "blob":
                    return None
                with db.blobopen("blobs", "value", found[0], readonly=True) as blob:
                    return blob.read()
            finally:
                db.execute("COMMIT")

    def delete(self, ns: str, key: str) -> bool:
        with self._write(f"delete from '{ns}'") as db:
            return db.execute("DELETE FROM blobs WHERE ns=? AND key=?", (ns, key)).rowcount > 0

    def clear(self, ns: str) -> int:
        """Drop a whole namespace; returns how many entries went."""
        with self._write(f"clear '{ns}'") as db:
            return db.execute("DELETE FROM blobs WHERE ns=?", (ns,)).rowcount

    def keys(self, ns: str) -> list[str]:
        with self._guard(f"list '{ns}'"):
            sql = "SELECT key FROM blobs WHERE ns=? ORDER BY key"
            return [r[0] for r in self._db.execute(sql, (ns,))]

    # -- arrays (index snapshots, vectors) --------------------------------------------
    def put_arrays(
        self, ns: str, key: str, arrays: Mapping[str, Any], meta: dict[str, Any] | None = None
    ) -> None:
        """Store named numpy arrays as one ``.npz`` value (no pickle: numbers and strings only).

        Meant for search-index snapshots: key them by :func:`tools_digest` plus the analyzer's
        version, so a changed catalog or analyzer never reads a stale index.
        """

        self.put(ns, key, _npz(arrays, f"{ns}/{key}"), meta)

    def get_arrays(self, ns: str, key: str) -> dict[str, Any] | None:
        """The arrays stored by :meth:`put_arrays`, or ``None`` if absent or unreadable."""
        import numpy as np

        read = getattr(self, "_blob_bytes", None)  # SQLite; PostgresStore shares this method
        if read is not None:
            value = read(ns, key)
        else:
            entry = self.get(ns, key)
            value = entry.value if entry is not None else None
        if not isinstance(value, bytes):
            return None
        try:
            found = _npz_views(value)
            if found is not None:
                return found
            with np.load(io.BytesIO(value), allow_pickle=False) as data:
                return {k: data[k] for k in data.files}
        except (ValueError, OSError, EOFError, zipfile.BadZipFile, struct.error):
            return None  # a damaged snapshot is a cache miss: the caller rebuilds


def _npz_views(value: bytes) -> dict[str, Any] | None:
    """The arrays of an ``.npz`` value as read-only views of ``value`` (no copy), each
    member's CRC checked as ``np.load`` checks it; ``None`` if a member is not stored plain
    (compressed, encrypted), so the caller reads it with ``np.load``. Reading 1M tools'
    index snapshot this way skips copying ~400 MB."""
    import numpy as np
    from numpy.lib import format as npy

    out: dict[str, Any] = {}
    view = memoryview(value)
    with zipfile.ZipFile(io.BytesIO(value)) as archive:
        for info in archive.infolist():
            if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 1 or not info.filename.endswith(".npy"):
                return None
            at = info.header_offset
            if value[at : at + 4] != b"PK\x03\x04":
                raise zipfile.BadZipFile("bad local header")
            name_len, extra_len = struct.unpack("<HH", value[at + 26 : at + 30])
            start = at + 30 + name_len + extra_len
            member = view[start : start + info.file_size]
            if len(member) != info.file_size or zlib.crc32(member) != info.CRC:
                raise zipfile.BadZipFile(f"bad CRC for {info.filename}")
            header = io.BytesIO(member[: min(len(member), 1 << 16)])
            version = npy.read_magic(header)
            if version == (1, 0):
                shape, fortran, dtype = npy.read_array_header_1_0(header)
            elif version == (2, 0):
                shape, fortran, dtype = npy.read_array_header_2_0(header)
            else:
                return None
            if dtype.hasobject:
                raise ValueError("object arrays are not read")
            count = int(np.prod(shape, dtype=np.int64))
            if header.tell() + count * dtype.itemsize != len(member):
                raise ValueError(f"{info.filename} does not fit its header")
            flat = np.frombuffer(value, dtype, count, start + header.tell()) if count else np.empty(0, dtype)
            out[info.filename[:-4]] = flat.reshape(shape, order="F" if fortran else "C")
    return out


def _npz(arrays: Mapping[str, Any], what: str = "arrays") -> bytes:
    """Named numpy arrays as one ``.npz`` value (numbers and strings only: no pickle)."""
    import numpy as np

    values = {k: np.asarray(v) for k, v in arrays.items()}
    odd = [k for k, v in values.items() if v.dtype.hasobject]
    if odd:
        raise StoreError(f"arrays for '{what}' must hold numbers or strings, not objects: {odd}")
    buffer = io.BytesIO()
    np.savez(buffer, **values)
    return buffer.getvalue()


def tools_digest(tools: Iterable[Tool]) -> str:
    """A hash of the tools' names and versions, in order: equal exactly when a search index
    built over one list is valid for the other."""
    h = hashlib.sha256()
    for tool in tools:
        h.update(f"{tool.name}\x1f{tool.version}\x1e".encode())
    return h.hexdigest()[:32]


def save_catalog(tools: Iterable[Tool], path: str | os.PathLike[str]) -> int:
    """Write tool records (a catalog, or any iterable of tools) to the store at ``path``
    (handlers are code: not saved)."""
    with Store(path) as store:
        return store.save_tools(tools)


def load_tools(path: str | os.PathLike[str]) -> list[Tool]:
    """The tools saved at ``path`` by :func:`save_catalog`; a missing file is an error, not
    empty. (``Catalog.open`` wraps them in a catalog: the store never imports the catalog.)"""
    p = Path(path)
    if not p.is_file():
        hint = "Save one first with Catalog.save(path)."
        raise StoreError(f"no store at {p}", hint=hint, path=str(p))
    with Store(p) as store:
        return store.load_tools()


# -- rows --------------------------------------------------------------------------
def _check_value(value: object) -> bytes | str:
    if isinstance(value, bytes | str):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    raise StoreError(f"store values are bytes or str, not {type(value).__name__}")


def _tool_row(pos: int, tool: Tool) -> tuple[int, str, str, str, str]:
    record = tool.to_dict()
    del record["input_schema"], record["version"]
    return (pos, tool.name, tool.version, tool.schema_json, json.dumps(record, ensure_ascii=False))


_DEFER = {p.value: p for p in DeferPolicy}
_RESTORED_SLOTS = frozenset({"_schema_json", "_output_json", "_version", "_profile", "description", "name", "original_name"})
_FAST = frozenset(Tool.__slots__) == _RESTORED_SLOTS and PROFILE_FIELDS == (
    "source", "source_id", "origin", "category", "tags", "annotations", "permission", "searchable",
    "available", "platforms", "defer", "display", "descriptions", "meta", "kind",
)


def _restore(rec: dict[str, Any], schema: str, version: str) -> Tool:
    """Rebuild a Tool from a stored row without re-validating or re-serialising it.

    Rows were written from valid Tools, so this sets the slots directly (about 2x faster
    than ``Tool.from_dict``). If ``Tool`` gains a field this module does not know, ``_FAST``
    is false and the checked constructor is used instead.
    """
    if not _FAST:
        tool = Tool.from_dict(rec)
        object.__setattr__(tool, "_schema_json", schema)
        object.__setattr__(tool, "_version", version)
        return tool
    tool = _new_tool(Tool)
    get = rec.get
    output, ann = get("output_schema"), get("annotations")
    _set(tool, "name", rec["name"])
    _set(tool, "description", get("description") or "")
    _set(tool, "_schema_json", schema)
    _set(tool, "_output_json", compact_json(output) if output else None)
    _set(tool, "_version", version)
    _set(tool, "original_name", get("original_name"))
    source = get("source") or "python"
    _set(
        tool,
        "_profile",
        shared_profile(
            source,
            get("source_id"),
            get("origin") or source,
            get("category") or None,
            tuple(get("tags") or ()),
            _annotations(json.dumps(ann, sort_keys=True)) if ann else None,
            get("permission"),
            bool(get("searchable", True)),
            bool(get("available", True)),
            tuple(get("platforms") or ()),
            _DEFER[get("defer") or "automatic"],
            get("display") or EMPTY_MAP,
            get("descriptions") or EMPTY_MAP,
            get("meta") or EMPTY_MAP,
            get("kind") or "tool",
        ),
    )
    return tool


_new_tool = object.__new__
_set = object.__setattr__

# -- columns ---------------------------------------------------------------------------
# A catalog saved as columns loads without decoding a row per tool: each text field is its
# distinct values (one UTF-8 buffer and their end offsets, in characters) and one code per
# tool (-1: None), and the shared fields are the distinct profiles (JSON) and a code per
# tool. Equal texts (a schema many tools share) are stored, and loaded, once.
_COLUMNS_NS = "catalog.columns"
_COLUMN_TRIGGERS = tuple(
    f"CREATE TRIGGER IF NOT EXISTS tools_{event.lower()}_drops_columns AFTER {event} ON tools "
    f"BEGIN DELETE FROM blobs WHERE ns='{_COLUMNS_NS}'; END"
    for event in ("INSERT", "UPDATE", "DELETE")
)
_TEXT_SLOTS = ("name", "description", "_schema_json", "_output_json", "original_name", "_version")


def _text_column(name: str, values: Iterable[str | None], n: int) -> dict[str, Any]:
    import numpy as np

    table: dict[str, int] = {}
    codes = np.fromiter((-1 if v is None else table.setdefault(v, len(table)) for v in values), np.int32, n)
    texts = list(table)
    data = "".join(texts).encode()
    ends = np.cumsum(np.fromiter(map(len, texts), np.int64, len(texts)))
    out = {f"{name}.text": np.frombuffer(data, np.uint8), f"{name}.ends": ends, f"{name}.codes": codes}
    if name in DEFERRED_SLOTS:  # read a text at a time (_DeferredTexts): where each ends in bytes
        same = len(data) == (int(ends[-1]) if len(ends) else 0)  # ASCII: bytes are characters
        out[f"{name}.byte_ends"] = ends if same else np.cumsum(np.fromiter(map(len, map(str.encode, texts)), np.int64, len(texts)))
    return out


def _text_values(arrays: Mapping[str, Any], name: str, n: int) -> list[Any]:
    import numpy as np

    raw = np.ascontiguousarray(arrays[f"{name}.text"], np.uint8)
    ends_array = np.asarray(arrays[f"{name}.ends"], np.int64)
    texts: list[Any] = []
    if len(ends_array) > 1 and int(ends_array[-1]) == len(raw):  # as many bytes as characters: ASCII
        # A NUL after each text and one split, no slice objects (1M versions: 0.21 -> 0.13 s)
        texts = np.insert(raw, ends_array[:-1], 0).tobytes().decode("ascii").split("\x00")
        if len(texts) != len(ends_array):
            texts = []  # a text holds NUL: slice instead
    codes = np.asarray(arrays[f"{name}.codes"], np.int64)
    if not texts:
        text = str(memoryview(raw), "utf-8")
        ends = ends_array.tolist()
        if ends and ends[-1] != len(text):
            raise ValueError(f"column {name} does not fit")
        texts = list(map(text.__getitem__, map(slice, [0, *ends[:-1]], ends)))
        del text
    if len(codes) != n or (len(codes) and int(codes.max()) >= len(texts)):
        raise ValueError(f"column {name} does not fit")
    if len(texts) == n and bool((codes == np.arange(n)).all()):
        return texts  # every value distinct (names)
    texts.append(None)
    return list(map(texts.__getitem__, np.where(codes < 0, len(texts) - 1, codes).tolist()))


def _profile_record(p: Any) -> dict[str, Any]:
    return {
        "source": p.source,
        "source_id": p.source_id,
        "origin": p.origin,
        "category": p.category,
        "tags": list(p.tags),
        "annotations": p.annotations.to_mcp() if p.annotations else None,
        "permission": p.permission,
        "searchable": p.searchable,
        "available": p.available,
        "platforms": list(p.platforms),
        "defer": p.defer.value,
        "display": dict(p.display),
        "descriptions": dict(p.descriptions),
        "meta": dict(p.meta),
        "kind": p.kind,
    }


def _tool_columns(tools: list[Tool]) -> dict[str, Any]:
    import numpy as np

    n = len(tools)
    out: dict[str, Any] = {}
    for slot in _TEXT_SLOTS:
        values = (t.version for t in tools) if slot == "_version" else map(attrgetter(slot), tools)
        out.update(_text_column(slot, values, n))
    seen: dict[int, int] = {}
    records: list[dict[str, Any]] = []
    codes = np.empty(n, np.int32)
    for i, tool in enumerate(tools):
        p = tool._profile
        code = seen.get(id(p))
        if code is None:
            code = seen[id(p)] = len(records)
            records.append(_profile_record(p))
        codes[i] = code
    out["profiles"] = np.frombuffer(json.dumps(records, ensure_ascii=False).encode(), np.uint8)
    out["profile.codes"] = codes
    return out


_BLOCK = 128
"""Deferred tools are filled a block of this many consecutive rows at a time: the first
read costs ~50 µs, and a pass that reads every tool (an index build) pays ~0.5 µs a tool,
not the ~4 µs of filling tools one by one."""


class _DeferredTexts:
    """The description and schema texts of a store's tools, read a block of tools at a time.

    Holds, for each of :data:`~toolscout.model.DEFERRED_SLOTS`, its column's UTF-8 bytes
    (copied out of the stored value, which is then freed), where each distinct text ends
    in them and each tool's code. A distinct text is decoded once and shared by the tools
    holding it, as a whole-column load shares it. A filled block drops its tools and they
    drop their block, so this goes once every block is filled (or its tools are gone)."""

    def __init__(self, arrays: Mapping[str, Any], n: int) -> None:
        import numpy as np

        self._lock = threading.Lock()
        self._columns = []
        for slot in DEFERRED_SLOTS:
            data = bytes(arrays[f"{slot}.text"])
            ends = np.asarray(arrays[f"{slot}.byte_ends"], np.int64)
            chars = np.asarray(arrays[f"{slot}.ends"], np.int64)
            codes = np.array(arrays[f"{slot}.codes"], np.int32)
            if len(codes) != n or len(ends) != len(chars) or (len(ends) and int(ends[-1]) != len(data)):
                raise ValueError(f"column {slot} does not fit")
            if len(codes) and (int(codes.max()) >= len(ends) or int(codes.min()) < -1):
                raise ValueError(f"column {slot} does not fit")
            inner = ends[ends < len(data)]  # each text starts on a character (not a UTF-8 continuation byte)
            if len(inner) and bool((np.frombuffer(data, np.uint8)[inner] & 0xC0 == 0x80).any()):
                raise ValueError(f"column {slot} does not fit")
            starts = memoryview(np.concatenate([np.zeros(1, np.int64), ends]))  # indexing gives ints
            self._columns.append((memoryview(data), starts, codes, [None] * len(ends)))

    def fill(self, block: _TextBlock) -> None:
        """Set the texts of ``block``'s tools (once: a block already filled is left)."""
        with self._lock:
            tools = block.tools
            if tools is None:
                return
            start = block.start
            for (data, starts, codes, decoded), slot in zip(self._columns, DEFERRED_SLOTS, strict=True):
                values: list[str | None] = []
                for code in codes[start : start + len(tools)].tolist():
                    if code < 0:
                        values.append("" if slot == "description" else None)
                        continue
                    text = decoded[code]
                    if text is None:
                        text = decoded[code] = str(data[starts[code] : starts[code + 1]], "utf-8")
                    values.append(text)
                deque(map(Tool.__dict__[slot].__set__, tools, values), maxlen=0)
            deque(map(_DEFERRED_TEXTS.__delete__, tools), maxlen=0)  # after the texts: see DeferredTool
            block.tools = None


class _TextBlock:
    """Up to ``_BLOCK`` consecutive deferred tools, filled together (``DeferredTool._texts``)."""

    __slots__ = ("start", "texts", "tools")

    def __init__(self, texts: _DeferredTexts, start: int, tools: list[Tool]) -> None:
        self.texts, self.start, self.tools = texts, start, tools

    def fill(self) -> None:
        self.texts.fill(self)


_DEFERRED_TEXTS = DeferredTool.__dict__["_texts"]
_DEFER_BYTES = 64


def _defer(arrays: Mapping[str, Any], n: int) -> bool:
    """Whether to leave the texts in the columns: when the columns say where each text ends
    in bytes (saves before they did: read now) and the distinct descriptions hold at least
    ``_DEFER_BYTES`` a tool, i.e. most tools have their own. Decoding a few shared texts is
    cheap, and a deferred tool costs ~16 bytes (its slot, its place in a block) until read."""
    return all(f"{s}.byte_ends" in arrays for s in DEFERRED_SLOTS) and len(arrays["description.text"]) >= _DEFER_BYTES * n


def _tools_from_columns(arrays: Mapping[str, Any]) -> list[Tool]:
    """The tools :func:`_tool_columns` wrote: slots filled a column at a time (map over
    slot setters: no Python code runs per tool). Descriptions and schema texts are left in
    the columns until a tool's are first read (:class:`~toolscout.model.DeferredTool`),
    if the columns say where each ends in bytes (saves before they did: read now)."""
    import gc

    enabled = gc.isenabled()
    gc.disable()  # 1M new objects, none garbage: collections would only walk them (~0.3 s)
    try:
        return _make_tools(arrays)
    finally:
        if enabled:
            gc.enable()


def _make_tools(arrays: Mapping[str, Any]) -> list[Tool]:
    n = len(arrays["profile.codes"])
    profiles = [
        shared_profile(
            r["source"],
            r["source_id"],
            r["origin"],
            r["category"],
            tuple(r["tags"]),
            _annotations(json.dumps(r["annotations"], sort_keys=True)) if r["annotations"] else None,
            r["permission"],
            bool(r["searchable"]),
            bool(r["available"]),
            tuple(r["platforms"]),
            _DEFER[r["defer"]],
            r["display"] or EMPTY_MAP,
            r["descriptions"] or EMPTY_MAP,
            r["meta"] or EMPTY_MAP,
            r["kind"],
        )
        for r in json.loads(arrays["profiles"].tobytes().decode())
    ]
    deferred = _DeferredTexts(arrays, n) if _defer(arrays, n) else None
    tools = list(map(_new_tool, repeat(Tool if deferred is None else DeferredTool, n)))
    for slot in _TEXT_SLOTS:
        if deferred is None or slot not in DEFERRED_SLOTS:
            deque(map(Tool.__dict__[slot].__set__, tools, _text_values(arrays, slot, n)), maxlen=0)
    if deferred is not None:
        blocks = [_TextBlock(deferred, start, tools[start : start + _BLOCK]) for start in range(0, n, _BLOCK)]
        owners = chain.from_iterable(map(repeat, blocks, map(len, map(attrgetter("tools"), blocks))))
        deque(map(_DEFERRED_TEXTS.__set__, tools, owners), maxlen=0)
        del blocks
    codes = arrays["profile.codes"].tolist()
    deque(map(Tool.__dict__["_profile"].__set__, tools, map(profiles.__getitem__, codes)), maxlen=0)
    return tools


@lru_cache(maxsize=256)
def _annotations(key: str) -> Annotations | None:
    """Annotations are frozen and repeat a lot across tools: share one object per value."""
    return Annotations.from_mcp(json.loads(key))
