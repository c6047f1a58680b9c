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
= the save's ``saved_at``; see ``toolscout.storage._columns``), which ``load_tools`` reads in one piece:
1M tools load in about 2 s of CPU instead of about 25 s of row decoding. Triggers on
``tools`` drop the columns whenever a row changes (a version without columns saving, an
edit by hand), so the rows stay the record and are read whenever the columns are missing.
Descriptions and schema texts of tools that mostly have their own stay in the columns until
first read (:class:`~toolscout.model.DeferredTool`, ``_DeferredTexts``; docs/store.md).

A store written by a newer toolscout (higher ``format_version``) is refused with
:class:`~toolscout.errors.StoreError` rather than misread.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import StoreError
from ..model import Tool
from . import _codec
from ._codec import (
    check_value,
    decode_arrays,
    encode_arrays,
    tool_row,
    tools_digest,
    tools_from_rows,
)
from ._columns import tool_columns, tools_from_columns
from .base import Entry, StoreHealth

__all__ = ["FORMAT_VERSION", "SQLiteStore", "load_tools", "save_catalog", "sqlite_path", "tools_digest"]

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



class SQLiteStore:
    """A toolscout store file (engine ``sqlite``). Every write is one transaction; reads never
    block on writes.

    One ``Store`` object may be shared by threads (calls are serialised by a lock); other
    processes may open the same file concurrently.
    """

    engine = "sqlite"

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.where = str(self.path)
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

    def __enter__(self) -> SQLiteStore:
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
            db.execute("DELETE FROM blobs WHERE ns=?", (COLUMNS_NS,))
            db.execute("DELETE FROM tools")
            saved = list(tools)  # inside the transaction: a lazy iterable that raises rolls back
            db.executemany("INSERT INTO tools VALUES (?, ?, ?, ?, ?)", map(tool_row, range(len(saved)), saved))
            (count,) = db.execute("SELECT count(*) FROM tools").fetchone()
            saved_at = repr(time.time())
            db.executemany(
                "INSERT OR REPLACE INTO meta VALUES (?, ?)",
                [("saved_at", saved_at), ("tool_count", str(count))],
            )
            # The same tools as columns, read back by load_tools: keyed by this save's time,
            # and dropped by a trigger whenever a row changes (a version without columns
            # saving, an edit by hand), so the rows stay the record.
            if _codec.FAST and saved:
                value = encode_arrays(tool_columns(saved))
                db.execute(
                    "INSERT INTO blobs VALUES (?, ?, ?, '{}', ?)", (COLUMNS_NS, saved_at, value, time.time())
                )
        return count

    def load_tools(self) -> list[Tool]:
        """The stored tools in saved order (schemas are kept as stored text, not re-parsed).

        Read from the columns the last save wrote next to the rows (one blob: no row-by-row
        decoding), else from the rows."""
        with self._guard("load tools"):
            meta = dict(self._db.execute("SELECT key, value FROM meta").fetchall())
        if _codec.FAST and "saved_at" in meta:
            arrays = self.get_arrays(COLUMNS_NS, meta["saved_at"])
            if arrays is not None:
                try:
                    tools = tools_from_columns(arrays)
                except (ValueError, KeyError, TypeError, IndexError, UnicodeDecodeError):
                    tools = None  # damaged: the rows are the record
                if tools is not None and str(len(tools)) == meta.get("tool_count"):
                    return tools
        with self._guard("load tools"):
            sql = "SELECT version, schema, record FROM tools ORDER BY pos"
            rows = self._db.execute(sql).fetchall()
        return tools_from_rows(rows, self.where, _NOT_A_STORE_HINT)

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
        rows = [(ns, k, check_value(v), json.dumps(m or {}), now) for k, v, m in items]
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
        self.put(ns, key, encode_arrays(arrays, f"{ns}/{key}"), meta)

    def get_arrays(self, ns: str, key: str) -> dict[str, Any] | None:
        """The arrays stored by :meth:`put_arrays`, or ``None`` if absent or unreadable
        (read straight from the blob's pages: see :meth:`_blob_bytes`)."""
        return decode_arrays(self._blob_bytes(ns, key))

    # -- health ------------------------------------------------------------------------
    def health(self) -> StoreHealth:
        """Whether the file answers a read now (never raises)."""
        try:
            with self._guard("check"):
                self._db.execute("SELECT 1 FROM meta LIMIT 1").fetchall()
        except StoreError as exc:
            return StoreHealth(self.engine, self.where, False, exc.message)
        return StoreHealth(self.engine, self.where, True)

    @classmethod
    def from_url(cls, url: str) -> SQLiteStore:
        """``sqlite:///abs/path.db``, ``sqlite://rel/path.db`` or a plain path."""
        return cls(sqlite_path(url))


def sqlite_path(url: str) -> str:
    """The file a ``sqlite://`` URL names (a plain path is returned as given)."""
    if not url.startswith("sqlite://"):
        return url
    rest = url[len("sqlite://") :]
    if not rest:
        raise StoreError("sqlite:// needs a file: sqlite:///abs/path.db or sqlite://rel/path.db")
    return rest


def save_catalog(tools: Iterable[Tool], path: str | os.PathLike[str]) -> int:
    """Write tool records (a catalog, or any iterable of tools) to the store at ``path``
    (handlers are code: not saved)."""
    with SQLiteStore(path) as store:
        return store.save_tools(tools)


def load_tools(path: str | os.PathLike[str]) -> list[Tool]:
    """The tools saved at ``path`` by :func:`save_catalog`; a missing file is an error, not
    empty. (``Catalog.open`` wraps them in a catalog: the store never imports the catalog.)"""
    p = Path(path)
    if not p.is_file():
        hint = "Save one first with Catalog.save(path)."
        raise StoreError(f"no store at {p}", hint=hint, path=str(p))
    with SQLiteStore(p) as store:
        return store.load_tools()



# -- columns ---------------------------------------------------------------------------
# A catalog saved as columns loads without decoding a row per tool: each text field is its
# distinct values (one UTF-8 buffer and their end offsets, in characters) and one code per
# tool (-1: None), and the shared fields are the distinct profiles (JSON) and a code per
# tool. Equal texts (a schema many tools share) are stored, and loaded, once.
COLUMNS_NS = "catalog.columns"
_COLUMN_TRIGGERS = tuple(
    f"CREATE TRIGGER IF NOT EXISTS tools_{event.lower()}_drops_columns AFTER {event} ON tools "
    f"BEGIN DELETE FROM blobs WHERE ns='{COLUMNS_NS}'; END"
    for event in ("INSERT", "UPDATE", "DELETE")
)
