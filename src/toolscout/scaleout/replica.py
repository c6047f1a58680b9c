"""A catalog shared by replicas through PostgreSQL, kept current by LISTEN/NOTIFY.

Why: replicas behind a load balancer must answer from one catalog, yet each keeps its index in
memory (the fast path; a search never waits on the database). So every change is written once,
in a transaction, and each replica's :class:`SharedCatalog` applies it to its own memory:

* :meth:`SharedCatalog.replace_source` (what the MCP aggregator calls after a ``tools/list``)
  writes the source's tools to the :class:`~toolscout.storage.SharedStore` (PostgreSQL), then
  applies them locally. The write emits a change event (:class:`~toolscout.storage.SourceChange`).
* A listener thread holds the store's change feed (:meth:`SharedStore.listen`: a LISTEN
  connection on PostgreSQL). On an event it reads the rows of that
  source changed since the version this replica holds and applies them with
  :meth:`Catalog.replace_source`, so the index updates incrementally.
* If the connection drops (PostgreSQL restarted), the listener reconnects with backoff and
  resyncs every source whose version moved. Meanwhile searches answer from memory and writes
  raise :class:`~toolscout.errors.StoreUnavailable` naming the cause.

:func:`sync_source` loads a declaration file, an OpenAPI document or a directory holding
``tools.jsonl`` into the shared catalog as one source (``toolscout catalog sync``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..catalog import Catalog
from ..catalog_base import CatalogChange, Handler, ListingSuperseded
from ..errors import ConfigError, NameCollision
from ..model import Tool
from ..progress import step
from ..sources.files import load_source
from ..storage import ChangeFeed, SharedStore, SourceState, SourceWrite, open_store

__all__ = ["SharedCatalog", "load_source", "sync_source"]

log = logging.getLogger("toolscout.scaleout.replica")

LISTEN_POLL = 0.25
"""Seconds the listener waits for a notification before checking whether it should stop."""
RETRY_DELAYS = (0.1, 0.25, 0.5, 1.0, 2.0)
"""Reconnect delays after PostgreSQL drops the LISTEN connection (the last one repeats)."""


class SharedCatalog(Catalog):
    """A :class:`Catalog` whose sources live in PostgreSQL and follow every replica's writes.

    ``store`` is a :class:`~toolscout.storage.SharedStore` (PostgreSQL) or its URL. ``kind`` labels this writer's sources
    (``"mcp"`` for a gateway's upstreams) so a synced file can never overwrite them.
    ``handler_factory(tool)`` attaches handlers to tools that arrive from other replicas (the
    gateway passes its aggregator's, so a tool refreshed elsewhere is callable here too).

    Only sources are shared: tools added with :meth:`add`/:meth:`extend` stay local.
    """

    def __init__(
        self,
        store: SharedStore | str,
        *,
        kind: str = "catalog",
        handler_factory: Callable[[Tool], Handler | None] | None = None,
        listen: bool = True,
    ) -> None:
        super().__init__()
        self.shared = open_shared(store)
        self.store = self.shared  # the same contract: caches, index snapshots
        self.kind = kind
        self.handler_factory = handler_factory
        self.versions: dict[str, int] = {}
        """The version of each shared source this replica holds."""
        self.connected = False
        self.last_error: str | None = None
        self.applied: list[tuple[str, int, float]] = []
        """Recent ``(source, version, time.time())`` applied from other writers (last 100)."""
        self._apply_lock = threading.RLock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pending: dict[str, int] = {}
        self._hints: dict[str, tuple[int, int]] = {}  # source -> (base, version) of a names-only-same write
        self._pending_lock = threading.Lock()
        self._after_apply: list[Callable[[], None]] = []
        self._resync = False
        self._stop = threading.Event()
        self._reconnect_listeners: list[Callable[[], None]] = []
        self._listener: threading.Thread | None = None
        self._changed = threading.Condition()  # notified on every apply and connection change
        for state in self.shared.read_all():
            self._apply_state(state)
        if listen:
            self.start()

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        """Start the listener thread (the constructor does, unless ``listen=False``)."""
        if self._listener is None or not self._listener.is_alive():
            self._stop.clear()
            self._listener = threading.Thread(target=self._listen, name="toolscout-listen", daemon=True)
            self._listener.start()

    def bind_loop(self, loop: asyncio.AbstractEventLoop) -> None:
        """Apply remote changes on ``loop`` (the server's) instead of the listener thread, so
        catalog listeners (the MCP server's list_changed) run where they expect to."""
        self._loop = loop

    def after_apply(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` on the listener thread once a change has been applied (another
        replica's, or this one's own write as its notification comes back). The gateway
        registers its index's ``refresh``: the index is rebuilt there, off the event loop,
        and swapped in whole, so the first search after a change does not pay for it."""
        self._after_apply.append(callback)

    def on_reconnected(self, callback: Callable[[], None]) -> None:
        """Call ``callback`` (on the bound loop, if any) after the listener reconnects and resyncs."""
        self._reconnect_listeners.append(callback)

    def close(self, timeout: float = 5.0) -> None:
        """Stop listening and close the store's connection."""
        self._stop.set()
        if self._listener is not None and self._listener is not threading.current_thread():
            self._listener.join(timeout)
        self.shared.close()

    def __enter__(self) -> SharedCatalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def wait_until(self, predicate: Callable[[SharedCatalog], bool], timeout: float) -> bool:
        """Block until ``predicate(self)`` holds (checked after every applied change and
        connection change) or ``timeout`` s pass; returns whether it held. For readiness
        probes and tests; never call it on the loop this catalog is bound to."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while not predicate(self):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._changed.wait(remaining)
        return True

    def _signal(self) -> None:
        with self._changed:
            self._changed.notify_all()

    def status(self) -> dict[str, Any]:
        """Whether the change feed is up, the last error, and the sources held (what
        readiness reports; ``engine`` is the store's own name for itself)."""
        return {
            "engine": self.shared.engine,
            "store": self.shared.where,
            "connected": self.connected,
            "last_error": self.last_error,
            "sources": dict(self.versions),
            "tools": len(self),
        }

    # -- writing: once to PostgreSQL, then to memory ---------------------------------------
    def listing_mark(self, source_id: str) -> int | None:
        """The version of ``source_id`` this replica holds (0: none): a listing that starts now
        is newer than it, and a write from another replica after it refuses this listing."""
        with self._apply_lock:
            return self.versions.get(source_id, 0)

    def replace_source(
        self,
        source_id: str,
        tools: Iterable[Tool],
        *,
        handlers: Mapping[str, Handler | None] | None = None,
        listed_at: int | None = None,
    ) -> CatalogChange:
        """Write ``source_id``'s tools to the shared store (every replica gets them), then here.

        Raises :class:`StoreUnavailable` if PostgreSQL cannot take the write; memory is then
        untouched, so this replica never serves what the others do not have. Raises
        :class:`ListingSuperseded` if ``listed_at`` is given and another writer changed the
        source after it: nothing is written, and the other write reaches memory as usual.
        """
        batch = [t if t.source_id == source_id else t.replace(source_id=source_id) for t in tools]
        unchanged: list[str] = []
        with self._apply_lock:
            base = self.versions.get(source_id)
            for tool in batch:  # refuse before writing anything: memory and database stay equal
                other = self.get(tool.name)
                if other is None:
                    continue
                if other.source_id != source_id:
                    raise NameCollision(
                        f"tool name '{tool.name}' from {tool.origin} is already taken by {other.origin}",
                        name=tool.name,
                        origins=[other.origin, tool.origin],
                    )
                if other is tool or other == tool:  # as held at `base`: no need to serialise it
                    unchanged.append(tool.name)
        written = self.shared.write_source(
            source_id, batch, kind=self.kind, base=base, unchanged=unchanged, listed_at=listed_at
        )
        if written.stale:
            raise ListingSuperseded(source_id, written.version)
        with self._apply_lock:
            if self.versions.get(source_id, 0) > written.version:
                return CatalogChange()  # a newer write from another replica is already applied
            change = super().replace_source(source_id, batch, handlers=handlers)
            self.versions[source_id] = written.version
        self._signal()
        return change

    def remove_source(self, source_id: str) -> None:
        """Delete a source from the shared store and from memory."""
        version = self.shared.delete_source(source_id)
        with self._apply_lock:
            if version is not None and self.versions.get(source_id, 0) > version:
                return
            self._drop_local(source_id)

    def _drop_local(self, source_id: str) -> None:
        gone = [t.name for t in self if t.source_id == source_id]
        self.versions.pop(source_id, None)
        if gone:
            self.remove(*gone)

    # -- applying what other writers did ---------------------------------------------------
    def _apply_state(self, state: SourceState) -> None:
        """Bring one source to ``state`` (only if newer than what is held)."""
        with self._apply_lock:
            held = self.versions.get(state.source, 0)
            if held >= state.version:
                return
            if state.since > held:  # memory moved back since the read: read it whole
                self._queue(state.source, state.version)
                return
            if state.names is None:  # the same names as held: only contents changed
                if state.since != held or not self._apply_contents(state):
                    self.versions[state.source] = 0  # not what the read assumed: reread whole
                    self._queue(state.source, state.version)
                    return
                self._applied(state)
                return
            tools: list[Tool] = []
            for name in state.names:
                tool = state.changed.get(name)
                if tool is None:
                    tool = self.get(name)
                    if tool is None or tool.source_id != state.source:
                        self.versions[state.source] = 0  # not what we thought we held: reread whole
                        self._queue(state.source, state.version)
                        return
                tools.append(tool)
            for tool in tools:  # the database's unique names are the truth: drop stale holders
                other = self.get(tool.name)
                if other is not None and other.source_id != state.source:
                    self.versions[other.source_id or ""] = 0
                    self._queue(other.source_id or "", 1)
                    self.remove(tool.name)
            factory = self.handler_factory
            handlers = {t.name: factory(t) for t in state.changed.values()} if factory else None
            super().replace_source(state.source, tools, handlers=handlers)
            self._applied(state)

    def _applied(self, state: SourceState) -> None:
        with self._apply_lock:
            self.versions[state.source] = state.version
            self.applied.append((state.source, state.version, time.time()))
            del self.applied[:-100]
        self._signal()

    def _apply_contents(self, state: SourceState) -> bool:
        """Replace the changed tools of a source whose names did not change, touching nothing
        else (no pass over the whole source); False if a changed tool is not the source's."""
        for name in state.changed:
            held = self.get(name)
            if held is None or held.source_id != state.source:
                return False
        factory = self.handler_factory
        handlers = {t.name: factory(t) for t in state.changed.values()} if factory else None
        if state.changed:
            self.extend(state.changed.values(), handlers=handlers, replace=True)
        return True

    def _apply_deleted(self, source: str) -> None:
        with self._apply_lock:
            if source in self.versions:
                self._drop_local(source)
        self._signal()

    def _dispatch(self, fn: Callable[..., None], *args: Any, wait: bool = False) -> None:
        """Run ``fn`` on the bound loop (if it is running), else here under the apply lock.
        ``wait``: return once it has run (or this catalog is closing), so what follows on
        the listener thread (the index refresh) sees the change."""
        loop = self._loop
        if loop is not None and not loop.is_closed():
            done = threading.Event()

            def run() -> None:
                try:
                    fn(*args)
                finally:
                    done.set()

            try:
                loop.call_soon_threadsafe(run)
            except RuntimeError:  # the loop closed meanwhile
                pass
            else:
                while wait and not done.wait(LISTEN_POLL):
                    if self._stop.is_set() or loop.is_closed():
                        return
                return
        fn(*args)

    def _warm(self) -> None:
        """Run the after-apply callbacks (index refreshes) here, on the listener thread."""
        for callback in list(self._after_apply):
            try:
                callback()
            except Exception:  # a refresh that fails is retried by the next search
                log.exception("shared catalog: after-apply callback failed")

    # -- the listener ----------------------------------------------------------------------
    def _queue(self, source: str, version: int) -> None:
        with self._pending_lock:
            self._pending[source] = max(version, self._pending.get(source, 0))

    def _listen(self) -> None:
        attempt = 0
        while not self._stop.is_set():
            feed = None
            try:
                feed = self.shared.listen()
                self._resync = True  # anything committed while we were not listening
                self._drain(feed)
            except Exception as exc:  # StoreUnavailable, driver errors: the server went away
                if self._stop.is_set():
                    break
                reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
                if self.connected or self.last_error != reason:
                    log.warning("shared catalog %s: listener disconnected: %s", self.shared.where, reason)
                self.connected = False
                self.last_error = reason
                self._signal()
                delay = RETRY_DELAYS[min(attempt, len(RETRY_DELAYS) - 1)]
                attempt += 1
                self._stop.wait(delay)
                continue
            finally:
                if feed is not None:
                    with contextlib.suppress(Exception):
                        feed.close()
            attempt = 0

    def _drain(self, feed: ChangeFeed) -> None:
        """Serve change events until stopped; raises when the feed's connection fails."""
        while not self._stop.is_set():
            if self._resync:
                self._full_resync()
                self._resync = False
                if not self.connected:
                    self.connected, self.last_error = True, None
                    self._signal()
                    log.info("shared catalog %s: listening", self.shared.where)
                    for callback in list(self._reconnect_listeners):
                        self._dispatch(callback)
            if self._process_pending():
                self._warm()
            for change in feed.poll(LISTEN_POLL):
                if change.members is False and change.base is not None:
                    with self._pending_lock:
                        self._hints[change.source] = (change.base, change.version)
                self._queue(change.source, change.version)

    def _full_resync(self) -> None:
        current = self.shared.source_versions()
        for source, version in current.items():
            if self.versions.get(source, 0) < version:
                self._queue(source, version)
        for source in list(self.versions):
            if source not in current:
                self._dispatch(self._apply_deleted, source)

    def _process_pending(self) -> bool:
        """Read and apply what the queued notifications announced; whether any arrived (then
        the after-apply callbacks run: a no-op for an index already current)."""
        with self._pending_lock:
            pending, self._pending = self._pending, {}
            hints, self._hints = self._hints, {}
        for source, version in pending.items():
            held = self.versions.get(source, 0)
            if held >= version:
                continue
            # One write from what we hold, adding and removing nothing: read just its rows.
            same = version if hints.get(source) == (held, version) and held > 0 else None
            state = self.shared.read_source(source, since=held, same_names_at=same)
            if state is None:
                self._dispatch(self._apply_deleted, source, wait=True)
            else:
                self._dispatch(self._apply_state, state, wait=True)
        return bool(pending)


def open_shared(store: SharedStore | str) -> SharedStore:
    """``store`` itself, or the store its URL names, which must be one replicas can share."""
    if not isinstance(store, str):
        return store
    opened = open_store(store)
    if not isinstance(opened, SharedStore):
        opened.close()
        raise ConfigError(
            f"{opened.where} ({opened.engine}) cannot be shared by replicas",
            hint="Use a shared store: postgresql://user@host:port/dbname.",
        )
    return opened


# -- catalog sync ---------------------------------------------------------------------------
def sync_source(
    path: str | Path,
    store: SharedStore | str,
    *,
    prefix: str | None = None,
    source_id: str | None = None,
    base_url: str | None = None,
    skip_invalid: bool = False,
) -> SourceWrite:
    """Replace what one source held in the shared catalog with the tools at ``path``, in one
    transaction; every replica applies the difference within a second."""
    with step(f"catalog sync {path}: reading, then writing in one transaction", total=2) as advance:
        sid, tools = load_source(path, prefix=prefix, source_id=source_id, base_url=base_url, skip_invalid=skip_invalid)
        advance(1)
        own = isinstance(store, str)
        pg = open_shared(store)
        try:
            return pg.write_source(sid, tools, kind="sync")
        finally:
            advance(1)
            if own:
                pg.close()
