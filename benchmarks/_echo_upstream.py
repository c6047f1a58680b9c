"""A minimal upstream MCP server on stdio with one ``echo`` tool, for passthrough timings.

Kept apart from the test fixtures (which move as the tests are reorganised) and free of
toolscout imports, so the "before" and "after" gateways forward to exactly the same upstream.

    python benchmarks/_echo_upstream.py
"""

from __future__ import annotations

from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.stdio import stdio_server

ECHO = {
    "name": "echo",
    "description": "Echo the given text back unchanged.",
    "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
    "annotations": {"readOnlyHint": True, "title": "Echo"},
}


async def _list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> dict[str, Any]:
    return {"tools": [ECHO]}


async def _call_tool(ctx: Any, params: types.CallToolRequestParams) -> dict[str, Any]:
    if params.name != "echo":
        return {"content": [{"type": "text", "text": f"unknown tool {params.name}"}], "isError": True}
    text = str((params.arguments or {}).get("text"))
    return {"content": [{"type": "text", "text": text}], "isError": False}


def main() -> None:
    server = Server("echo-upstream", version="1.0", on_list_tools=_list_tools, on_call_tool=_call_tool)
    options = server.create_initialization_options(NotificationOptions())

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, options)

    anyio.run(run)


if __name__ == "__main__":
    main()
