"""What handling one tool call produces and how it reads to the model.

:class:`ToolOutcome` is the answer to any call a session handles; :func:`in_wire_names`
renames tools in its error to the names the model sees in the session's format;
:class:`SearchCounter` notices a search the model keeps repeating and :func:`found_text`
words a search's result for the model. The session routes each call (its ``ahandle``);
what a routed call answers is built here, so the words the model reads live in one place.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ErrorInfo, ToolscoutError
from ..model import CallResult
from ..naming import WIRE_FORMATS
from ..request import FindRequest
from ..results import FindResult, ToolReference

__all__ = ["MAX_SEARCHES", "SearchCounter", "ToolOutcome", "found_text", "in_wire_names"]

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
