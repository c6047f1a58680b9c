"""How a tool call runs under the guard: its ``approve`` stage and its handler.

:func:`guard_tool_calls` registers both with the gateway's
:class:`~toolscout.access.guard.Guard` and keeps no other reference to them, so the only way
to a tool's handler from a surface is :meth:`Guard.run` (identify -> visible -> approve ->
credentials -> run -> screen -> audit). The ``approve`` stage refuses a tool nothing can run
(before anyone is asked), checks the arguments against the schema, then asks the approver
when the tool's kind is gated; the ``run`` stage calls the handler within the call's
timeout and turns whatever it returns into a :class:`~toolscout.model.CallResult`.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol

from ..access import approval
from ..access.guard import Guard, Operation
from ..catalog_base import BaseCatalog
from ..context import CallContext
from ..errors import MetadataOnly, ToolFailed, ToolscoutError, ToolTimeout
from ..model import CallResult, Tool

__all__ = ["CallSettings", "as_call_result", "guard_tool_calls", "invoke"]

class CallSettings(Protocol):
    """What a call reads from its gateway at the moment it runs (all settable after set-up)."""

    catalog: BaseCatalog
    approve: approval.Approve | None
    trust_hints: bool
    call_timeout: float | None
    screen_results: Callable[[Tool, CallResult], Awaitable[CallResult]] | None

    def gated_kinds(self, approve: approval.Approve | None = None) -> frozenset[str]: ...

    def validate(self, tool: Tool, arguments: Mapping[str, Any]) -> dict[str, Any]: ...

def guard_tool_calls(guard: Guard, settings: CallSettings) -> None:
    """Make ``guard`` the one runner of ``tools/call`` for ``settings``' catalog."""

    async def approve(op: Operation, ctx: CallContext) -> tuple[Operation, str]:
        tool = op.entry
        assert tool is not None  # a tool call always names its (resolved) tool
        if settings.catalog.handler(tool.name) is None:  # before validation and approval: nobody approves a call that cannot run
            raise MetadataOnly(
                f"tool {tool.name!r} is metadata only: nothing in this gateway runs it (its declaration names "
                "no handler, http request or upstream tool, and no handler is registered for it)",
            )
        args = settings.validate(tool, op.params)
        checked = Operation(op.kind, op.name, tool, args, op.screen, op.id, op.payload)  # the validated copy runs
        gated = settings.gated_kinds(ctx.approve) | ctx.approve_kinds
        if approval.needs_approval(tool, gated, trust_hints=settings.trust_hints) is None:
            return checked, "allowed"  # the common case: no approver to await
        await approval.require(tool, args, gated=gated, approver=ctx.approve or settings.approve,
                               trust_hints=settings.trust_hints)
        return checked, "approved"

    async def run(op: Operation, ctx: CallContext) -> CallResult:
        tool = op.entry
        assert tool is not None
        handler = settings.catalog.handler(tool.name)
        if handler is None:  # removed between the two stages
            raise MetadataOnly(f"tool {tool.name!r} has no handler any more")
        limit = ctx.timeout if ctx.timeout is not None else settings.call_timeout
        loop = asyncio.get_running_loop()
        started = loop.time()
        args = op.params if isinstance(op.params, dict) else dict(op.params)  # the approve stage's own copy
        value = await invoke(tool, handler, args, limit)
        return as_call_result(tool.name, value, (loop.time() - started) * 1000)

    def screen(entry: Tool | None, result: CallResult) -> Awaitable[CallResult] | None:
        check = settings.screen_results
        if check is None or entry is None or not result.ok:
            return None  # nothing to read: no coroutine to await
        return check(entry, result)

    guard.register("tools/call", run, approve=approve, screen=screen)

def _is_async(fn: Any) -> bool:
    call = type(fn).__call__ if not inspect.isroutine(fn) else None
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)

async def invoke(tool: Tool, handler: Callable[..., Any], args: dict[str, Any], limit: float | None) -> Any:
    """``handler(args)`` within ``limit`` seconds (sync handlers in a worker thread); its
    failures as :class:`ToolTimeout` / :class:`ToolFailed`, never a bare exception."""
    # asyncio.timeout, not wait_for: the handler runs in the caller's task under a timer,
    # where wait_for made a task per call (about 8 us of every call, a third of a turn)
    try:
        if limit is None:
            value = await _called(handler, args)
        else:
            async with asyncio.timeout(limit):
                value = await _called(handler, args)
    except TimeoutError:
        raise ToolTimeout(f"tool {tool.name!r} did not finish within {limit} s") from None
    except ToolscoutError:
        raise
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        raise ToolFailed(f"{tool.name} raised {type(exc).__name__}: {exc}", exception=type(exc).__name__) from None
    return value

async def _called(handler: Callable[..., Any], args: dict[str, Any]) -> Any:
    if _is_async(handler):
        return await handler(args)
    value = await asyncio.to_thread(handler, args)
    return await value if inspect.isawaitable(value) else value


def as_call_result(name: str, value: Any, duration_ms: float) -> CallResult:
    """A handler's return value as a result: a source's own result passes as it is (only
    its name becomes the catalog's), anything else becomes text plus structure."""
    if isinstance(value, CallResult):  # a source's own result (an MCP upstream's UpstreamResult)
        value.tool = name  # the catalog name, as the caller knows it (not the upstream's)
        value.duration_ms = value.duration_ms or duration_ms
        return value
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = repr(value)
    structured = value if isinstance(value, dict) else None
    return CallResult(
        tool=name,
        ok=True,
        content=[{"type": "text", "text": text}],
        structured=structured,
        value=value,
        duration_ms=duration_ms,
    )
