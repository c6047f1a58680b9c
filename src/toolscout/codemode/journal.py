"""What a code-mode program's calls returned, so a retried program does not run them twice.

A client that speaks a stateless protocol revision answers an approval by sending its
request again (a multi-round-trip request): for ``execute`` that means the program runs
again from the start. Without a record, every call it made before the approval would run
a second time (an issue created twice). The journal is that record: each finished call in
order (name, a digest of its arguments, whether it succeeded, its value or error). On the
retry, the program's calls are answered from the journal while they match it call for
call, and run for real from the first one that does not (the approved call, or a program
that took another path, after which the rest of the record no longer applies).

It travels inside the ``requestState`` the gateway signs (:mod:`toolscout.server.input_required`),
so any replica can continue the program; the record holds only results of calls this
caller made with its own permissions.
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ..model import canonical_json

__all__ = ["Journal", "current_journal", "journal_scope"]


def _digest(name: str, arguments: Any) -> str:
    return hashlib.sha256(canonical_json([name, arguments]).encode()).hexdigest()[:24]


@dataclass
class Journal:
    """The finished calls of one program, in order; replayed from :attr:`at`."""

    entries: list[list[Any]] = field(default_factory=list)  # [digest, ok, value or error message]
    at: int = 0
    replayed: int = 0

    def replay(self, name: str, arguments: Any) -> tuple[bool, Any] | None:
        """The recorded outcome of this call, if it is the next one recorded; else ``None``
        (and the rest of the record is dropped: the program went another way)."""
        if self.at >= len(self.entries):
            return None
        digest, ok, payload = self.entries[self.at]
        if digest != _digest(name, arguments):
            del self.entries[self.at :]
            return None
        self.at += 1
        self.replayed += 1
        return bool(ok), payload

    def record(self, name: str, arguments: Any, ok: bool, payload: Any) -> None:
        del self.entries[self.at :]
        self.entries.append([_digest(name, arguments), ok, payload])
        self.at = len(self.entries)

    def dump(self) -> list[list[Any]]:
        return [list(e) for e in self.entries]

    @classmethod
    def load(cls, raw: Any) -> Journal:
        """A journal from :meth:`dump`'s output (anything else: an empty one)."""
        if not isinstance(raw, list):
            return cls()
        entries = [list(e) for e in raw if isinstance(e, list) and len(e) == 3 and isinstance(e[0], str)]
        return cls(entries)


_CURRENT: contextvars.ContextVar[Journal | None] = contextvars.ContextVar("toolscout_journal", default=None)


def current_journal() -> Journal | None:
    return _CURRENT.get()


@contextlib.contextmanager
def journal_scope(journal: Journal | None) -> Iterator[Journal | None]:
    token = _CURRENT.set(journal)
    try:
        yield journal
    finally:
        _CURRENT.reset(token)
