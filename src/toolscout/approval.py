"""Approval for risky calls: a person (or a callback standing in for one) says yes or no.

A read-only policy keeps risky tools out; approval keeps them in but asks first. Calls to
tools whose permission kind (:attr:`Tool.effective_permission`, so MCP hints count) is in
the gateway's ``approve_kinds`` go through an approver just before they run, in
:meth:`Gateway.execute <toolscout.gateway.Gateway.execute>`, the one place that executes:
every surface (library, sessions, adapters, MCP server, HTTP API) gets the same gate.

The approver is the caller's: ``approve`` of its :class:`~toolscout.context.CallContext`,
else the gateway's. A context's approver is, first one present wins:

1. ``Session(..., approve=fn)``: this conversation's (its user's) approver;
2. the surface's, for one call (the MCP server asks the client's user through elicitation
   when the client supports it and some kind is gated);
3. ``Gateway(..., approve=fn)``: the process-wide fallback.

None present: the call is answered ``approval_required`` and nothing runs. A "no" is
answered ``approval_denied`` with the approver's reason, as data like every other error.
``approve_kinds`` defaults to ``{"dangerous"}`` once an approver is given (to the gateway
or a session); without one and without ``approve_kinds`` no call is gated, so existing
users see no change.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import ConfigError
from .model import PERMISSION_KINDS

if TYPE_CHECKING:
    from .model import Tool

__all__ = ["DEFAULT_KINDS", "Approve", "Decision", "decide", "parse_kinds"]

DEFAULT_KINDS: frozenset[str] = frozenset({"dangerous"})
"""Kinds gated when an approver is given and ``approve_kinds`` is not."""


@dataclass(frozen=True, slots=True)
class Decision:
    """An approver's answer: ``allowed``, and why (shown to the model on a refusal)."""

    allowed: bool
    reason: str = ""

    @classmethod
    def allow(cls, reason: str = "") -> Decision:
        return cls(True, reason)

    @classmethod
    def deny(cls, reason: str = "") -> Decision:
        return cls(False, reason)


Approve = Callable[["Tool", dict[str, Any]], "Decision | bool | tuple[bool, str] | Awaitable[Any]"]
"""``approve(tool, arguments)``, sync or async: a :class:`Decision`, a bool, or
``(allowed, reason)``. Sync approvers run in a worker thread (one may wait for a person)."""

def parse_kinds(value: str | Iterable[str] | None) -> frozenset[str] | None:
    """``"dangerous,write"``, a list, ``"none"`` (gate nothing) or ``None`` (the default
    rule); an unknown kind is a :class:`ConfigError`, so a typo never leaves a tool ungated."""
    if value is None:
        return None
    parts = value.split(",") if isinstance(value, str) else list(value)
    kinds = {p.strip().lower() for p in parts if isinstance(p, str) and p.strip()}
    if kinds in ({"none"}, set()):
        return frozenset()
    wrong = sorted(kinds - set(PERMISSION_KINDS))
    if wrong:
        raise ConfigError(
            f"approval kinds must be some of {', '.join(PERMISSION_KINDS)} (or none), not {', '.join(wrong)}",
            hint="e.g. --approve-kinds dangerous,write",
        )
    return frozenset(kinds)


async def decide(approve: Approve, tool: Tool, arguments: dict[str, Any]) -> Decision:
    """Ask ``approve`` about this call. An approver that fails refuses (fail closed)."""
    try:
        if inspect.iscoroutinefunction(approve) or inspect.iscoroutinefunction(type(approve).__call__):
            value = await approve(tool, dict(arguments))
        else:
            value = await asyncio.to_thread(approve, tool, dict(arguments))
            if inspect.isawaitable(value):
                value = await value
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        return Decision.deny(f"the approver failed ({type(exc).__name__}: {str(exc)[:200]})")
    return as_decision(value)


def as_decision(value: Any) -> Decision:
    if isinstance(value, Decision):
        return value
    if isinstance(value, tuple) and len(value) == 2:
        return Decision(bool(value[0]), str(value[1] or ""))
    if isinstance(value, bool):
        return Decision(value)
    return Decision.deny(f"the approver answered {type(value).__name__}, not a decision")
