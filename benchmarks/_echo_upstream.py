"""A minimal upstream MCP server on stdio with one ``echo`` tool, for passthrough timings.

Kept apart from the test fixtures (which move as the tests are reorganised) and free of
toolscout imports, so the "before" and "after" gateways forward to exactly the same upstream.

    python benchmarks/_echo_upstream.py              # stdio
    python benchmarks/_echo_upstream.py --http 0     # streamable HTTP on a free port (prints it)
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


async def _list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
    # typed results: the SDK fills in what each protocol version needs (2026-07-28's cache fields)
    return types.ListToolsResult(tools=[types.Tool.model_validate(ECHO)])


async def _call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
    if params.name != "echo":
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"unknown tool {params.name}")], is_error=True)
    text = str((params.arguments or {}).get("text"))
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=False)


def main() -> None:
    import sys

    server = Server("echo-upstream", version="1.0", on_list_tools=_list_tools, on_call_tool=_call_tool)
    if "--http" in sys.argv:
        _serve_http(server, int(sys.argv[sys.argv.index("--http") + 1]))
        return
    options = server.create_initialization_options(NotificationOptions())

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, options)

    anyio.run(run)


def _serve_http(server: Server, port: int) -> None:
    """Serve at ``/mcp`` on 127.0.0.1:``port`` and print the bound port on stdout."""
    import socket

    import uvicorn

    # IPPROTO_TCP, as uvicorn's own host/port sockets: asyncio sets TCP_NODELAY only on sockets
    # that say they are TCP, and without it a JSON answer's body waits ~40 ms for the ACK of
    # its headers (Nagle against the client's delayed ACK) once a connection is reused.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", port))
    print(sock.getsockname()[1], flush=True)
    app = server.streamable_http_app(host="127.0.0.1")
    uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on")).run(sockets=[sock])


if __name__ == "__main__":
    main()
