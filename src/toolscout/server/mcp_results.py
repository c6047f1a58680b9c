"""What a session's outcome looks like as an MCP tool result, and the hints a meta-tool claims.

An upstream's own result passes on as its server sent it (no re-rendering); a screened
one keeps its structure with the marked content; refusals and errors become the one
structured error text every surface uses (:meth:`~toolscout.errors.ErrorInfo.text`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ..calls import UpstreamResult
from ..errors import ErrorInfo
from ..model import CallResult, Tool
from ..session import ToolOutcome

__all__ = ["call_result", "error_result", "find_result", "least_permissive"]


def find_result(outcome: ToolOutcome) -> dict[str, Any]:
    """A ``find_tools`` outcome: the rendered matches as structure, the text as content."""
    found = outcome.find
    if found is None and outcome.error is not None:  # refused before searching
        return error_result(outcome.error, outcome.content)
    structured = found.render("mcp").to_dict() if found is not None else {}
    hard = outcome.error is not None and outcome.error.code != "no_match"
    return {"content": outcome.content, "structuredContent": structured, "isError": hard}


def call_result(outcome: ToolOutcome) -> dict[str, Any]:
    """An upstream's own result is passed on as is; anything else as text + structure."""
    result = outcome.result
    if result is None:  # refused before execution (unknown name, not revealed, ...)
        return error_result(outcome.error, outcome.content)
    if result.error is not None:
        return error_result(result.error, result.content)
    if isinstance(result, UpstreamResult) and not result.findings:  # an upstream's own result, as its server sent it
        return result.raw
    if isinstance(result, UpstreamResult):  # screened and marked: the marked content, never the raw text alone
        return {**result.raw, "content": result.content}
    out: dict[str, Any] = {"content": result.content, "isError": not result.ok}
    if result.structured is not None:
        out["structuredContent"] = result.structured
    return out


def error_result(info: ErrorInfo | None, content: list[dict[str, Any]] | CallResult | None = None) -> dict[str, Any]:
    """A structured error as a tool result the model can read and act on (its text is the
    one rendering every surface uses: :meth:`ErrorInfo.text`)."""
    if isinstance(content, CallResult):
        content = content.content
    if info is None:
        return {"content": content or [], "isError": True}
    return {
        "content": [{"type": "text", "text": info.text()}],
        "structuredContent": {"error": info.to_dict()},
        "isError": True,
    }


def least_permissive(tools: Iterable[Tool]) -> dict[str, Any]:
    """The hints a tool that can run any of ``tools`` may honestly claim.

    Read-only and idempotent only if every tool says so; destructive and open-world unless
    every tool says otherwise (MCP's defaults for unstated hints are the unsafe ones).
    """
    read_only = idempotent = True
    destructive = open_world = False
    seen = False
    for t in tools:
        seen = True
        a = t.annotations
        read_only = read_only and bool(a and a.read_only)
        idempotent = idempotent and bool(a and a.idempotent)
        destructive = destructive or not (a and (a.destructive is False or a.read_only))
        open_world = open_world or not (a and a.open_world is False)
    if not seen:
        return {
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        }
    return {
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": open_world,
    }
