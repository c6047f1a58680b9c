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

from ..errors import ApprovalDenied, ApprovalRequired, ConfigError
from ..model import PERMISSION_KINDS

if TYPE_CHECKING:
    from ..model import Tool

__all__ = [
    "DEFAULT_KINDS", "UNKNOWN_KIND", "Approve", "Decision", "decide", "gated_kinds", "needs_approval", "parse_kinds",
    "require",
]

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

UNKNOWN_KIND = "unknown"
"""What an approval prompt and ``approval_required`` name as the kind of a tool nobody the
operator trusts has classified (hints distrusted, no ``permission`` set)."""


def needs_approval(tool: Tool, gated: frozenset[str], *, trust_hints: bool = True) -> str | None:
    """The kind to name when a call to ``tool`` needs approval, else ``None``.

    First rule that applies: the operator's ``approval`` for the tool (``Tool.meta``, set
    from the gateway config: ``never`` runs it unasked, ``always`` asks every time); then
    its kind: with ``trust_hints`` (the default) the declared ``permission``, else what its
    MCP hints imply, asked about when in ``gated``. Without ``trust_hints`` only a
    ``permission`` the operator set (a declaration, a function, the config) counts; a tool
    without one is always asked about, whatever its hints say, so an upstream's own word
    never waives approval."""
    rule = tool.meta.get("approval") if tool.meta else None
    if rule == "never":
        return None
    kind = tool.effective_permission if trust_hints else tool.permission
    if rule == "always":
        return kind or UNKNOWN_KIND
    if kind is None:
        return None if trust_hints else UNKNOWN_KIND
    return kind if kind in gated else None


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


def gated_kinds(approve_kinds: frozenset[str] | None, has_approver: bool) -> frozenset[str]:
    """The kinds whose calls need approval: the operator's ``approve_kinds`` when set, else
    :data:`DEFAULT_KINDS` once some approver exists, else none."""
    if approve_kinds is not None:
        return approve_kinds
    return DEFAULT_KINDS if has_approver else frozenset()


async def require(
    tool: Tool, arguments: dict[str, Any], *, gated: frozenset[str], approver: Approve | None, trust_hints: bool = True
) -> str | None:
    """Raise unless this call may run; the kind a person approved, or ``None`` when it
    needed no approval. Asked after validation, so a person only approves a call that
    would run; without an approver a gated call is ``approval_required``."""
    kind = needs_approval(tool, gated, trust_hints=trust_hints)
    if kind is None:
        return None
    if approver is None:
        what = "of unknown kind (the operator set none, and hints are not trusted)" if kind == UNKNOWN_KIND else kind
        raise ApprovalRequired(f"tool {tool.name!r} is {what} and needs approval before it runs; nothing ran", kind=kind)
    decision = await decide(approver, tool, arguments)
    if not decision.allowed:
        why = f": {decision.reason}" if decision.reason else ""
        raise ApprovalDenied(f"the call to {tool.name!r} was not approved{why}", kind=kind, reason=decision.reason)
    return kind
