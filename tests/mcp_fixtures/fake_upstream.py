"""A scripted upstream MCP server for the gateway tests (stdio, or HTTP with ``--http PORT``).

``--mode`` picks a behaviour: ``normal`` (echo/add/fail/grow tools), ``crash`` (``crash``
exits the process mid-call), ``hang`` (``hang`` never answers), ``slow`` (sleeps before
serving), ``malformed`` (some tool schemas are broken), ``many`` (10,000 tools, paginated),
``names`` (reuses ``normal``'s tool names), ``registry`` (``normal`` plus ``register``, which
adds a tool of the given name and announces the change), ``errors`` (``crash`` and ``hang``
plus tools whose JSON-RPC errors look like a lost connection: code -32000, "... is closed"),
``relay`` (tools that ask the client: sampling, elicitation, and log to it). Written with the low-level SDK server so it can
send exactly the (sometimes invalid) JSON a real misbehaving server would.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from typing import Any

import anyio
import mcp_types as types
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

OBJ = "object"


def _tool(name: str, description: str, props: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    schema = {"type": OBJ, "properties": props or {}, "required": sorted(props or {})}
    return {"name": name, "description": description, "inputSchema": schema, **extra}


NORMAL = [
    _tool("echo", "Echo the given text back unchanged.", {"text": {"type": "string"}},
          annotations={"readOnlyHint": True, "title": "Echo"}),
    _tool("add", "Add two integers and return the sum.", {"a": {"type": "integer"}, "b": {"type": "integer"}},
          outputSchema={"type": OBJ, "properties": {"sum": {"type": "integer"}}}),
    _tool("fail", "Always fails with an error result.", annotations={"destructiveHint": True}),
    _tool("grow", "Add a tool named 'extra' and announce the change."),
    _tool("env_probe", "Report whether an environment variable is set.", {"var": {"type": "string"}}),
    _tool("headers_seen", "List the HTTP request headers this server received (HTTP only)."),
]


def tools_for(mode: str, grown: bool) -> list[dict[str, Any]]:
    if mode == "many":
        return [_tool(f"op_{i:05d}", f"Operation number {i} on widget group {i % 97}.") for i in range(10_000)]
    if mode == "malformed":
        return [
            _tool("good_one", "A perfectly fine tool."),
            {"name": "bad_schema", "description": "schema is a string", "inputSchema": "oops"},
            {"name": "bad_type", "description": "type is wrong", "inputSchema": {"type": "array"}},
            {"description": "no name at all", "inputSchema": {"type": OBJ}},
            {"name": "bad name!", "description": "invalid characters", "inputSchema": {"type": OBJ}},
            _tool("good_two", "Another fine tool.", {"x": {"type": "integer"}}),
        ]
    base = list(NORMAL)
    if mode == "crash":
        base.append(_tool("crash", "Exit the server process in the middle of the call."))
        base.append(_tool("pid", "Report this server's process id."))
    if mode == "hang":
        base.append(_tool("hang", "Never answer."))
    if mode == "errors":
        base += [
            _tool("crash", "Exit the server process in the middle of the call."),
            _tool("pid", "Report this server's process id."),
            _tool("hang", "Never answer."),
            _tool("server_error", "Fail with JSON-RPC code -32000 (the generic server error)."),
            _tool("ticket", "Fail with a message that says a ticket is closed."),
        ]
    if mode == "relay":
        base += [
            _tool("sample", "Ask the client's model to complete a prompt.", {"prompt": {"type": "string"}}),
            _tool("ask", "Ask the client's user a question.", {"question": {"type": "string"}}),
            _tool("chatty", "Log three messages to the client while running.", {"tag": {"type": "string"}}),
            _tool("touch", "Change the memo://one resource and tell its subscribers.",
                  icons=[{"src": "https://example.com/touch.png", "mimeType": "image/png"}]),
        ]
    if mode == "registry":
        base.append(_tool("register", "Add a tool of the given name and announce the change.", {"name": {"type": "string"}}))
    if grown:
        base.append(_tool("extra", "A tool that appeared after grow was called."))
    return base


def build(mode: str) -> Server[Any]:
    state: dict[str, Any] = {"grown": False, "registered": {}}
    page = 500

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> dict[str, Any]:
        tools = tools_for(mode, state["grown"]) + list(state["registered"].values())
        start = int(params.cursor) if params is not None and params.cursor else 0
        out: dict[str, Any] = {"tools": tools[start : start + page]}
        if start + page < len(tools):
            out["nextCursor"] = str(start + page)
        return out

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> dict[str, Any]:
        args = params.arguments or {}
        name = params.name
        if name == "echo":
            return {"content": [{"type": "text", "text": str(args.get("text"))}], "isError": False}
        if name == "add":
            total = int(args["a"]) + int(args["b"])
            return {"content": [{"type": "text", "text": str(total)}], "structuredContent": {"sum": total}}
        if name == "fail":
            return {"content": [{"type": "text", "text": "it failed on purpose"}], "isError": True}
        if name == "grow":
            state["grown"] = True
            await ctx.session.send_tool_list_changed()
            return {"content": [{"type": "text", "text": "grown"}]}
        if name == "register":  # idempotent: registering a name again changes nothing but announces
            new = str(args["name"])
            state["registered"][new] = _tool(new, f"Registered tool {new.replace('_', ' ')}.")
            await ctx.session.send_tool_list_changed()
            return {"content": [{"type": "text", "text": f"registered {new}"}]}
        if name in state["registered"]:
            return {"content": [{"type": "text", "text": f"ran {name}"}]}
        if name == "env_probe":
            value = "set" if os.environ.get(str(args.get("var"))) else "unset"
            return {"content": [{"type": "text", "text": value}]}
        if name == "headers_seen":
            request = getattr(ctx, "request", None)
            seen = dict(request.headers) if request is not None else {}
            meta = params.meta if isinstance(params.meta, dict) else {}
            if "traceparent" in meta:  # trace context sent in the request (tests/sources/mcp)
                seen["_meta.traceparent"] = str(meta["traceparent"])
            return {"content": [{"type": "text", "text": json.dumps(seen)}]}
        if name == "crash":
            os._exit(3)
        if name == "pid":
            return {"content": [{"type": "text", "text": str(os.getpid())}]}
        if name == "hang":
            await anyio.sleep_forever()
        if name == "server_error":
            raise MCPError(code=-32000, message="server error: the backend refused")
        if name == "ticket":
            raise MCPError(code=-32603, message="Ticket 42 is closed")
        if name == "sample":
            try:
                answer = await ctx.session.create_message(
                    [types.SamplingMessage(role="user", content=types.TextContent(type="text", text=str(args.get("prompt"))))],
                    max_tokens=50,
                    related_request_id=ctx.request_id,
                )
            except MCPError as exc:
                return {"content": [{"type": "text", "text": f"sampling failed: {exc.code} {exc.message}"}], "isError": True}
            return {"content": [{"type": "text", "text": f"model said: {answer.content.text}"}]}
        if name == "ask":
            schema = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}
            try:
                reply = await ctx.session.elicit_form(str(args.get("question")), schema, related_request_id=ctx.request_id)
            except MCPError as exc:
                return {"content": [{"type": "text", "text": f"elicitation failed: {exc.code} {exc.message}"}], "isError": True}
            return {"content": [{"type": "text", "text": f"user {reply.action}: {json.dumps(reply.content)}"}]}
        if name == "touch":
            await ctx.session.send_resource_updated("memo://one")
            return {"content": [{"type": "text", "text": "touched"}]}
        if name == "chatty":
            tag = str(args.get("tag"))
            for level in ("debug", "info", "error"):
                text = f"{tag} {level} key={os.environ.get('RELAY_SECRET', '')}"
                await ctx.session.send_log_message(level, text, logger="chatty", related_request_id=ctx.request_id)
            return {"content": [{"type": "text", "text": f"logged for {tag}"}]}
        if name.startswith("op_"):
            return {"content": [{"type": "text", "text": f"ran {name}"}]}
        return {"content": [{"type": "text", "text": f"unknown tool {name}"}], "isError": True}

    if mode != "relay":
        described = {"description": "Arithmetic and echoes for tests"} if mode == "normal" else {}
        return Server(f"fake-{mode}", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool, **described)

    async def list_resources(ctx: Any, params: Any) -> dict[str, Any]:
        return {"resources": [{"uri": "memo://one", "name": "one", "mimeType": "text/plain"}]}

    async def read_resource(ctx: Any, params: Any) -> dict[str, Any]:
        return {"contents": [{"uri": str(params.uri), "mimeType": "text/plain", "text": "memo one"}]}

    async def subscription(ctx: Any, params: Any) -> dict[str, Any]:
        return {}

    return Server(
        f"fake-{mode}",
        version="1.0",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_subscribe_resource=subscription,
        on_unsubscribe_resource=subscription,
    )


def serve_raw(mode: str) -> None:
    """A hand-rolled stdio JSON-RPC loop: sends tool lists no SDK server would let through."""
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        method, result = msg.get("method"), {}
        if method == "initialize":
            result = {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": f"raw-{mode}", "version": "1.0"},
            }
        elif method == "tools/list":
            result = {"tools": tools_for(mode, False)}
        elif method == "tools/call":
            text = f"ran {msg['params']['name']}"
            result = {"content": [{"type": "text", "text": text}]}
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}) + "\n")
        sys.stdout.flush()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", default="normal")
    parser.add_argument("--delay", type=float, default=0.0)
    parser.add_argument("--http", type=int, default=0)
    args = parser.parse_args()
    if args.delay:
        time.sleep(args.delay)
    if args.mode == "malformed":
        serve_raw(args.mode)
        return
    server = build(args.mode)
    if args.http:
        import uvicorn

        app = server.streamable_http_app(host="127.0.0.1")
        uvicorn.run(app, host="127.0.0.1", port=args.http, log_level="warning")
        return

    options = server.create_initialization_options(NotificationOptions(tools_changed=True))

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, options)

    anyio.run(run)


if __name__ == "__main__":
    sys.exit(main())
