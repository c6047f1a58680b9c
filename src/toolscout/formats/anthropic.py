"""Anthropic Messages API tools: ``name``, ``description``, ``input_schema`` (full JSON Schema)."""

from __future__ import annotations

from typing import Any

from ..model import Tool

__all__ = ["render_anthropic"]


def render_anthropic(tool: Tool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["input_schema"] = tool.input_schema
    return out
