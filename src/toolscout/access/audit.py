"""An audit record of every call: who ran what, whether it was allowed, how it ended.

The gateway's one call path (:meth:`Gateway.execute <toolscout.gateway.Gateway.execute>`)
builds one :class:`AuditRecord` per call and hands it to each recorder in
``gateway.recorders`` (any ``Callable[[AuditRecord], None]``): every surface, and
anything else that runs calls through ``execute`` (code mode, say), is audited without
doing anything. Nothing is built when there is no recorder.

Two recorders ship: :class:`AuditLog` keeps records in a
:class:`~toolscout.storage.BlobStore` namespace (the gateway's SQLite file, or the
PostgreSQL store replicas share) and answers queries; :class:`JsonLines` writes one JSON
line per record to a stream (stdout, for log shippers). Argument values are left out
unless the operator asks for them (``arguments=True`` on the gateway), and then every
value under a key that looks like a secret (:data:`SECRET_KEYS`) is masked.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import socket
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import IO, Any

from ..storage import BlobStore

__all__ = [
    "DECISIONS",
    "NS",
    "REPLICA",
    "SECRET_KEYS",
    "AuditLog",
    "AuditRecord",
    "JsonLines",
    "Recorder",
    "mask_secrets",
    "parse_since",
]

log = logging.getLogger("toolscout.audit")

NS = "audit.calls"
DECISIONS = ("allowed", "approved", "denied", "refused")
"""``allowed``: ran, no approval needed; ``approved``: ran after an approval; ``denied``:
the caller may not run this tool; ``refused``: did not run (no such tool, bad arguments,
approval refused or still to be given)."""
REPLICA = f"{socket.gethostname()}:{os.getpid()}"
"""This process, as audit records name it."""
SECRET_KEYS = re.compile(
    r"pass(word|wd|phrase)?|secret|token|api[_-]?key|auth|credential|private[_-]?key|cookie|session[_-]?id|bearer",
    re.IGNORECASE,
)
"""Argument keys whose values are masked in audit records."""
MASK = "***"


@dataclass(frozen=True, slots=True)
class AuditRecord:
    """One call: when (``time``, seconds since the epoch), who (``principal``, its ``kind``),
    what (``tool``), the ``decision`` (one of :data:`DECISIONS`), how it ended
    (``outcome``: ``ok``, ``tool_error`` or the error code), how long it took, on which
    replica, in which session; ``arguments`` only when the operator keeps them (masked)."""

    time: float
    principal: str
    kind: str
    tool: str
    decision: str
    outcome: str
    duration_ms: float
    replica: str = REPLICA
    session: str | None = None
    arguments: dict[str, Any] | None = None
    operation: str | None = None
    """What was done when not a tool call (``resources/read``, ``prompts/get``, ``program``...:
    :data:`toolscout.access.guard.OPERATIONS`); ``None``: a tool call."""
    id: str | None = None
    """This record's own id, when other records point at it (a code-mode program)."""
    parent: str | None = None
    """The id of the record this one ran under (a program's inner calls)."""

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        for optional in ("arguments", "operation", "id", "parent"):
            if out[optional] is None:
                del out[optional]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> AuditRecord:
        names = cls.__dataclass_fields__
        return cls(**{k: v for k, v in data.items() if k in names})


Recorder = Callable[[AuditRecord], None]


def mask_secrets(value: Any, *, depth: int = 0) -> Any:
    """``value`` with every item under a secret-looking key replaced by ``***`` (nested
    objects and lists too); long strings are cut to 200 characters."""
    if depth > 8:
        return MASK
    if isinstance(value, Mapping):
        return {
            str(k): MASK if SECRET_KEYS.search(str(k)) else mask_secrets(v, depth=depth + 1) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [mask_secrets(v, depth=depth + 1) for v in list(value)[:100]]
    if isinstance(value, str):
        return value[:200]
    if value is None or isinstance(value, bool | int | float):
        return value
    return str(value)[:200]


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_since(text: str, *, now: float | None = None) -> float:
    """``1h``, ``30m``, ``7d`` (ago) or an ISO 8601 time -> seconds since the epoch.
    Raises ``ValueError`` with what was expected."""
    text = text.strip()
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([smhdw])", text)
    if match:
        return (now if now is not None else time.time()) - float(match.group(1)) * _UNITS[match.group(2)]
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(f"{text!r}: expected a duration like 30m, 1h, 7d or an ISO 8601 time") from None
    return moment.timestamp()


def _key(record: AuditRecord) -> str:
    """Keys sort by time (nanoseconds, zero-padded), then a random tail: a time range is a
    key range."""
    return f"{int(record.time * 1e9):020d}-{uuid.uuid4().hex[:12]}"


class AuditLog:
    """Audit records in a store namespace. ``record`` never fails a call (a store problem
    is logged and the record dropped); ``query`` reads them back, newest first."""

    def __init__(self, store: BlobStore, *, namespace: str = NS) -> None:
        self.store = store
        self.namespace = namespace
        self._lock = threading.Lock()

    def __call__(self, record: AuditRecord) -> None:
        self.record(record)

    def record(self, record: AuditRecord) -> None:
        try:
            with self._lock:
                self.store.put(self.namespace, _key(record), json.dumps(record.to_dict(), separators=(",", ":")))
        except Exception as exc:  # auditing is never why a call fails
            log.warning("audit record not stored: %s", type(exc).__name__)

    def query(
        self,
        *,
        since: float | None = None,
        until: float | None = None,
        principal: str | None = None,
        tool: str | None = None,
        decision: str | None = None,
        limit: int = 1000,
    ) -> list[AuditRecord]:
        """Records in ``[since, until)``, of ``principal`` / ``tool`` / ``decision`` when
        given, newest first, at most ``limit``."""
        low = f"{int(since * 1e9):020d}" if since is not None else ""
        high = f"{int(until * 1e9):020d}" if until is not None else "~"
        keys = sorted((k for k in self.store.keys(self.namespace) if low <= k < high), reverse=True)
        out: list[AuditRecord] = []
        for key in keys:
            entry = self.store.get(self.namespace, key)
            if entry is None:
                continue
            with contextlib.suppress(ValueError, TypeError):
                record = AuditRecord.from_dict(json.loads(entry.text))
                if principal is not None and record.principal != principal:
                    continue
                if tool is not None and record.tool != tool:
                    continue
                if decision is not None and record.decision != decision:
                    continue
                out.append(record)
                if len(out) >= limit:
                    break
        return out


class JsonLines:
    """One JSON line per record on ``stream`` (default: stdout), flushed at once."""

    def __init__(self, stream: IO[str] | None = None) -> None:
        self.stream = stream
        self._lock = threading.Lock()

    def __call__(self, record: AuditRecord) -> None:
        line = json.dumps({"audit": record.to_dict()}, separators=(",", ":"), ensure_ascii=True)
        stream = self.stream or sys.stdout
        with self._lock, contextlib.suppress(Exception):
            stream.write(line + "\n")
            stream.flush()


def emit(recorders: Iterable[Recorder], record: AuditRecord) -> None:
    """Hand ``record`` to every recorder; one failing recorder never stops the others or
    the call."""
    for recorder in recorders:
        try:
            recorder(record)
        except Exception as exc:
            log.warning("audit recorder %r failed: %s", recorder, type(exc).__name__)
