"""What handling one tool call produces and how it reads to the model.

:class:`ToolOutcome` is the answer to any call a session handles; :func:`in_wire_names`
renames tools in its error to the names the model sees in the session's format;
:class:`SearchCounter` notices a search the model keeps repeating and :func:`found_text`
words a search's result for the model. :func:`route` sends one call to the meta-tool or
tool it names; it sees the session only through :class:`Conversation` (what it reads and
the three changes a call makes), so a session's state stays in the session.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..codemode.runner import EXECUTE_NAME, CodeLimits, code_runner
from ..context import CallContext
from ..errors import ErrorInfo, NotRevealed, ToolscoutError
from ..model import CallResult
from ..naming import WIRE_FORMATS
from ..request import CallRequest, FindRequest, UseRequest, shown
from ..results import FindResult, ToolReference

if TYPE_CHECKING:
    from ..gateway import Gateway

__all__ = ["MAX_SEARCHES", "Conversation", "SearchCounter", "ToolOutcome", "found_text", "in_wire_names", "route"]

MAX_SEARCHES = 256
"""Distinct searches a session counts (least recent dropped): enough to notice a loop,
small enough to keep in a shared store's state."""


@dataclass(slots=True)
class ToolOutcome:
    """What handling one tool call produced, ready to send back to the model.

    ``content`` is MCP-style text blocks; adapters wrap it in their API's tool-result shape.
    ``revealed`` lists tools whose schemas this call added to the session's list. ``find``
    is the search result of a ``find_tools`` call (unrendered: the surface renders it),
    ``result`` the execution result of any other call.
    """

    name: str
    ok: bool
    content: list[dict[str, Any]] = field(default_factory=list)
    error: ErrorInfo | None = None
    revealed: tuple[str, ...] = ()
    references: list[ToolReference] = field(default_factory=list)
    result: CallResult | None = None
    hint: str = ""
    find: FindResult | None = None

    @property
    def is_error(self) -> bool:
        return not self.ok

    @property
    def is_find(self) -> bool:
        """A search's outcome, whatever name the find meta-tool goes by (its dialect)."""
        return self.find is not None or self.name == "find_tools"

    def text(self) -> str:
        return "\n".join(b.get("text", "") for b in self.content if b.get("type") == "text")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "ok": self.ok, "content": self.content}
        if self.error is not None:
            out["error"] = self.error.to_dict()
        if self.revealed:
            out["revealed"] = list(self.revealed)
        if self.references:
            out["tool_references"] = [r.to_dict() for r in self.references]
        return out

    @classmethod
    def failure(cls, name: str, error: ToolscoutError) -> ToolOutcome:
        info = error.info()
        return cls(name=name, ok=False, content=[{"type": "text", "text": info.text()}], error=info)


def in_wire_names(outcome: ToolOutcome, wire: Callable[[str], str], format: str | None) -> ToolOutcome:
    """Tool names in an error (the tool's own name in its message, suggestions,
    candidates) as the model sees them in ``format``, in the structured error and in its
    text. ``wire`` maps a catalog name to that format's name."""
    info = outcome.error
    if info is None or format not in WIRE_FORMATS:
        return outcome
    details, message = info.details, info.message
    named = dict(details)
    suggestions, candidates = details.get("suggestions"), details.get("candidates")
    if isinstance(suggestions, list):
        named["suggestions"] = [wire(s) if isinstance(s, str) else s for s in suggestions]
    if isinstance(candidates, list):
        named["candidates"] = [
            {**c, "name": wire(c["name"])} if isinstance(c, dict) and isinstance(c.get("name"), str) else c
            for c in candidates
        ]
    shown = wire(outcome.name)
    if shown != outcome.name and f"for {outcome.name}:" in message:  # "invalid arguments for <name>: ..."
        message = message.replace(f"for {outcome.name}:", f"for {shown}:", 1)
    if named == details and message == info.message:
        return outcome
    old, new = info.text(), info.model_copy(update={"details": named, "message": message})
    outcome.error = new
    outcome.content = [
        {**b, "text": new.text()} if b.get("type") == "text" and b.get("text") == old else b for b in outcome.content
    ]
    return outcome


class SearchCounter:
    """How often this conversation ran each search (the same words, limit, type, category
    and kinds), the :data:`MAX_SEARCHES` most recent kept. A model that repeats a search
    is told so (:meth:`hint`) instead of getting the same list again in silence."""

    def __init__(self) -> None:
        self.counts: OrderedDict[str, int] = OrderedDict()

    def count(self, request: FindRequest) -> int:
        """Count one more run of ``request``; returns how many times it has run."""
        key = f"{request.query.lower()}\x1f{request.limit}\x1f{request.search_type}\x1f{request.category}"
        if request.kinds:  # only then: stored counters of plain searches keep their keys
            key += "\x1f" + ",".join(request.kinds)
        count = self.counts.pop(key, 0) + 1
        self.counts[key] = count
        self.trim()
        return count

    def update(self, counts: dict[str, int]) -> None:
        self.counts.update(counts)
        self.trim()

    def trim(self) -> None:
        while len(self.counts) > MAX_SEARCHES:
            self.counts.popitem(last=False)

    @staticmethod
    def hint(count: int, ready: list[str]) -> str:
        """What the model reads after the ``count``-th identical search (``ready``: the
        found tools it can already call, as it names them)."""
        return (
            f"You ran this same search {count} times. "
            + (f"Its tools are already loaded ({', '.join(ready)}): call one of them directly, " if ready else "")
            + "or search with different words."
        )


def found_text(
    found: FindResult, wire: Callable[[str], str], callable_now: Callable[[str], bool], *, progressive: bool, call_tool: bool
) -> str:
    """A search's result as the model reads it: the list, how to call what it found, and
    each tool's version."""
    refs = found.tool_references
    versions = ", ".join(f"{wire(r.tool_name)}@{r.version}" for r in refs)
    if not progressive:  # nothing is revealed: every found tool runs through call_tool
        tail = f"\nRun them through call_tool(name, arguments): {', '.join(wire(r.tool_name) for r in refs)}"
    else:
        ready = [wire(r.tool_name) for r in refs if callable_now(r.tool_name)]
        how = "directly or through call_tool" if call_tool else "directly"
        tail = f"\nLoaded now, call them {how}: {', '.join(ready)}" if ready else ""
    return f"{found.text(wire)}{tail}\nversions: {versions}"


class Conversation(Protocol):
    """What routing a call needs of a session (:class:`toolscout.session.Session`)."""

    gateway: Gateway
    call_tool: bool
    use_tool: bool
    progressive: bool
    code_mode: CodeLimits | None
    repeat_limit: int
    searches: SearchCounter

    def wire(self, name: str) -> str: ...
    def is_callable(self, name: str) -> bool: ...
    def loaded_for_find(self) -> frozenset[str]: ...
    def add_found(self, names: Iterable[str]) -> tuple[str, ...]: ...
    def touch(self, name: str, *, succeeded: bool = False) -> None: ...


async def route(conv: Conversation, name: str, arguments: Any, ctx: CallContext) -> ToolOutcome:
    """Handle one call the model made: ``find_tools`` (whatever its dialect's name),
    ``call_tool``, ``use_tool``, ``execute`` when the session offers them, else a direct
    tool call. Bad input is an error outcome, never an exception."""
    gateway = conv.gateway
    try:
        if name == gateway.find_name:
            return _find(conv, arguments, ctx)
        if name == "call_tool" and conv.call_tool:
            return await _call(conv, CallRequest.from_call_tool(arguments), ctx, direct=False)
        if name == "use_tool" and conv.use_tool:
            result = await gateway.execute(UseRequest.parse(arguments, max_limit=gateway.max_limit), ctx)
            return ToolOutcome(name="use_tool", ok=result.ok, content=list(result.content), error=result.error, result=result)
        if name == EXECUTE_NAME and conv.code_mode is not None:
            # code mode: the program's tool calls each go through the gateway with ``ctx``
            result = await code_runner(gateway, conv.code_mode).run(arguments, ctx, limits=conv.code_mode)
            return ToolOutcome(name=EXECUTE_NAME, ok=result.ok, content=list(result.content), error=result.error, result=result)
        return await _call(conv, CallRequest.parse(name, arguments), ctx, direct=True)
    except ToolscoutError as exc:
        return ToolOutcome.failure(name if isinstance(name, str) else shown(name), exc)


async def _call(conv: Conversation, request: CallRequest, ctx: CallContext, *, direct: bool) -> ToolOutcome:
    """A direct call needs the tool's schema loaded in this session; ``call_tool`` only
    needs the tool to be visible (the model named it, and its arguments are checked
    against the schema either way)."""
    gateway = conv.gateway
    try:
        tool = gateway.resolve(request.name, allow=ctx.allow)
    except ToolscoutError as exc:  # unknown or denied: recorded like a refusal over /v1
        gateway.audit_refusal(request, ctx, exc)
        raise
    if direct and not conv.is_callable(tool.name):
        wire = conv.wire(tool.name)
        via = " or run it with call_tool(name, arguments)" if conv.call_tool else ""
        hint = f"Call {gateway.find_name} with query 'select:{wire}' (or describe the task){via}."
        if not conv.progressive:  # nothing is ever revealed here: select: would change nothing
            hint = (f"Run it with call_tool(name='{wire}', arguments)." if conv.call_tool
                    else f"Call {gateway.find_name} to see its schema, then describe the task so it is found and sent.")
        raise NotRevealed(f"tool {wire!r} exists but its schema is not loaded in this session", hint=hint)
    conv.touch(tool.name)
    if request.name != tool.name:  # the catalog name: the gateway resolves it at once
        request = CallRequest(tool.name, request.arguments)
    result = await gateway.execute(request, ctx)
    if result.ok:
        conv.touch(tool.name, succeeded=True)
    return ToolOutcome(name=tool.name, ok=result.ok, content=list(result.content), error=result.error, result=result)


def _find(conv: Conversation, arguments: Any, ctx: CallContext) -> ToolOutcome:
    gateway = conv.gateway
    found = gateway.find(arguments, ctx, loaded=conv.loaded_for_find())
    request = found.request
    if found.error is not None or request is None:
        text = [{"type": "text", "text": found.text()}]
        return ToolOutcome(name=gateway.find_name, ok=False, content=text, error=found.error, find=found)
    added = conv.add_found(t.name for t in found.found)
    text = found_text(found, conv.wire, conv.is_callable, progressive=conv.progressive, call_tool=conv.call_tool)
    outcome = ToolOutcome(
        name=gateway.find_name, ok=True, content=[{"type": "text", "text": text}], revealed=added,
        references=list(found.tool_references), find=found,
    )
    count = conv.searches.count(request)
    if count >= conv.repeat_limit:
        outcome.hint = SearchCounter.hint(count, [conv.wire(r.tool_name) for r in found.tool_references if conv.is_callable(r.tool_name)])
        outcome.content.append({"type": "text", "text": outcome.hint})
    return outcome
