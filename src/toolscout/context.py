"""Who is calling, and what travels with their call: one :class:`CallContext` per request.

Every surface (the library, sessions and the provider adapters, the MCP server, the HTTP
API, the console) builds one context at its edge and hands it, with a parsed request, to
the gateway's two entries (:meth:`Gateway.find <toolscout.gateway.Gateway.find>` and
:meth:`Gateway.execute <toolscout.gateway.Gateway.execute>`). Below the edge nothing asks
for a caller's permissions, approver or progress reporter separately: they are all here.

While a tool handler runs, the gateway makes its context *current* (:func:`current`), the
one context variable toolscout sets, so a handler deep below (an MCP upstream forwarding
progress, later per-user credentials) reads it without every handler signature growing.
Cancellation needs no field: cancelling the task that runs a call cancels the handler.

A context is immutable; :meth:`CallContext.replace` makes a changed copy (a session adds
its id and permissions to what the edge gave it).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from .access.approval import Approve
    from .model import Tool

__all__ = ["ANONYMOUS", "CallContext", "Principal", "ProgressFn", "Relay", "current", "using"]

ProgressFn = Callable[[float, "float | None", "str | None"], Awaitable[None]]
"""``(progress, total, message)``, as MCP's ``notifications/progress`` carries them."""

Allow = Callable[["Tool"], bool]
"""A caller's own visibility rule (a session's user permissions), on top of the
gateway's policy: see :class:`~toolscout.access.visibility.Visibility`."""

_EMPTY: Mapping[str, Any] = MappingProxyType({})


class Relay(Protocol):
    """The client connection a call came from, as an upstream serving that call reaches it.

    An MCP upstream may ask the caller's client something while it runs a tool (sampling,
    elicitation) or log to it: the surface that received the call puts one of these in the
    call's context, so the answer comes from, and the log goes to, that caller and nobody
    else. ``supports`` names a client capability (``sampling``, ``elicitation``, ``roots``).
    """

    def supports(self, capability: str) -> bool: ...

    async def request(self, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]: ...

    async def notify(self, method: str, params: Mapping[str, Any] | None) -> None: ...


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling. ``id`` is stable for one caller (``anonymous`` when the surface
    knows nobody); ``kind`` says how it was established (``anonymous``, ``local`` for the
    OS user of a stdio process, ``token`` for a bearer, ...); ``claims`` holds whatever
    the surface learnt about it (never secrets: those go in ``credentials``)."""

    id: str = "anonymous"
    kind: str = "anonymous"
    claims: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, compare=False)

    @property
    def anonymous(self) -> bool:
        return self.kind == "anonymous"


ANONYMOUS = Principal()


@dataclass(frozen=True, slots=True)
class CallContext:
    """Everything about one caller that a find or a call needs besides its request.

    ``session_id``: the conversation learning credits searches and calls to (``None``:
    nothing is recorded). ``allow``: the caller's visibility rule; tools it rejects are
    never found and never run. ``approve``: the caller's approver for calls whose kind
    needs one (ahead of the gateway's own). ``progress``: where a handler's progress
    goes. ``credentials``: per-caller secrets for upstreams, by upstream name (empty
    until identity lands). ``timeout``: this caller's limit on one call in seconds
    (``None``: the gateway's ``call_timeout``). ``relay``: the caller's client connection,
    for an upstream's requests and logs during the call (``None``: none can be relayed).
    ``approve_kinds``: permission kinds whose calls need approval for this caller, on top
    of the gateway's (the operator's rules for the principal:
    :meth:`toolscout.access.identity.AccessRules.approve_kinds`).
    """

    session_id: str | None = None
    principal: Principal = ANONYMOUS
    allow: Allow | None = None
    approve: Approve | None = None
    progress: ProgressFn | None = None
    credentials: Mapping[str, Any] = field(default_factory=lambda: _EMPTY, repr=False, compare=False)
    timeout: float | None = None
    relay: Relay | None = field(default=None, repr=False, compare=False)
    approve_kinds: frozenset[str] = frozenset()
    audit_parent: str | None = None
    """The audit record the calls made with this context run under (a code-mode program's)."""

    def replace(self, **changes: Any) -> CallContext:
        """A copy with ``changes`` (the context itself never changes)."""
        return dataclasses.replace(self, **changes)


ANONYMOUS_CONTEXT = CallContext()

_current: ContextVar[CallContext] = ContextVar("toolscout_call_context", default=ANONYMOUS_CONTEXT)


def current() -> CallContext:
    """The context of the tool call running in this task (an anonymous, empty one outside
    any call): what a handler reads to report progress or find its caller's credentials."""
    return _current.get()


class using:
    """Make ``ctx`` current for the block (the gateway does this around each handler; a
    test calling a handler directly may too). Contexts of concurrent tasks never mix: each
    task sees only what was set in it. A class, not a generator: it runs on every call."""

    __slots__ = ("_ctx", "_token")

    def __init__(self, ctx: CallContext) -> None:
        self._ctx = ctx

    def __enter__(self) -> CallContext:
        self._token = _current.set(self._ctx)
        return self._ctx

    def __exit__(self, *exc: object) -> None:
        _current.reset(self._token)
