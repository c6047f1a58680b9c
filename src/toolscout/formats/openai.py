"""OpenAI function tools: Chat Completions (nested ``function``) and Responses (flat).

``strict: true`` is set only when the schema already qualifies (see :mod:`.strict`); a
schema is never rewritten behind the caller's back, because the rewritten form (optional ->
required nullable) would send ``null`` arguments the original schema rejects. The
Responses API defaults ``strict`` to true, so that format always states it. Names that
OpenAI would reject are sent as their wire name (:mod:`.names`).
"""

from __future__ import annotations

from typing import Any

from ..model import Tool
from ..naming import wire_name
from .strict import strict_refusal

__all__ = ["render_openai_chat", "render_openai_responses"]


def render_openai_chat(tool: Tool) -> dict[str, Any]:
    schema = tool.input_schema
    function: dict[str, Any] = {"name": wire_name(tool.name, "openai")}
    if tool.description:
        function["description"] = tool.description
    function["parameters"] = schema
    if strict_refusal(schema) is None:
        function["strict"] = True
    return {"type": "function", "function": function}


def render_openai_responses(tool: Tool) -> dict[str, Any]:
    schema = tool.input_schema
    out: dict[str, Any] = {"type": "function", "name": wire_name(tool.name, "openai-responses")}
    if tool.description:
        out["description"] = tool.description
    out["parameters"] = schema
    out["strict"] = strict_refusal(schema) is None
    return out
