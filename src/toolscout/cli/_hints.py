"""Hints for a person at a shell, in place of the ones written for a model.

The library's errors end with a hint a model can act on ("Call find_tools to discover the
right tool name first", "Ask the user how to proceed"). At a shell there is no find_tools and
the user *is* the one to ask: a command prints what to type next instead. Only a class's
default hint is replaced; a hint written for this very error (a missing variable's name, a
path) is kept as it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .. import errors

__all__ = ["for_a_person"]

_PERSON: dict[type[errors.ToolscoutError], str] = {
    errors.UnknownTool: "Find the tool's name with: toolscout search CATALOG \"what the tool does\".",
    errors.NotRevealed: "Find the tool's name with: toolscout search CATALOG \"what the tool does\".",
    errors.Ambiguous: "Name one of the candidates: toolscout call CATALOG NAME --args '{...}'.",
    errors.InvalidArguments: "Fix --args to match the tool's schema; toolscout search CATALOG \"select:NAME\" "
    "--format mcp --json prints it.",
    errors.ToolFailed: "The tool itself failed: read its message above, check --args, or try another tool.",
    errors.ToolTimeout: "The tool did not answer in time: try again later or with a larger --timeout.",
    errors.UpstreamUnavailable: "The server behind this tool is down: toolscout servers -c FILE shows each "
    "server's state; try again once it is up.",
    errors.MetadataOnly: "This tool is listed for reference only; it cannot be called from here.",
    errors.PolicyDenied: "A policy of this gateway does not allow this tool for you.",
    errors.ApprovalDenied: "The call needs approval and did not run: run it again with --yes, or from a "
    "terminal to be asked.",
    errors.NoMatch: "Describe the task in other words, or pick a category.",
}


def for_a_person(code: str, hint: str, details: Mapping[str, Any] | None = None) -> str:
    """The hint to print for error ``code``: a person's version of a model's default hint,
    with the names the error suggests (``did you mean``) on a line of their own."""
    cls = next((c for c in _PERSON if c.code == code), None)
    text = _PERSON[cls] if cls is not None and (not hint or hint == cls.default_hint) else hint
    named = _names((details or {}).get("suggestions") or (details or {}).get("candidates"))
    if named and code in {"unknown_tool", "not_revealed", "ambiguous"}:
        text = f"Did you mean: {', '.join(named)}?\n{text}"
    return text


def _names(values: Sequence[Any] | None) -> list[str]:
    return [v.get("name", "") if isinstance(v, dict) else str(v) for v in values or []]
