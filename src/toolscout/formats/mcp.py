"""MCP ``Tool`` objects as ``tools/list`` returns them (camelCase keys, optional fields omitted)."""

from __future__ import annotations

from typing import Any

from ..model import Tool

__all__ = ["render_mcp"]


def render_mcp(tool: Tool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    title = tool.annotations.title if tool.annotations and tool.annotations.title else None
    title = title or tool.display.get("en")
    if title:
        out["title"] = title
    out["description"] = tool.description
    out["inputSchema"] = tool.input_schema
    output = tool.output_schema
    if output is not None:
        out["outputSchema"] = output
    icons = tool.meta.get("icons") if tool.meta else None
    if isinstance(icons, list) and icons:  # an upstream MCP tool's own (sources/mcp)
        out["icons"] = icons
    if tool.annotations is not None:
        hints = tool.annotations.to_mcp()
        if hints:
            out["annotations"] = hints
    return out
