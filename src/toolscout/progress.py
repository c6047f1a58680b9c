"""Progress of long work (embedding a catalog, an evaluation, a catalog sync), reported to
whoever listens, without the library importing a terminal toolkit.

Library code wraps a long loop in :func:`step` and calls ``advance(n)``; that costs a function
call when nobody listens. The listener is one :data:`Reporter` for the process: by default a
rich bar on stderr, only when stderr is a terminal, shown only once a step has run for about
a second (quick work stays silent), removed when it ends. :func:`set_reporter` installs
another (a log line, a web socket) or ``None`` for silence.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol

__all__ = ["DELAY_S", "Reporter", "Task", "set_reporter", "step"]

DELAY_S = 1.0
"""A step shows once it has run this long: a bar that flashes for 0.2 s is noise."""


class Task(Protocol):
    def advance(self, n: int) -> None: ...
    def close(self) -> None: ...


Reporter = Callable[[str, "int | None"], Task]
"""``reporter(label, total)`` starts a task (``total`` None: unknown) and returns it."""

_DEFAULT = object()
_reporter: Any = _DEFAULT


def set_reporter(reporter: Reporter | None) -> Reporter | None:
    """Install ``reporter`` for every later :func:`step` (``None``: report nothing); returns
    the previous one."""
    global _reporter
    previous, _reporter = _reporter, reporter
    return None if previous is _DEFAULT else previous


def _current() -> Reporter | None:
    if _reporter is _DEFAULT:
        return _terminal_bar if sys.stderr.isatty() else None
    return _reporter


@contextmanager
def step(label: str, total: int | None = None) -> Iterator[Callable[[int], None]]:
    """``with step("embedding 2,000 tools", total=2000) as advance: ... advance(n)``."""
    reporter = _current()
    if reporter is None:
        yield _nothing
        return
    task = reporter(label, total)
    try:
        yield task.advance
    finally:
        task.close()


def _nothing(n: int) -> None:
    return None


class _Bars:
    """The default reporter's state: one rich Progress on stderr for every open task,
    started when the first task has run :data:`DELAY_S`, stopped when the last closes."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.progress: Any = None
        self.open = 0


_bars = _Bars()


class _BarTask:
    def __init__(self, label: str, total: int | None) -> None:
        self.label, self.total = label, total
        self.started = time.monotonic()
        self.done = 0
        self.id: Any = None
        with _bars.lock:
            _bars.open += 1

    def advance(self, n: int) -> None:
        self.done += n
        if self.id is None and time.monotonic() - self.started < DELAY_S:
            return
        with _bars.lock:
            if _bars.progress is None:
                from rich.console import (
                    Console,  # a terminal only; rich stays off the library's import path
                )
                from rich.progress import Progress

                _bars.progress = Progress(console=Console(stderr=True), transient=True)
                _bars.progress.start()
            if self.id is None:
                self.id = _bars.progress.add_task(self.label, total=self.total, completed=self.done)
            else:
                _bars.progress.update(self.id, completed=self.done)

    def close(self) -> None:
        with _bars.lock:
            _bars.open -= 1
            if _bars.progress is not None and self.id is not None:
                _bars.progress.remove_task(self.id)
            if _bars.progress is not None and _bars.open == 0:
                _bars.progress.stop()
                _bars.progress = None


def _terminal_bar(label: str, total: int | None) -> Task:
    return _BarTask(label, total)
