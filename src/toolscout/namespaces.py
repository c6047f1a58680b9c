"""Tools grouped into namespaces: by the server they come from, or by category.

OpenAI's tool-search guide recommends namespaces ("our models have primarily been trained
to search those surfaces"): a ``namespace`` tool names a service and holds its functions, so
a model that needs "something in GitHub" searches one group instead of every tool. The same
grouping answers ``find_tools("namespace:github")`` with the whole group.

A tool's server is its ``source_id`` when it came from an MCP upstream (the aggregator sets
it to the server's name); otherwise, or with ``by="category"``, its category. Tools with
neither go to :data:`OTHER`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .model import Tool

__all__ = ["BY", "OTHER", "Namespace", "group", "namespace_name", "namespace_of"]

BY = ("server", "category")
OTHER = "other"
_INVALID = re.compile(r"[^A-Za-z0-9_-]+")


def namespace_name(text: str) -> str:
    """``text`` as a namespace name the providers accept (letters, digits, ``_`` and ``-``,
    at most 64 characters)."""
    name = _INVALID.sub("_", text).strip("_")[:64]
    return name or OTHER


def namespace_of(tool: Tool, by: str = "server") -> str:
    """The namespace ``tool`` belongs to when grouping ``by`` server or category."""
    if by == "server" and tool.source == "mcp" and tool.source_id:
        return namespace_name(tool.source_id)
    if tool.category:
        return namespace_name(tool.category)
    return OTHER


@dataclass(frozen=True, slots=True)
class Namespace:
    name: str
    description: str
    tools: tuple[Tool, ...]


def group(tools: Iterable[Tool], by: str = "server", descriptions: Mapping[str, str] | None = None) -> list[Namespace]:
    """``tools`` grouped, in order of first appearance (stable across turns for a stable
    catalog, which keeps provider prompt caches warm). ``descriptions`` overrides the
    generated one-line description of a namespace."""
    if by not in BY:
        raise ValueError(f"namespaces are grouped by {' or '.join(BY)}, not {by!r}")
    groups: dict[str, list[Tool]] = {}
    for tool in tools:
        groups.setdefault(namespace_of(tool, by), []).append(tool)
    given = descriptions or {}
    out = []
    for name, members in groups.items():
        what = "server" if by == "server" and members[0].source == "mcp" else "category"
        described = given.get(name) or f"Tools of the {name} {what} ({len(members)} tools)."
        out.append(Namespace(name, described, tuple(members)))
    return out
