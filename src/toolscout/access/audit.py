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
value under a key that looks like a secret (:data:`SECRET_KEYS`) is masked, and so is every
value that looks like one by its shape (:func:`mask_text`), also inside free text.
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
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
from itertools import pairwise
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
    "mask_text",
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
    r"pass(word|wd|phrase)?|secret|token|api[_-]?key|access[_-]?key|auth|credential|private[_-]?key|cookie"
    r"|session[_-]?id|bearer|jwt|(?:^|[^a-z])(?:pw|pwd|otp)(?:$|[^a-z])",
    re.IGNORECASE,
)
"""Argument keys whose values are masked in audit records (``pw``, ``pwd`` and ``otp`` only
as a whole word of the key: ``pw``, ``user_pwd``, not ``pwm``)."""
_SECRET_SHAPES = re.compile(
    r"-----BEGIN [A-Z0-9 ]{1,40}-----.*?(?:-----END [A-Z0-9 ]{1,40}-----|\Z)"  # PEM blocks (cut ones too)
    r"|\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"  # GitHub
    r"|\bxox[abposre]-[A-Za-z0-9-]{10,}"  # Slack
    r"|\b(?:AKIA|ASIA)[A-Z0-9]{16}\b"  # AWS access key ids
    r"|\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{10,}"  # Stripe secret and restricted keys
    r"|\bsk-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_-]{20,}"  # OpenAI, Anthropic (sk-proj-, sk-ant-api03-...)
    r"|\bAIza[0-9A-Za-z_-]{30,}"  # Google API keys
    r"|\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*",  # JWTs (header.payload.signature)
    re.DOTALL,
)
"""Values that are secrets by their shape, wherever they appear (also inside free text)."""
_SECRET_AFTER = re.compile(
    r"(?i)(\b(?:bearer|basic)\s+|\b(?:password|passwd|passphrase|pwd|pw|secret|token|api[_-]?key)\s*[:=]\s*"
    r"|\b(?:password|passwd|passphrase)\s+is\s+(?=[^\s\"',;&@]*[^a-z\s\"',;&@.])"
    r"|://[^/\s:@]{1,64}:)([^\s\"',;&@]{3,})"
)
"""A secret named by what precedes it: ``Bearer <x>``, ``password: <x>``, ``token=<x>``,
``password is <x>`` (when ``<x>`` is not a plain lower-case word: "the password is wrong"
stays), a URL's ``user:<x>@``. The name is kept, the value masked."""
_LONG_RUN = re.compile(r"[A-Za-z0-9+/_=-]{32,}")
_PIECES = re.compile(r"[-_]")
_HEX = frozenset("0123456789abcdefABCDEF-")
_SCANNED = 8192
"""Characters of one value searched for secret shapes (values are cut to 200 after)."""
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
    objects and lists too), and every secret-shaped part of a string (:func:`mask_text`)
    masked wherever it sits; long strings are cut to 200 characters (after masking, so a
    cut never leaves half a token)."""
    if depth > 8:
        return MASK
    if isinstance(value, Mapping):
        return {
            str(k): MASK if SECRET_KEYS.search(str(k)) else mask_secrets(v, depth=depth + 1) for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [mask_secrets(v, depth=depth + 1) for v in list(value)[:100]]
    if isinstance(value, str):
        return mask_text(value[:_SCANNED])[:200]
    if value is None or isinstance(value, bool | int | float):
        return value
    return mask_text(str(value)[:_SCANNED])[:200]


def mask_text(text: str) -> str:
    """``text`` with secrets masked by their shape: known token formats (GitHub, Slack, AWS,
    Stripe, OpenAI/Anthropic, Google keys, JWTs, PEM blocks), the value after ``Bearer``,
    ``password:`` and the like, and long high-entropy runs. Ordinary words, ids, hex digests
    and UUIDs are left alone: a key name is not always there to say what a value is."""
    if len(text) < 8:
        return text
    text = _SECRET_SHAPES.sub(MASK, text)
    text = _SECRET_AFTER.sub(lambda m: m.group(1) + MASK if m.group(2) != MASK else m.group(0), text)
    return _LONG_RUN.sub(lambda m: MASK if _random_looking(m.group(0)) else m.group(0), text)


def _random_looking(run: str) -> bool:
    """A 32+ character run that looks generated: letters and digits, not hexadecimal
    (digests, UUIDs and commit ids are ids), more than 4 bits of entropy per character, and
    the kind of character (upper, lower, digit) changing at nearly every other step. Words,
    hyphenated or CamelCase identifiers change kind only where a word starts."""
    chars = _PIECES.sub("", run)
    if not any(c.isdigit() for c in chars) or not any(c.isalpha() for c in chars) or set(run) <= _HEX:
        return False
    kinds = [2 if c.isdigit() else 1 if c.isupper() else 0 for c in chars]
    if sum(a != b for a, b in pairwise(kinds)) < 0.45 * (len(kinds) - 1):
        return False
    counts: dict[str, int] = {}
    for c in chars:
        counts[c] = counts.get(c, 0) + 1
    n = len(chars)
    return -sum(k / n * math.log2(k / n) for k in counts.values()) > 4.0


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
