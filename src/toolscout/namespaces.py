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

from .access.visibility import Allow, Visibility
from .catalog_base import BaseCatalog
from .errors import NoMatch
from .model import Tool

__all__ = ["BY", "OTHER", "Namespace", "NamespaceBrowser", "group", "namespace_name", "namespace_of"]

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


class NamespaceBrowser:
    """``find_tools("namespace:github")`` (or just ``github``, an upstream server's name no
    tool has): the whole visible group instead of a ranking.

    Servers' namespaces are cached per catalog generation: a one-word query asks this, so
    it must not walk the catalog each time."""

    def __init__(self, catalog: BaseCatalog, visibility: Visibility) -> None:
        self.catalog = catalog
        self.visibility = visibility
        self._servers: tuple[int, dict[str, tuple[str, list[Tool]]]] | None = None

    def asked(self, query: str, allow: Allow | None) -> str | None:
        """The namespace a query asks for as a whole, else ``None`` (a hidden server's
        name is just words: it is searched like any query)."""
        text = query.strip()
        if text[:10].lower() == "namespace:":
            return namespace_name(text[10:].strip()) if text[10:].strip() else ""
        if " " in text or not text or self.catalog.get(text) is not None:
            return None
        servers = self._server_namespaces()
        found = servers.get(namespace_name(text).lower()) if servers else None
        if found is None or not any(self.visibility.admits(t, allow) for t in found[1]):
            return None
        return found[0]

    def members(self, space: str, allow: Allow | None) -> list[Tool]:
        """Every visible tool of ``space`` (by server, else category); a ``no_match``
        naming the visible namespaces when it has none."""
        members: list[Tool] = []
        seen: set[str] = set()
        lowered = space.lower()
        for tool in self.catalog:
            if tool.kind != "tool" or not self.visibility.admits(tool, allow):
                continue
            mine = namespace_of(tool, "server")
            seen.add(mine)
            if mine.lower() == lowered or (tool.category and namespace_name(tool.category).lower() == lowered):
                members.append(tool)
        if not members:
            raise NoMatch(
                f"no namespace named {space!r}",
                hint="Use one of the listed namespaces, or describe the task instead.",
                namespaces=sorted(seen),
            )
        return members

    def _server_namespaces(self) -> dict[str, tuple[str, list[Tool]]]:
        generation = self.catalog.generation
        cached = self._servers
        if cached is not None and cached[0] == generation:
            return cached[1]
        spaces: dict[str, tuple[str, list[Tool]]] = {}
        for tool in self.catalog:
            if tool.source == "mcp" and tool.source_id:
                name = namespace_name(tool.source_id)
                spaces.setdefault(name.lower(), (name, []))[1].append(tool)
        self._servers = (generation, spaces)
        return spaces
