"""The meta-tools a model is given in place of the catalog: ``find_tools``, ``call_tool``
and ``use_tool``, and the system prompt that introduces them.

Their argument names, enum and defaults come from :mod:`toolscout.request`, the module that
parses what a model sends back, so the schema a model reads and the parser can never
disagree. The gateway renders them (:meth:`Gateway.meta_tools
<toolscout.gateway.Gateway.meta_tools>`); sessions and the MCP server list them.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from functools import lru_cache
from typing import Any

from . import formats
from .model import KINDS, DeferPolicy, Tool
from .request import (
    DEFAULT_LIMIT,
    DEFAULT_SEARCH_TYPE,
    DIALECTS,
    MAX_LIMIT,
    RFC,
    SEARCH_TYPES,
    Dialect,
)

__all__ = [
    "CALL_TOOL",
    "FIND_NAMES",
    "FIND_TOOLS",
    "META_NAMES",
    "USE_TOOL",
    "call_tool_tool",
    "find_tools_tool",
    "meta_tool_records",
    "system_prompt",
]

META_NAMES = ("find_tools", "call_tool", "use_tool")
FIND_NAMES = frozenset(d.name for d in DIALECTS.values())
"""Every name the find meta-tool can be presented under (see :data:`request.DIALECTS`)."""


_KIND_TEXT = {
    "tool": "tool (default): a function to call",
    "skill": "skill: instructions to load by calling it",
    "agent": "agent: another agent to delegate to (its card)",
    "resource": "resource: an upstream server's data to read by calling it",
    "prompt": "prompt: an upstream server's prompt template to get by calling it",
}


@lru_cache(maxsize=16)
def find_tools_tool(
    default_limit: int = DEFAULT_LIMIT,
    max_limit: int = MAX_LIMIT,
    kinds: tuple[str, ...] = (),
    dialect: Dialect = RFC,
) -> Tool:
    """The ``find_tools`` meta-tool; its argument names, enum and defaults come from
    :mod:`toolscout.request`, the module that parses them. ``kinds`` (the kinds the catalog
    holds, when more than tools) adds the ``kinds`` argument: a tools-only catalog keeps
    the schema, and its token cost, as before. ``dialect`` names the tool and its
    arguments as seed 001 or Spring AI do (same meaning, same parser)."""
    properties: dict[str, Any] = {}
    if kinds:
        properties["kinds"] = {
            "type": "array",
            "items": {"type": "string", "enum": list(kinds)},
            "description": "What to find: " + "; ".join(_KIND_TEXT[k] for k in kinds) + ".",
        }
    return Tool(
        dialect.name,
        "Search the tool catalog by capability and load the schemas of matching tools. "
        "Call it before using any tool you have not loaded yet.",
        {
            "type": "object",
            "properties": {
                "query": {
                    "type": "string",
                    "description": "What you want to do, in a few words, or an exact tool name. "
                    "'select:a,b' loads tools by name.",
                },
                dialect.limit: {
                    "type": "integer",
                    "description": f"Max tools to return (1-{max_limit}, default {default_limit}).",
                },
                dialect.search_type: {
                    "type": "string",
                    "enum": list(SEARCH_TYPES),
                    "description": f"Default '{DEFAULT_SEARCH_TYPE}'. 'regex' matches name patterns "
                    "like 'get_.*_data'.",
                },
                dialect.category: {"type": "string", "description": "Only search this category."},
                "exclude": {
                    "type": "array",
                    "items": {"type": "string"},
                    "description": "Names of tools you already have; they are not returned.",
                },
                **properties,
            },
            "required": ["query"],
        },
        source="toolscout",
        defer=DeferPolicy.NEVER,
        annotations=None,
    )


FIND_TOOLS = find_tools_tool()

@lru_cache(maxsize=4)
def call_tool_tool(find_name: str = "find_tools") -> Tool:
    """``call_tool``, naming the find meta-tool as the model sees it."""
    return Tool(
        "call_tool",
        f"Run a tool returned by {find_name}, by its exact name, with arguments matching its schema.",
        {
            "type": "object",
            "properties": {
                "name": {"type": "string", "description": f"Exact tool name from {find_name}."},
                "arguments": {"type": "object", "description": "Arguments for the tool."},
            },
            "required": ["name", "arguments"],
        },
        source="toolscout",
        defer=DeferPolicy.NEVER,
    )


CALL_TOOL = call_tool_tool()

USE_TOOL = Tool(
    "use_tool",
    "Find and run a tool in one step, when you already know its parameters.",
    {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What you want to do."},
            "params": {"type": "object", "description": "Parameters for the matched tool."},
        },
        "required": ["query", "params"],
    },
    source="toolscout",
    defer=DeferPolicy.NEVER,
)


def meta_tool_records(
    kinds_present: Collection[str],
    *,
    default_limit: int = DEFAULT_LIMIT,
    max_limit: int = MAX_LIMIT,
    use_tool: bool = False,
    call_tool: bool = False,
    dialect: Dialect = RFC,
) -> list[Tool]:
    """``find_tools`` (with a ``kinds`` argument only when the catalog holds more than
    tools; named as ``dialect`` says), plus ``call_tool`` and/or ``use_tool`` when asked."""
    kinds = tuple(k for k in KINDS if k in kinds_present) if set(kinds_present) - {"tool"} else ()
    chosen = [find_tools_tool(default_limit, max_limit, kinds, dialect)]
    if call_tool:
        chosen.append(call_tool_tool(dialect.name))
    if use_tool:
        chosen.append(USE_TOOL)
    return chosen


def system_prompt(categories: Mapping[str, int], find_name: str = "find_tools") -> str:
    """The system prompt that tells a model to search before it calls."""
    return formats.system_prompt(categories, find_name)
