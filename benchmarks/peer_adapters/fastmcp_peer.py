"""FastMCP's ``BM25SearchTransform``, called the way its ``search_tools`` tool calls it.

``_search(tools, query)`` is the transform's own ranking step: on each query it re-hashes
the catalogue to detect staleness, then scores every document in pure Python.
"""

from __future__ import annotations

import asyncio
from typing import Any


def build(method: str, tools: list[dict[str, Any]], ctx: dict[str, Any]):
    from fastmcp.server.transforms.search import BM25SearchTransform
    from fastmcp.tools.base import Tool

    catalog = [
        Tool(
            name=t["name"],
            description=t.get("description") or "",
            parameters=t.get("input_schema") or {},
        )
        for t in tools
    ]
    transform = BM25SearchTransform(max_results=ctx["k"])
    loop = asyncio.new_event_loop()

    def search(query: str, k: int) -> list[str]:
        found = loop.run_until_complete(transform._search(catalog, query))
        return [t.name for t in found]

    return search
