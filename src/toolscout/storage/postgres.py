"""The shared store: a catalog and the key/value namespaces in PostgreSQL, for many replicas.

Why: one gateway process on an SQLite file does not scale out. Replicas behind a load
balancer must serve one catalog, and a change made on one (an upstream refresh, a
``toolscout catalog sync``) must be written once and reach the others. PostgreSQL gives the
transactions, the unique keys and the LISTEN/NOTIFY channel this needs; no home-made cluster.

:class:`PostgresStore` implements :class:`~toolscout.storage.SharedStore` (engine
``postgresql``): the :class:`~toolscout.storage.Store` contract (tool records, blobs, arrays,
health), so the MCP tool-list cache, the embedding cache and rug-pull pins work on it
unchanged, and on top tools grouped by *source* (an upstream server, a synced file):
:meth:`PostgresStore.write_source` replaces one source's tools in one transaction and notifies
every replica with a small payload (source and version, on channel :data:`CHANNEL`); replicas
receive it through :meth:`PostgresStore.listen` and then read only the rows changed since the
version they hold (:meth:`PostgresStore.read_source`). :class:`~toolscout.scaleout.replica.SharedCatalog`
keeps an in-memory catalog in step with it.

Schema ``toolscout`` (see :data:`MIGRATIONS`; applied versions are rows of
``toolscout.migrations``)::

    sources(source PK, kind, version, tool_count, updated_at, updated_by)
    tools(source FK, name, pos, changed_in, digest, version, schema, record,
          PRIMARY KEY (source, name), UNIQUE (name))
    blobs(ns, key, value BYTEA, is_text, meta, updated_at, PRIMARY KEY (ns, key))
    meta(key PK, value)

psycopg (``toolscout[postgres]``) is imported when a store is opened, never before.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Collection, Iterable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import MissingExtra, StoreError, StoreUnavailable
from ..model import Tool
from ._codec import Row, check_value, decode_arrays, encode_arrays, tool_row, tools_from_rows
from .base import Entry, SourceState, SourceWrite, StoreHealth
from .postgres_feed import PostgresFeed
from .postgres_schema import MIGRATIONS

if TYPE_CHECKING:
    import psycopg

__all__ = [
    "CHANNEL",
    "MIGRATIONS",
    "SCHEMA",
    "PostgresFeed",
    "PostgresStore",
    "SourceState",
    "SourceWrite",
    "describe_dsn",
    "is_postgres_url",
]

SCHEMA = "toolscout"
CHANNEL = "toolscout_catalog"
"""The NOTIFY channel: payload ``{"source": ..., "version": ...}``, at most a few hundred bytes."""
_MIGRATION_LOCK = 0x746F6F6C73636F75  # pg_advisory_xact_lock key: "toolscou"
_SOURCE_LOCK_SEED = 7041

_DOWN_HINT = (
    "PostgreSQL is unreachable or restarting. Searches keep answering from memory; writes are "
    "refused until it is back (replicas reconnect and resync on their own)."
)
_T = TypeVar("_T")
log = logging.getLogger("toolscout.scaleout.replica")


def is_postgres_url(spec: object) -> bool:
    """Whether a ``--store`` value names PostgreSQL (else it is an SQLite file path)."""
    return isinstance(spec, str) and spec.startswith(("postgresql://", "postgres://"))


def describe_dsn(dsn: str) -> str:
    """``host:port/dbname`` of a DSN, for messages: never the password."""
    try:
        from psycopg.conninfo import conninfo_to_dict  # the postgres extra

        parts = conninfo_to_dict(dsn)
    except Exception:
        return "postgresql (unparsable DSN)"
    host = str(parts.get("host") or "localhost")
    port = str(parts.get("port") or "5432")
    return f"{host}:{port}/{parts.get('dbname') or parts.get('user') or ''}"


def _psycopg() -> Any:
    try:
        import psycopg  # the postgres extra
    except ImportError as exc:
        raise MissingExtra("A PostgreSQL store", "postgres") from exc
    return psycopg


def _row_digest(row: Row) -> str:
    _pos, _name, version, schema, record = row
    return hashlib.sha256(f"{version}\x1f{schema}\x1f{record}".encode()).hexdigest()[:32]


class PostgresStore:
    """A toolscout store in a PostgreSQL database (``postgresql://user@host:port/dbname``).

    Thread-safe: calls share one connection, serialised by a lock. A connection the server
    closed (a restart) is replaced on the next call, which is retried once; every call is
    idempotent, so the retry never applies anything twice. When the server cannot be reached
    the call raises :class:`~toolscout.errors.StoreUnavailable` saying so.
    """

    engine = "postgresql"

    def __init__(self, dsn: str, *, connect_timeout: int = 3, lock_timeout: float = 15.0) -> None:
        self._pg = _psycopg()
        self.dsn = dsn
        self.where = describe_dsn(dsn)
        self.path = self.where  # what the SQLite store calls its location (kept for callers)
        self.connect_timeout = max(2, int(connect_timeout))  # libpq's floor
        self.lock_timeout = lock_timeout
        self.writer = f"{socket.gethostname()}:{os.getpid()}"
        self._lock = threading.RLock()
        self._conn: psycopg.Connection[Any] | None = None
        self.schema_version = self._run("migrate", self._migrate)

    # -- connections -----------------------------------------------------------------------
    def connect(self, **options: Any) -> psycopg.Connection[Any]:
        """A new autocommit connection with this store's settings (the replica's LISTEN uses one)."""
        try:
            return self._pg.connect(
                self.dsn,
                autocommit=True,
                connect_timeout=self.connect_timeout,
                application_name="toolscout",
                keepalives=1,
                keepalives_idle=10,
                keepalives_interval=3,
                keepalives_count=3,
                options=f"-c lock_timeout={int(self.lock_timeout * 1000)}",
                **options,
            )
        except self._pg.Error as exc:
            raise self._unreachable("connect", exc) from exc

    def _unreachable(self, action: str, exc: BaseException) -> StoreUnavailable:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return StoreUnavailable(
            f"PostgreSQL store {self.where}: {action} failed: {reason}", hint=_DOWN_HINT, path=self.where
        )

    def _run(self, action: str, fn: Callable[[psycopg.Connection[Any]], _T]) -> _T:
        """Run ``fn`` on the shared connection; errors become StoreError (or StoreUnavailable
        when the server cannot be reached) with a hint."""
        pg = self._pg
        with self._lock:
            for attempt in (0, 1):
                fresh = self._conn is None or self._conn.closed
                if fresh:
                    self._conn = self.connect()
                conn = self._conn
                assert conn is not None
                try:
                    return fn(conn)
                except (pg.OperationalError, pg.InterfaceError) as exc:
                    if not (conn.closed or conn.broken):  # a lock timeout, a cancelled statement
                        raise StoreError(
                            f"PostgreSQL store {self.where}: {action} failed: {exc}",
                            hint="Another writer may hold this source; retry when it has finished.",
                            path=self.where,
                        ) from exc
                    self._drop()
                    if not fresh and attempt == 0:
                        continue  # the server closed an idle connection: once more on a new one
                    raise self._unreachable(action, exc) from exc
                except pg.errors.UniqueViolation as exc:
                    raise self._collision(exc) from exc
                except pg.Error as exc:
                    raise StoreError(f"PostgreSQL store {self.where}: {action} failed: {exc}", path=self.where) from exc
            raise AssertionError("unreachable")  # pragma: no cover

    def _drop(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.close()

    def _collision(self, exc: Any) -> StoreError:
        detail = getattr(exc.diag, "message_detail", None) or str(exc)
        name = detail.split("=(", 1)[1].split(")", 1)[0] if "=(" in detail else "?"
        holder = "another source"
        try:
            with self._lock:
                conn = self._conn if self._conn is not None and not self._conn.closed else self.connect()
                self._conn = conn
                row = conn.execute("SELECT source FROM toolscout.tools WHERE name = %s", (name,)).fetchone()
            if row is not None:
                holder = f"source '{row[0]}'"
        except Exception:
            pass
        return StoreError(
            f"tool name '{name}' is already held by {holder} in {self.where}",
            hint="Load this source with a prefix (--prefix P) so its names do not collide.",
            path=self.where,
            name=name,
        )

    def close(self) -> None:
        with self._lock:
            self._drop()

    def __enter__(self) -> PostgresStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- migrations --------------------------------------------------------------------------
    def _migrate(self, conn: psycopg.Connection[Any]) -> int:
        """Apply the migrations this database lacks; replicas starting at once queue on an
        advisory lock, so each migration runs exactly once. Returns the schema version."""
        latest = MIGRATIONS[-1][0]
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            (exists,) = conn.execute("SELECT to_regclass('toolscout.migrations') IS NOT NULL").fetchone()
            if not exists:
                conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
                conn.execute(
                    "CREATE TABLE toolscout.migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                    " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())"
                )
            applied = {r[0] for r in conn.execute("SELECT version FROM toolscout.migrations")}
            newer = max(applied, default=0)
            if newer > latest:
                raise StoreError(
                    f"PostgreSQL store {self.where} has schema version {newer}; this toolscout knows up to {latest}",
                    hint="Upgrade toolscout on this replica (a newer one migrated the database).",
                    path=self.where,
                )
            for version, name, sql in MIGRATIONS:
                if version in applied:
                    continue
                conn.execute(sql)
                conn.execute("INSERT INTO toolscout.migrations (version, name) VALUES (%s, %s)", (version, name))
            return max(applied | {v for v, _, _ in MIGRATIONS})

    def migrations(self) -> list[tuple[int, str]]:
        """Applied migrations, oldest first."""
        sql = "SELECT version, name FROM toolscout.migrations ORDER BY version"
        return self._run("list migrations", lambda c: [tuple(r) for r in c.execute(sql)])  # type: ignore[misc]

    # -- sources -------------------------------------------------------------------------------
    def write_source(
        self,
        source: str,
        tools: Iterable[Tool],
        *,
        kind: str = "catalog",
        base: int | None = None,
        unchanged: Collection[str] = (),
        listed_at: int | None = None,
    ) -> SourceWrite:
        """Replace the tools of ``source`` with ``tools`` in one transaction and notify replicas.

        Writers of one source queue on an advisory lock; rows are keyed by (source, name) and
        names are unique across sources, so concurrent refreshes never duplicate a tool. An
        identical list writes nothing and notifies no one. A source held by another ``kind`` of
        writer (an MCP upstream vs a synced file) is refused rather than overwritten.

        A writer that holds the source at version ``base`` may name the tools it knows are
        unchanged since: if the source is still at ``base``, only the others are serialised
        and compared (a refresh that changed one tool of 10,000 costs one row, not 10,000).

        ``listed_at`` is the source's version when the writer began reading the tools (0: it
        had none). If another writer has changed the source since, nothing is written and the
        answer is ``stale``: two replicas listing one upstream around a change would otherwise
        let the one that listed first, and wrote last, put the old list back.
        """
        batch: dict[str, tuple[int, Tool]] = {}
        for pos, tool in enumerate(tools):
            batch[tool.name] = (pos, tool)
        skip = frozenset(unchanged) if base is not None else frozenset()
        rows = {n: tool_row(pos, t) for n, (pos, t) in batch.items() if n not in skip}
        return self._run(
            f"write source '{source}'", lambda c: self._write_source(c, source, kind, batch, rows, base, listed_at)
        )

    def _write_source(
        self,
        conn: psycopg.Connection[Any],
        source: str,
        kind: str,
        batch: Mapping[str, tuple[int, Tool]],
        rows: dict[str, Row],
        base: int | None = None,
        listed_at: int | None = None,
    ) -> SourceWrite:
        """One source's write inside a transaction; ``rows`` holds the serialised tools that may
        differ (all of them unless the source is still at ``base``)."""
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, %s))", (source, _SOURCE_LOCK_SEED))
            head = conn.execute("SELECT kind, version FROM toolscout.sources WHERE source = %s", (source,)).fetchone()
            if head is not None and head[0] != kind:
                raise StoreError(
                    f"source '{source}' in {self.where} is held by a {head[0]} writer, not {kind}",
                    hint="Pick another source id or prefix for this one.",
                    path=self.where,
                )
            if listed_at is not None and head is not None and head[1] > listed_at:
                return SourceWrite(source, head[1], stale=True)
            if head is None or head[1] != base:  # another writer moved it: compare every tool
                for name, (pos, tool) in batch.items():
                    if name not in rows:
                        rows[name] = tool_row(pos, tool)
            present = {r[0] for r in conn.execute("SELECT name FROM toolscout.tools WHERE source = %s", (source,))}
            digests = {name: _row_digest(row) for name, row in rows.items()}
            old = dict(
                conn.execute(
                    "SELECT name, digest FROM toolscout.tools WHERE source = %s AND name = ANY(%s)",
                    (source, [n for n in rows if n in present]),
                ).fetchall()
            )
            removed = tuple(sorted(present - set(batch)))
            added = tuple(n for n in rows if n not in present)
            changed = tuple(n for n in rows if n in old and old[n] != digests[n])
            if head is not None and not (added or changed or removed):
                return SourceWrite(source, head[1])
            (version,) = conn.execute("SELECT nextval('toolscout.versions')").fetchone()
            conn.execute(
                "INSERT INTO toolscout.sources (source, kind, version, tool_count, updated_at, updated_by)"
                " VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (source) DO UPDATE SET version = EXCLUDED.version,"
                " tool_count = EXCLUDED.tool_count, updated_at = EXCLUDED.updated_at, updated_by = EXCLUDED.updated_by",
                (source, kind, version, len(batch), time.time(), self.writer),
            )
            if removed:
                conn.execute("DELETE FROM toolscout.tools WHERE source = %s AND name = ANY(%s)", (source, list(removed)))
            fresh = [(source, *rows[n], version, digests[n]) for n in (*added, *changed)]
            if fresh:
                with conn.cursor() as cur:
                    cur.executemany(
                        "INSERT INTO toolscout.tools (source, pos, name, version, schema, record, changed_in, digest)"
                        " VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (source, name) DO UPDATE SET"
                        " pos = EXCLUDED.pos, version = EXCLUDED.version, schema = EXCLUDED.schema,"
                        " record = EXCLUDED.record, changed_in = EXCLUDED.changed_in, digest = EXCLUDED.digest",
                        fresh,
                    )
            self._notify(conn, source, version, base=head[1] if head is not None else None, members=bool(added or removed))
            return SourceWrite(source, version, added, changed, removed)

    @staticmethod
    def _notify(
        conn: psycopg.Connection[Any], source: str, version: int, *, base: int | None = None, members: bool = True
    ) -> None:
        """Queue the notification (delivered at commit). ``base`` (the version this write
        replaced) and ``members`` (whether names came or went) let a replica holding ``base``
        skip re-reading the source's names when only tools' contents changed."""
        note: dict[str, Any] = {"source": source, "version": version}
        if base is not None:
            note.update(base=base, members=members)
        conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, json.dumps(note)))

    def delete_source(self, source: str) -> int | None:
        """Drop a source and its tools; returns the version of the deletion (None if absent)."""

        def run(conn: psycopg.Connection[Any]) -> int | None:
            with conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, %s))", (source, _SOURCE_LOCK_SEED))
                if conn.execute("DELETE FROM toolscout.sources WHERE source = %s", (source,)).rowcount == 0:
                    return None
                (version,) = conn.execute("SELECT nextval('toolscout.versions')").fetchone()
                self._notify(conn, source, version)
                return int(version)

        return self._run(f"delete source '{source}'", run)

    def source_versions(self) -> dict[str, int]:
        """Every source with its current version."""
        sql = "SELECT source, version FROM toolscout.sources"
        return self._run("list sources", lambda c: {s: int(v) for s, v in c.execute(sql)})

    def sources(self) -> list[dict[str, Any]]:
        """Every source: kind, version, tool count, when and by whom it was last written."""
        sql = "SELECT source, kind, version, tool_count, updated_at, updated_by FROM toolscout.sources ORDER BY source"
        keys = ("source", "kind", "version", "tool_count", "updated_at", "updated_by")
        return self._run("list sources", lambda c: [dict(zip(keys, r, strict=True)) for r in c.execute(sql)])

    def read_source(self, source: str, since: int = 0, *, same_names_at: int | None = None) -> SourceState | None:
        """``source`` as now stored: all its names in order, and the tools written after version
        ``since`` (a replica holding ``since`` reads only what changed). ``None``: deleted.

        ``same_names_at``: a version whose write added and removed nothing (its notification
        says so). If the source is still at it, the names are not read (``names`` is ``None``:
        the same as at ``since``), which saves reading every name of a large source."""

        def run(conn: psycopg.Connection[Any]) -> SourceState | None:
            with conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                head = conn.execute("SELECT version, kind FROM toolscout.sources WHERE source = %s", (source,)).fetchone()
                if head is None:
                    return None
                names = None if same_names_at is not None and int(head[0]) == same_names_at else tuple(
                    r[0] for r in conn.execute("SELECT name FROM toolscout.tools WHERE source = %s ORDER BY pos, name", (source,))
                )
                rows = conn.execute(
                    "SELECT version, schema, record FROM toolscout.tools WHERE source = %s AND changed_in > %s"
                    " ORDER BY pos, name",
                    (source, since),
                ).fetchall()
            tools = tools_from_rows(rows, self.where)
            return SourceState(source, int(head[0]), since, names, {t.name: t for t in tools}, head[1])

        return self._run(f"read source '{source}'", run)

    def read_all(self) -> list[SourceState]:
        """Every source whole, from one consistent snapshot (a replica's first load)."""

        def run(conn: psycopg.Connection[Any]) -> list[SourceState]:
            with conn.transaction():
                conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
                heads = conn.execute("SELECT source, version, kind FROM toolscout.sources ORDER BY source").fetchall()
                rows = conn.execute(
                    "SELECT source, name, version, schema, record FROM toolscout.tools ORDER BY source, pos, name"
                ).fetchall()
            tools = tools_from_rows([r[2:] for r in rows], self.where)
            grouped: dict[str, dict[str, Tool]] = {h[0]: {} for h in heads}
            for row, tool in zip(rows, tools, strict=True):
                grouped.setdefault(row[0], {})[tool.name] = tool
            return [SourceState(s, int(v), 0, tuple(grouped[s]), grouped[s], k) for s, v, k in heads]

        return self._run("read catalog", run)

    # -- the Store interface: tools ------------------------------------------------------------
    def save_tools(self, tools: Iterable[Tool]) -> int:
        """Replace every stored tool (grouped into sources by ``source_id``) in one transaction."""
        groups: dict[str, dict[str, tuple[int, Tool]]] = {}
        for pos, tool in enumerate(tools):
            groups.setdefault(tool.source_id or "", {})[tool.name] = (pos, tool)

        def run(conn: psycopg.Connection[Any]) -> int:
            with conn.transaction():
                stale = [s for (s,) in conn.execute("SELECT source FROM toolscout.sources") if s not in groups]
                for source in stale:
                    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, %s))", (source, _SOURCE_LOCK_SEED))
                    conn.execute("DELETE FROM toolscout.sources WHERE source = %s", (source,))
                    (version,) = conn.execute("SELECT nextval('toolscout.versions')").fetchone()
                    self._notify(conn, source, version)
                for source, batch in groups.items():
                    rows = {n: tool_row(pos, t) for n, (pos, t) in batch.items()}
                    self._write_source(conn, source, "catalog", batch, rows)  # a savepoint inside
                conn.execute(
                    "INSERT INTO toolscout.meta VALUES ('saved_at', %s) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value",
                    (repr(time.time()),),
                )
            return sum(len(r) for r in groups.values())

        return self._run("save tools", run)

    def load_tools(self) -> list[Tool]:
        """Every stored tool, by source then position."""
        return [t for state in self.read_all() for t in state.changed.values()]

    def tool_names(self) -> list[str]:
        sql = "SELECT name FROM toolscout.tools ORDER BY source, pos, name"
        return self._run("list tools", lambda c: [r[0] for r in c.execute(sql)])

    def info(self) -> dict[str, str]:
        """Schema version, tool and source counts, last whole-catalog save."""

        def run(conn: psycopg.Connection[Any]) -> dict[str, str]:
            out = dict(conn.execute("SELECT key, value FROM toolscout.meta").fetchall())
            (tools,) = conn.execute("SELECT count(*) FROM toolscout.tools").fetchone()
            (sources,) = conn.execute("SELECT count(*) FROM toolscout.sources").fetchone()
            return {**out, "schema_version": str(self.schema_version), "tool_count": str(tools), "source_count": str(sources)}

        return self._run("read meta", run)

    # -- the Store interface: blob namespaces ------------------------------------------------
    def put(self, ns: str, key: str, value: bytes | str, meta: dict[str, Any] | None = None) -> None:
        """Store ``value`` (bytes or text, returned as given) under ``(ns, key)``."""
        self.put_many(ns, [(key, value, meta)])

    def put_many(self, ns: str, items: Iterable[tuple[str, bytes | str, dict[str, Any] | None]]) -> int:
        """Store many values in one transaction."""
        now = time.time()
        rows = []
        for key, value, meta in items:
            value = check_value(value)
            is_text = isinstance(value, str)
            data = value.encode("utf-8", "surrogatepass") if isinstance(value, str) else value
            rows.append((ns, key, data, is_text, json.dumps(meta or {}), now))

        def run(conn: psycopg.Connection[Any]) -> int:
            with conn.transaction(), conn.cursor() as cur:
                cur.executemany(
                    "INSERT INTO toolscout.blobs VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (ns, key) DO UPDATE SET"
                    " value = EXCLUDED.value, is_text = EXCLUDED.is_text, meta = EXCLUDED.meta,"
                    " updated_at = EXCLUDED.updated_at",
                    rows,
                )
            return len(rows)

        return self._run(f"put into '{ns}'", run)

    def get(self, ns: str, key: str) -> Entry | None:
        sql = "SELECT value, is_text, meta, updated_at FROM toolscout.blobs WHERE ns = %s AND key = %s"
        row = self._run(f"get from '{ns}'", lambda c: c.execute(sql, (ns, key)).fetchone())
        if row is None:
            return None
        data, is_text, meta_text, updated_at = row
        value: bytes | str = bytes(data).decode("utf-8", "surrogatepass") if is_text else bytes(data)
        try:
            meta = json.loads(meta_text)
        except ValueError as exc:
            raise StoreError(
                f"PostgreSQL store {self.where}: metadata of '{ns}/{key}' is damaged: {exc}",
                hint="Delete the entry (Store.delete) and write it again.",
                path=self.where,
            ) from exc
        return Entry(value, meta if isinstance(meta, dict) else {}, float(updated_at))

    def delete(self, ns: str, key: str) -> bool:
        sql = "DELETE FROM toolscout.blobs WHERE ns = %s AND key = %s"
        return self._run(f"delete from '{ns}'", lambda c: c.execute(sql, (ns, key)).rowcount > 0)

    def clear(self, ns: str) -> int:
        """Drop a whole namespace; returns how many entries went."""
        return self._run(f"clear '{ns}'", lambda c: c.execute("DELETE FROM toolscout.blobs WHERE ns = %s", (ns,)).rowcount)

    def keys(self, ns: str) -> list[str]:
        sql = "SELECT key FROM toolscout.blobs WHERE ns = %s ORDER BY key"
        return self._run(f"list '{ns}'", lambda c: [r[0] for r in c.execute(sql, (ns,))])

    # -- the Store interface: arrays and health -----------------------------------------------
    def put_arrays(self, ns: str, key: str, arrays: Mapping[str, Any], meta: dict[str, Any] | None = None) -> None:
        """Named numpy arrays as one ``.npz`` value, exactly as in the SQLite store."""
        self.put(ns, key, encode_arrays(arrays, f"{ns}/{key}"), meta)

    def get_arrays(self, ns: str, key: str) -> dict[str, Any] | None:
        """The arrays stored by :meth:`put_arrays`, or ``None`` if absent or unreadable."""
        entry = self.get(ns, key)
        return decode_arrays(entry.value) if entry is not None else None

    def health(self) -> StoreHealth:
        """Whether the database answers a query now (a new connection if the last one
        dropped); never raises."""
        try:
            self._run("check", lambda c: c.execute("SELECT 1").fetchone())
        except (StoreError, StoreUnavailable) as exc:
            return StoreHealth(self.engine, self.where, False, exc.message)
        return StoreHealth(self.engine, self.where, True)

    # -- change events ---------------------------------------------------------------------------
    def listen(self) -> PostgresFeed:
        """A new connection listening on :data:`CHANNEL`: every source write, from any replica."""
        conn = self.connect()
        try:
            conn.execute(f"LISTEN {CHANNEL}")
        except self._pg.Error as exc:
            with contextlib.suppress(Exception):
                conn.close()
            raise self._unreachable("listen", exc) from exc
        return PostgresFeed(conn, self._pg.Error, self._unreachable)
