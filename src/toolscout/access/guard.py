"""One guarded execution for every operation, tool calls included.

Every operation a caller can make (call a tool, read or subscribe a resource, list or get a
prompt, complete an argument, read a skill, run a code-mode program) and every request an
upstream sends to the caller (sampling, elicitation, roots) runs here, in one order::

    identify -> visible -> approve -> credentials -> run -> screen -> audit

Why by construction: the handlers are registered with a :class:`Guard` and held only by it
(a private table, no getter); a surface has nothing to call but :meth:`Guard.run` with an
:class:`Operation`. Before, each surface applied the rules itself and some forgot one
(unscreened resources, unaudited skill reads, hidden servers told apart: issue 31).

A kind may register an ``approve`` step with its handler (tool calls do: the tool must have
a runner, its arguments must fit its schema, and a person approves a gated kind); it runs
in the ``approve`` stage, and a refusal there is audited ``refused`` (nothing ran). A kind
may also register its own ``screen`` (tool calls use the gateway's result screen).

A hidden entry answers exactly as an unknown one (``hidden()`` builds the error the surface
gives for "no such thing"), and its audit record says ``denied``.

``on_stage(name, seconds)`` sees each stage's duration (telemetry plugs in here); unset, no
clock is read.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..accounting import telemetry
from ..context import CallContext, current, using
from ..errors import PolicyDenied, ToolscoutError
from ..model import CallResult, Tool
from ..security.results import ResultWithheld
from .audit import AuditRecord, Recorder, emit, mask_secrets
from .screening import scan_payload, screen_payload
from .visibility import Visibility

__all__ = ["OPERATIONS", "RELAYED", "STAGES", "Guard", "Operation", "StageHook", "relay_through"]

STAGES = ("identify", "visible", "approve", "credentials", "run", "screen", "audit")
"""The order every operation passes through (the names ``on_stage`` receives)."""

OPERATIONS: Mapping[str, str] = {
    "tools/call": "result",
    "resources/list": "resource list",
    "resources/read": "resource",
    "resources/subscribe": "resource",
    "prompts/list": "prompt list",
    "prompts/get": "prompt",
    "completion/complete": "completion",
    "skills/read": "skill",
    "program": "output",
    "sampling/createMessage": "sampling request",
    "elicitation/create": "elicitation request",
    "roots/list": "roots request",
}
"""Every kind of operation, with what its screened text is called in a warning. The guard
matrix test (tests/security/test_guard_matrix.py) has rows for each."""

RELAYED = frozenset({"sampling/createMessage", "elicitation/create", "roots/list"})
"""Requests an upstream sends to the caller: what the caller's model or user reads is the
request itself, so it is screened before it is forwarded (the ``screen`` stage comes
before ``run`` for these)."""

StageHook = Callable[[str, float], None]
Handler = Callable[["Operation", CallContext], Awaitable[Any]]
Approver = Callable[["Operation", CallContext], Awaitable[tuple["Operation", str]]]
"""The ``approve`` stage of a kind: the operation as it will run (checked parameters) and
the decision to audit (``allowed`` or ``approved``), or a raised refusal."""
Screen = Callable[[Tool | None, Any], Awaitable[Any] | None]
"""A kind's own screen of its answer: the screened answer to await, or ``None`` (nothing to do)."""

NOT_RUN = frozenset(
    {"approval_denied", "approval_required", "unknown_tool", "invalid_arguments", "invalid_request", "ambiguous",
     "no_match", "empty_query", "not_revealed", "session_store_unavailable"}
)
"""Error codes of requests that never reached a handler (audited as ``refused``)."""


@dataclass(frozen=True, slots=True)
class Operation:
    """One request as the guard sees it: its ``kind`` (a key of :data:`OPERATIONS`), the
    ``name`` the caller used (URI, prompt name, program label...), the catalog-like
    ``entry`` visibility judges (``None``: nothing to hide, e.g. a list), its ``params``
    (for the handler), and ``screen``: whether its answer is text a model reads."""

    kind: str
    name: str
    entry: Tool | None = None
    params: Mapping[str, Any] = field(default_factory=dict)
    screen: bool = True
    id: str | None = None
    """The audit record's own id, when records made inside point at it (a program's calls)."""
    payload: Any = field(default=None, compare=False, repr=False)
    """What only the handler reads (a program's code): never audited."""

    def __post_init__(self) -> None:
        if self.kind not in OPERATIONS:
            raise ValueError(f"unknown operation kind {self.kind!r}; add it to OPERATIONS (and the guard matrix)")


class Guard:
    """Holds the handlers of every guarded operation and runs each through the stages.

    ``visibility`` is the gateway's rule (policy plus the caller's ``allow``);
    ``screen_mode(entry)`` the poisoning mode for an entry's text (``None``: screening off);
    ``recorders()`` the audit recorders now (the gateway's list, read at each run).
    """

    def __init__(
        self,
        visibility: Visibility,
        *,
        recorders: Callable[[], list[Recorder]] = list,
        screen_mode: Callable[[Tool | None], str] | None = None,
        on_stage: StageHook | None = None,
        keep_arguments: Callable[[], bool] = lambda: False,
    ) -> None:
        self.visibility = visibility
        self.recorders = recorders
        self.screen_mode = screen_mode
        self._on_stage = on_stage
        self.keep_arguments = keep_arguments
        self.__handlers: dict[str, Handler] = {}
        self.__approvers: dict[str, Approver] = {}
        self.__screens: dict[str, Screen] = {}

    @property
    def on_stage(self) -> StageHook | None:
        """Who sees each stage's duration: the hook set here, else the process's stage
        timings (:mod:`toolscout.accounting.telemetry`: /metrics, traces) while anyone listens."""
        if self._on_stage is not None:
            return self._on_stage
        return _to_telemetry if telemetry.active() else None

    @on_stage.setter
    def on_stage(self, hook: StageHook | None) -> None:
        self._on_stage = hook

    def register(self, kind: str, handler: Handler, *, approve: Approver | None = None,
                 screen: Screen | None = None) -> None:
        """Make ``handler`` the one runner of ``kind``; only :meth:`run` ever calls it.
        ``approve``: the kind's approval stage; ``screen``: its own screen of the answer."""
        if kind not in OPERATIONS:
            raise ValueError(f"unknown operation kind {kind!r}")
        if kind in self.__handlers:
            raise ValueError(f"{kind} already has a handler")
        self.__handlers[kind] = handler
        if approve is not None:
            self.__approvers[kind] = approve
        if screen is not None:
            self.__screens[kind] = screen

    def handles(self, kind: str) -> bool:
        return kind in self.__handlers

    @staticmethod
    def _tick(hook: StageHook | None, stage: str, started: float) -> float:
        """Report ``stage`` to ``hook`` (``None``: no clock is read) and start the next."""
        if hook is None:
            return started
        now = time.perf_counter()
        hook(stage, now - started)
        return now

    async def run(
        self,
        op: Operation,
        ctx: CallContext,
        *,
        hidden: Callable[[], Exception],
        audit: bool = True,
    ) -> Any:
        """The handler's answer for ``op`` and ``ctx``'s caller, screened; raises ``hidden()``
        when the caller may not see ``op.entry`` and whatever the handler raised otherwise.
        One audit record either way (``audit=False``: a listing, which decides nothing)."""
        started_wall = time.time()
        hook = self.on_stage  # read once: telemetry may start listening mid-call
        t = time.perf_counter() if hook is not None else 0.0
        # identify: the surface derived ctx.principal once (access.principal); the record names it
        if hook is not None:
            t = self._tick(hook, "identify", t)
        decision, outcome = "allowed", "ok"
        try:
            if op.entry is not None and not self.visibility.admits(op.entry, ctx.allow):
                decision, outcome = "denied", "denied"
                raise hidden()
            if hook is not None:
                t = self._tick(hook, "visible", t)
            handler = self.__handlers.get(op.kind)
            if handler is None:
                decision, outcome = "refused", "unknown_operation"
                raise hidden()
            approve = self.__approvers.get(op.kind)  # reads are never gated; programs gate each call
            if approve is not None:
                try:
                    op, decision = await approve(op, ctx)
                except ToolscoutError as exc:
                    outcome = exc.code
                    decision = "refused" if exc.code in NOT_RUN else decision
                    raise
            if hook is not None:
                t = self._tick(hook, "approve", t)
            if hook is not None:  # the handler picks the caller's connection
                t = self._tick(hook, "credentials", t)
            screen = self.__screens.get(op.kind)
            mode = "off"  # a kind with its own screen (tool calls) is screened by it, not by mode
            if screen is None and self.screen_mode is not None and op.screen:
                mode = self.screen_mode(op.entry)
            if op.kind in RELAYED:
                if mode != "off":
                    screened = screen_payload(dict(op.params), mode, what=OPERATIONS[op.kind], name=op.name)
                    op = dataclasses.replace(op, params=screened)
                if hook is not None:
                    t = self._tick(hook, "screen", t)
                mode = "off"  # the client's answer goes back to the upstream, not to a model
            with using(ctx):  # per-user credentials read the caller from here
                answer = await handler(op, ctx)
            if hook is not None:
                t = self._tick(hook, "run", t)
            if screen is not None:
                pending = screen(op.entry, answer)
                if pending is not None:
                    answer = await pending
            if isinstance(answer, CallResult):
                answer = answer if screen is not None else _screened_result(answer, mode, op)
                if answer.error is not None:
                    outcome = answer.error.code
                    decision = "refused" if outcome in ("result_withheld", "approval_denied") else decision
                elif not answer.ok:
                    outcome = "tool_error"
            elif screen is None and mode != "off" and isinstance(answer, dict):
                answer = screen_payload(answer, mode, what=OPERATIONS[op.kind], name=op.name)
            if hook is not None and op.kind not in RELAYED:
                t = self._tick(hook, "screen", t)
            return answer
        except ToolscoutError as exc:
            if outcome == "ok":  # raised while running: the decision made before it stands
                decision, outcome = ("refused" if exc.code == "result_withheld" else decision), exc.code
            raise
        except Exception as exc:
            if outcome == "ok":
                outcome = getattr(exc, "code", None) if isinstance(getattr(exc, "code", None), str) else "error"
            raise
        finally:
            if audit:
                self.record(op, ctx, decision, str(outcome), started_wall)
            if hook is not None:
                self._tick(hook, "audit", t)

    def record(self, op: Operation, ctx: CallContext, decision: str, outcome: str, started: float | None = None) -> None:
        """One audit record of ``op`` for ``ctx``'s caller, to every recorder (none: nothing
        is built). :meth:`run` writes it; a surface writes it itself only for a request it
        refused before there was an operation to run (an unknown or hidden tool's name)."""
        recorders = self.recorders()
        if not recorders:
            return
        now = time.time()
        started = now if started is None else started
        principal = ctx.principal
        emit(recorders, AuditRecord(
            time=started,
            principal=principal.id,
            kind=principal.kind,
            tool=op.name,
            decision=decision,
            outcome=outcome,
            duration_ms=round((now - started) * 1000, 3),
            session=ctx.session_id,
            arguments=mask_secrets(dict(op.params)) if op.params and self.keep_arguments() and op.kind not in RELAYED else None,
            operation=op.kind,
            id=op.id,
            parent=ctx.audit_parent if ctx.audit_parent != op.id else None,
        ))


def _screened_result(result: CallResult, mode: str, op: Operation) -> CallResult:
    """A :class:`CallResult` answer (a program's) screened as its text and structure."""
    if mode == "off" or not result.ok:
        return result
    payload = {"content": list(result.content), "structuredContent": result.structured}
    serious = [f for f in scan_payload(payload) if f.at_least("medium")]
    if not serious:
        return result
    try:
        screened = screen_payload(payload, mode, what=OPERATIONS[op.kind], name=op.name)
    except ResultWithheld as exc:
        return CallResult.failure(result.tool, exc, duration_ms=result.duration_ms)
    if screened is not payload:
        result.content = screened["content"]
        result.findings = (*result.findings, *(f.to_dict() for f in serious))
    return result


async def _forward(op: Operation, ctx: CallContext) -> dict[str, Any]:
    relay = op.payload
    answer: dict[str, Any] = await relay.request(op.kind, dict(op.params))
    return answer


def relay_through(guard: Guard, server: str) -> Callable[[str, dict[str, Any], Any], Awaitable[dict[str, Any]]]:
    """How ``server``'s requests to the caller (sampling, elicitation, roots) reach them:
    through ``guard`` (audited, screened under the server's mode), then the call's relay."""
    for kind in RELAYED:
        if not guard.handles(kind):
            guard.register(kind, _forward)
    probe = Tool(server, f"requests of {server}", source="mcp", source_id=server, category=server,
                 meta={"server": server})

    async def relay(method: str, params: dict[str, Any], to: Any) -> dict[str, Any]:
        op = Operation(method, server, entry=probe, params=params, payload=to)
        hidden = lambda: PolicyDenied(f"{server} may not reach this caller")  # noqa: E731
        answer: dict[str, Any] = await guard.run(op, current(), hidden=hidden)  # the call it serves
        return answer

    return relay


_TELEMETRY_NAMES = {"visible": "visibility", "approve": "approval", "screen": "screening"}


def _to_telemetry(stage: str, seconds: float) -> None:
    """A guard stage under the name the request path's timings use (``visible`` is
    ``visibility`` there; ``run`` is the handler or upstream call)."""
    telemetry.record(_TELEMETRY_NAMES.get(stage, stage), seconds)
