"""Usage events written to the store off the request path.

Why: a learner records an event on every search and every call, and an SQLite store commits
each write (about 0.1 ms with WAL and ``synchronous=NORMAL``, more on a busy disk): that cost
sat inside every tool call. Here a call only queues the event's JSON text; one background
thread writes what is queued in one batch (``put_many``: one transaction).

What a stop loses. :meth:`EventWriter.close` (and :meth:`EventWriter.flush`) write everything
queued before they return, and an interpreter that exits normally runs ``close`` (``atexit``),
so an orderly stop loses nothing. A crash (the process killed, the machine down) loses what
was queued and not yet written: the events of the last moments, at most ``max_queued`` of them,
usually the few since the writer last woke. Usage is evidence for ranking, not a record anyone
relies on (the audit log is that), so that loss is the price of not paying a disk write per
call.

The queue is bounded: when ``max_queued`` events wait (a store slower than the traffic), the
caller writes the batch itself, so memory stays bounded and nothing is dropped. A key queued
twice (a call updating its search's event) is written once, with its latest text.
"""

from __future__ import annotations

import atexit
import contextlib
import threading
import weakref
from collections import OrderedDict
from typing import Any

from ..storage import BlobStore

__all__ = ["EventWriter"]


class EventWriter:
    """Queues ``(key, text)`` writes to one namespace of ``store``; a daemon thread writes them."""

    def __init__(self, store: BlobStore, ns: str, *, max_queued: int = 10_000) -> None:
        self.store = store
        self.ns = ns
        self.max_queued = max(1, max_queued)
        self._pending: OrderedDict[str, str] = OrderedDict()
        self._lock = threading.Lock()  # guards _pending and _closed
        self._write = threading.Lock()  # one batch at a time: a later text never lands before an earlier one
        self._wake = threading.Condition(self._lock)
        self._closed = False
        self._thread: threading.Thread | None = None
        ref = weakref.ref(self)
        self._exit_hook = lambda: (w := ref()) is not None and w.close()
        atexit.register(self._exit_hook)

    def put(self, key: str, text: str) -> None:
        """Queue ``text`` under ``key`` (replacing a queued text of the same key)."""
        with self._lock:
            inline = self._closed  # a late event after close: written at once, never lost
            if not inline:
                self._pending[key] = text
                self._pending.move_to_end(key)
                inline = len(self._pending) >= self.max_queued
                if not inline:
                    self._start()
                    self._wake.notify()
        if not inline:
            return
        if self._closed:
            with self._write:
                self._write_batch([(key, text)])
        else:
            self.flush()

    def flush(self) -> None:
        """Write everything queued now, before returning."""
        with self._write:
            with self._lock:
                batch = list(self._pending.items())
                self._pending.clear()
            self._write_batch(batch)

    def close(self) -> None:
        """Write what is queued and stop the thread (later events are written inline)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._wake.notify_all()
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join()
        self.flush()
        with contextlib.suppress(Exception):
            atexit.unregister(self._exit_hook)

    @property
    def queued(self) -> int:
        """Events waiting to be written."""
        return len(self._pending)

    def _start(self) -> None:
        # under self._lock
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="toolscout-usage-writer", daemon=True)
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._lock:
                while not self._pending and not self._closed:
                    self._wake.wait()
                if self._closed:
                    return  # close() flushes the rest
            self.flush()

    def _write_batch(self, batch: list[tuple[str, str]]) -> None:
        if not batch:
            return
        # usage is a courtesy: a store problem never fails a search or a call
        with contextlib.suppress(Exception):
            put_many: Any = getattr(self.store, "put_many", None)
            if put_many is not None:
                put_many(self.ns, [(key, text, None) for key, text in batch])
                return
            for key, text in batch:
                self.store.put(self.ns, key, text)
