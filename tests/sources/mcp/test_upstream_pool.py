"""An HTTP upstream's connection is kept alive across calls (issue 36), and a pooled connection
never outlives its server: after the upstream restarts, calls get a structured error, then
work again on a fresh connection.

The upstream is the scripted fake served in the test's loop, behind a recorder of the TCP
connection (the client's port) each ``tools/call`` arrived on.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest

from _procs import free_port
from _wait import until
from mcp_fixtures.asgi import ToolCalls, read_body, serving
from mcp_fixtures.fake_upstream import build
from toolscout.errors import UpstreamUnavailable
from toolscout.sources.mcp.config import parse_config
from toolscout.sources.mcp.upstream import Upstream

CALLS = 10


@asynccontextmanager
async def upstream_at(url: str) -> AsyncIterator[Upstream]:
    config = parse_config({"mcpServers": {"up": {"url": f"{url}/mcp", "connectTimeout": 10}}}).enabled()["up"]
    upstream = Upstream("up", config)
    try:
        yield upstream
    finally:
        await upstream.aclose()


def _text(result: dict[str, Any]) -> str:
    return "".join(part.get("text", "") for part in result.get("content", []))


async def test_calls_reuse_one_kept_alive_connection() -> None:
    recorder = ToolCalls(build("normal").streamable_http_app(host="127.0.0.1"))
    async with serving(recorder) as url, upstream_at(url) as upstream:
        for i in range(CALLS):
            assert _text(await upstream.call("echo", {"text": f"call {i}"})) == f"call {i}"
    assert len(recorder.ports) == CALLS
    # A connection per call would give CALLS ports; a response whose end arrives a moment late
    # may cost one call a fresh connection, never most of them.
    assert len(set(recorder.ports)) <= CALLS // 3, recorder.ports


async def test_after_the_upstream_restarts_a_call_fails_clearly_then_a_fresh_connection_works() -> None:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    first = ToolCalls(build("normal").streamable_http_app(host="127.0.0.1"))
    async with upstream_at(url) as upstream:
        async with serving(first, port):
            assert _text(await upstream.call("echo", {"text": "before"})) == "before"
        # the server is gone, the pooled connection still open on our side
        with pytest.raises(UpstreamUnavailable) as info:
            await upstream.call("echo", {"text": "while down"})
        assert info.value.code == "upstream_unavailable" and "'up'" in info.value.message
        assert upstream.status()["state"] == "failed"
        # back on the same port: the background retry reconnects, calls go out on a new connection
        second = ToolCalls(build("normal").streamable_http_app(host="127.0.0.1"))
        async with serving(second, port):
            assert await until(lambda: upstream.status()["state"] == "ready", 60)
            assert _text(await upstream.call("echo", {"text": "after"})) == "after"
    assert first.ports and second.ports and not set(second.ports) & set(first.ports)


class Lingering:
    """A streamable HTTP server (stateless answers, plain ASGI) whose ``tools/call`` answer is an
    SSE event on a stream it then keeps open until the client goes: the end a kept-alive
    connection waits for never comes."""

    def __init__(self) -> None:
        self.ports: list[int] = []
        self.release = asyncio.Event()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        if scope["method"] != "POST":
            await send({"type": "http.response.start", "status": 405, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        request = json.loads(await read_body(receive))
        method, rid = request.get("method"), request.get("id")
        if rid is None:  # a notification
            await send({"type": "http.response.start", "status": 202, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        result: dict[str, Any] = {}
        if method == "initialize":
            result = {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "lingering", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": [{"name": "echo", "inputSchema": {"type": "object"}}]}
        elif method == "tools/call":
            self.ports.append(scope["client"][1])
            text = str(request["params"]["arguments"].get("text"))
            event = json.dumps({"jsonrpc": "2.0", "id": rid, "result": {"content": [{"type": "text", "text": text}]}})
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
            await send({"type": "http.response.body", "body": f"event: message\ndata: {event}\n\n".encode(), "more_body": True})
            await self.release.wait()  # holds the stream open; set when the test ends
            await send({"type": "http.response.body", "body": b""})
            return
        else:
            error = {"jsonrpc": "2.0", "id": rid, "error": {"code": -32601, "message": "no such method"}}
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
            await send({"type": "http.response.body", "body": json.dumps(error).encode()})
            return
        answer = json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": answer})


async def test_an_answer_whose_stream_never_ends_neither_holds_the_call_nor_the_next_one() -> None:
    server = Lingering()
    async with serving(server) as url, upstream_at(url) as upstream:
        try:
            for i in range(3):  # each answer arrives; the stream it came on stays open
                result = await asyncio.wait_for(upstream.call("echo", {"text": f"call {i}"}), 30)
                assert _text(result) == f"call {i}"
            assert upstream.status()["state"] == "ready"
        finally:
            server.release.set()
    # a stream that never ended could not give its connection back: each call had its own
    assert len(set(server.ports)) == 3
