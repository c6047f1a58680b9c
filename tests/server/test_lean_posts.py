"""A stateful session's request POSTs are served without the SDK's SSE machinery (issue 36,
:mod:`toolscout.server.lean_posts`): an answer that comes first is one JSON body; a request
that stays silent gets its SSE stream with a keep-alive comment, then its answer on it."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import pytest

from mcp_fixtures.asgi import serving
from toolscout import Catalog, Tool
from toolscout.gateway import Gateway
from toolscout.server import lean_posts
from toolscout.server.app import http_app
from toolscout.server.mcp import GatewayServer

HEADERS = {"accept": "application/json, text/event-stream", "content-type": "application/json"}


def _rpc(rid: int | None, method: str, params: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
    if rid is not None:
        body["id"] = rid
    return body


async def test_a_silent_request_gets_its_stream_a_keep_alive_then_its_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    release = asyncio.Event()

    async def slow(args: dict[str, Any]) -> str:
        await release.wait()  # until the test has seen the keep-alive
        return "late answer"

    cat = Catalog()
    cat.add(Tool("slow", "Answer when released.", {"type": "object"}), handler=slow)
    cat.add(Tool("quick", "Answer at once.", {"type": "object"}), handler=lambda args: "quick answer")
    server = GatewayServer(Gateway(cat, call_timeout=None))
    async with serving(http_app(server)) as url, httpx.AsyncClient(base_url=url, headers=HEADERS) as http:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
        opened = await http.post("/mcp", json=_rpc(1, "initialize", init))
        assert opened.status_code == 200 and opened.headers["content-type"].startswith("application/json")
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        assert (await http.post("/mcp", json=_rpc(None, "notifications/initialized", {}), headers=session)).status_code == 202
        assert [type(t).__name__ for t in server.lowlevel.session_manager._server_instances.values()] == ["LeanPostsTransport"]

        quick = await http.post("/mcp", json=_rpc(2, "tools/call", {"name": "call_tool", "arguments": {"name": "quick", "arguments": {}}}), headers=session)
        assert quick.headers["content-type"].startswith("application/json")
        assert quick.json()["result"]["content"][0]["text"] == "quick answer"

        monkeypatch.setattr(lean_posts, "KEEP_ALIVE", 0.05)  # the silence before the stream starts
        call = {"name": "call_tool", "arguments": {"name": "slow", "arguments": {}}}
        async with http.stream("POST", "/mcp", json=_rpc(3, "tools/call", call), headers=session) as streamed:
            assert streamed.headers["content-type"].startswith("text/event-stream")
            assert streamed.headers["mcp-session-id"] == session["mcp-session-id"]
            seen = b""
            async for part in streamed.aiter_bytes():
                seen += part
                if b": ping" in seen and not release.is_set():
                    release.set()
            assert seen.startswith(b": ping\r\n\r\n")
            assert b'"id":3' in seen and b"late answer" in seen


async def test_an_sdk_without_the_steps_it_uses_keeps_its_own_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """An SDK release that renames one of the transport's private steps must not break a
    request: sessions are left to the SDK's own transport, which answers as it always did."""
    from mcp.server.streamable_http import StreamableHTTPServerTransport

    cat = Catalog()
    cat.add(Tool("quick", "Answer at once.", {"type": "object"}), handler=lambda args: "quick answer")
    server = GatewayServer(Gateway(cat, call_timeout=None))
    lean_posts._sdk_has_what_it_needs.cache_clear()
    with monkeypatch.context() as renamed:  # while the app is built: an SDK without the step
        renamed.delattr(StreamableHTTPServerTransport, "_create_session_message")
        app = http_app(server)
    lean_posts._sdk_has_what_it_needs.cache_clear()
    async with serving(app) as url, httpx.AsyncClient(base_url=url, headers=HEADERS) as http:
        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}
        opened = await http.post("/mcp", json=_rpc(1, "initialize", init))
        session = {"mcp-session-id": opened.headers["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        transports = server.lowlevel.session_manager._server_instances.values()  # the seam: which transport serves
        assert [type(t).__name__ for t in transports] == ["StreamableHTTPServerTransport"]
        call = {"name": "call_tool", "arguments": {"name": "quick", "arguments": {}}}
        quick = await http.post("/mcp", json=_rpc(2, "tools/call", call), headers=session)
        assert "quick answer" in quick.text
