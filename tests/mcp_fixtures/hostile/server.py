"""A hostile upstream MCP server over stdio; ``--mode`` picks how it misbehaves.

- ``slow_first``: sleeps ``--first-delay`` s before serving, the first time only (a marker
  file ``--marker`` remembers the first start), like an ``npx`` server downloading itself.
- ``deep``: its ``tools/list`` holds one tool whose schema is nested ``--depth`` levels deep
  (too deep for the SDK's JSON parser) between two good tools.
- ``leaky``: prints its whole environment to stderr on start, then serves normally.
- ``exit_start``: prints an error to stderr and exits 1 before reading anything.
- ``garbage``: writes non-JSON-RPC lines to stdout around every answer.
- ``tricky``: a real SDK server with tools that report progress (``steps``), wait until
  cancelled (``wait_cancel``, then ``cancel_seen`` says whether the cancel arrived), send a
  ``list_changed`` storm (``storm``; ``lists`` counts the ``tools/list`` requests served) and
  return 5 MB (``big``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import anyio
from fake_upstream import NORMAL, _tool
from fake_upstream import build as build_normal
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.stdio import stdio_server

BIG = 5 * 1024 * 1024
STORM = 200


DEEP = "__deep_schema__"


def deep_schema(depth: int) -> str:
    """The JSON text of an object schema with ``depth`` levels of nested ``properties``
    (written as text: ``json.dumps`` itself gives up past about 1000 levels)."""
    return '{"type": "object", "properties": {"inner": ' * depth + '{"type": "string"}' + "}}" * depth


def serve_raw(tools: list[dict[str, Any]], garbage: bool = False, deep: str = "") -> None:
    """A hand-rolled stdio JSON-RPC loop, to send what no SDK server would."""
    for line in sys.stdin:
        msg = json.loads(line)
        if "id" not in msg:
            continue
        method, result = msg.get("method"), {}
        if method == "initialize":
            result = {
                "protocolVersion": msg["params"]["protocolVersion"],
                "capabilities": {"tools": {"listChanged": False}},
                "serverInfo": {"name": "hostile", "version": "1.0"},
            }
        elif method == "tools/list":
            result = {"tools": tools}
        elif method == "tools/call":
            result = {"content": [{"type": "text", "text": f"ran {msg['params']['name']}"}]}
        if garbage:
            sys.stdout.write('Loading model weights... 42%\n{"half": \n[1, 2, 3]\n\n')
        answer = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result})
        sys.stdout.write(answer.replace(json.dumps(DEEP), deep) + "\n")
        if garbage:
            sys.stdout.write('{"jsonrpc": "2.0", "method": 7}\nnot json at all \x7f\n')
        sys.stdout.flush()


def build_tricky() -> Server[Any]:
    state: dict[str, Any] = {"lists": 0, "cancelled": anyio.Event()}
    tools = [
        _tool("echo", "Echo the given text back unchanged.", {"text": {"type": "string"}}),
        _tool("steps", "Report three progress steps, then finish."),
        _tool("wait_cancel", "Report that it started, then wait until cancelled."),
        _tool("cancel_seen", "Whether wait_cancel saw its cancellation (waits up to 10 s)."),
        _tool("storm", f"Send {STORM} tools/list_changed notifications at once."),
        _tool("lists", "How many tools/list requests this server answered."),
        _tool("big", "Return a 5 MB text result."),
    ]

    async def list_tools(ctx: Any, params: Any) -> dict[str, Any]:
        state["lists"] += 1
        return {"tools": tools}

    async def call_tool(ctx: Any, params: Any) -> dict[str, Any]:
        name, args = params.name, params.arguments or {}
        text = ""
        if name == "echo":
            text = str(args.get("text"))
        elif name == "steps":
            for i in range(1, 4):
                await ctx.session.report_progress(i, 3, f"step {i}")
            text = "done"
        elif name == "wait_cancel":
            await ctx.session.report_progress(0, None, "started")
            try:
                await anyio.sleep_forever()
            finally:  # a cancel from the client interrupts the sleep
                state["cancelled"].set()
        elif name == "cancel_seen":
            with anyio.move_on_after(10):
                await state["cancelled"].wait()
            text = "yes" if state["cancelled"].is_set() else "no"
        elif name == "storm":
            for _ in range(STORM):
                await ctx.session.send_tool_list_changed()
            text = "stormed"
        elif name == "lists":
            text = str(state["lists"])
        elif name == "big":
            text = "x" * BIG
        return {"content": [{"type": "text", "text": text}]}

    return Server("hostile-tricky", version="1.0", on_list_tools=list_tools, on_call_tool=call_tool)


def serve_sdk(server: Server[Any]) -> None:
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))

    async def run() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, options)

    anyio.run(run)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mode", required=True)
    parser.add_argument("--marker", default="")
    parser.add_argument("--first-delay", type=float, default=0.0)
    parser.add_argument("--depth", type=int, default=130)
    args = parser.parse_args()
    mode = args.mode
    if mode == "slow_first":
        marker = Path(args.marker)
        if not marker.exists():
            marker.write_text(str(os.getpid()))
            time.sleep(args.first_delay)
        serve_sdk(build_normal("normal"))
    elif mode == "deep":
        bad = {
            "name": "too_deep",
            "description": "Nested far too deep.",
            "inputSchema": DEEP,
        }
        serve_raw([NORMAL[0], bad, NORMAL[1]], deep=deep_schema(args.depth))
    elif mode == "leaky":
        for key, value in sorted(os.environ.items()):
            print(f"{key}={value}", file=sys.stderr)
        sys.stderr.flush()
        serve_sdk(build_normal("normal"))
    elif mode == "exit_start":
        print("fatal: no configuration found", file=sys.stderr)
        sys.exit(1)
    elif mode == "garbage":
        serve_raw(list(NORMAL), garbage=True)
    elif mode == "tricky":
        serve_sdk(build_tricky())
    else:
        sys.exit(f"unknown mode {mode}")


if __name__ == "__main__":
    main()
