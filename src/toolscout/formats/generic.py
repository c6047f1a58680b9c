"""The generic tool shape of seed 001 (also Spring AI's): ``name``, ``description``, ``inputSchema``."""

from __future__ import annotations

from typing import Any

from ..model import Tool

__all__ = ["render_generic"]


def render_generic(tool: Tool) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "inputSchema": tool.input_schema}
