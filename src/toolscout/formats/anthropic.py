"""Anthropic Messages API tools: ``name``, ``description``, ``input_schema`` (full JSON Schema)
and ``input_examples`` when the tool has some.

Names Anthropic would reject are sent as their wire name (:mod:`.names`)."""

from __future__ import annotations

from typing import Any

from ..model import Tool
from ..naming import wire_name

__all__ = ["render_anthropic"]


def render_anthropic(tool: Tool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": wire_name(tool.name, "anthropic")}
    if tool.description:
        out["description"] = tool.description
    out["input_schema"] = tool.input_schema
    examples = tool.input_examples
    if examples:
        out["input_examples"] = list(examples)
    return out
