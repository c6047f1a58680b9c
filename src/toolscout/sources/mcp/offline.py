"""The tools a gateway's tool-list cache holds, read with no server running and no config:
what ``toolscout search cache.db`` and the console search when given a gateway's cache.

Each cached ``tools/list`` becomes tools exactly as the aggregator converts them, named
``{server}_{tool}`` (the default prefix; a config's ``prefix`` is not known here). A server
listed twice in the cache keeps its first name, as the aggregator keeps the first server.
"""

from __future__ import annotations

import json
from typing import Any

from ...model import Tool
from .aggregator import _to_tool
from .cache import NAMESPACE
from .config import ServerConfig

__all__ = ["cached_tools"]

_ANY = ServerConfig(command="cached")
"""A server config that keeps every tool (no allow/deny): the cache stored only kept ones."""


def cached_tools(store: Any) -> list[Tool]:
    """Every tool of every server cached in ``store`` (a :class:`~toolscout.storage.Store`)."""
    tools: dict[str, Tool] = {}
    for server in sorted(store.keys(NAMESPACE)):
        entry = store.get(NAMESPACE, server)
        try:
            value = entry.value if isinstance(entry.value, str) else entry.value.decode()
            listed = json.loads(value)
        except (AttributeError, ValueError, UnicodeDecodeError):
            continue  # an unreadable entry: the aggregator would refetch it
        for raw in listed if isinstance(listed, list) else []:
            tool, _problem = _to_tool(server, _ANY, server, raw, check=False)
            if tool is not None:
                tools.setdefault(tool.name, tool)
    return list(tools.values())
