"""The gateway over streamable HTTP on loopback: auth, sessions, both protocol paths,
credentials never forwarded, an upstream reached over HTTP too."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx
import mcp_types as types
import pytest
import pytest_asyncio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from _procs import free_port
from _wait import until
from mcp_fixtures import FAKE
from mcp_fixtures.asgi import serving
from toolscout.catalog import Catalog
from toolscout.gateway import Gateway
from toolscout.server.app import http_app
from toolscout.server.mcp import GatewayServer
from toolscout.sources.mcp.aggregator import Aggregator
from toolscout.sources.mcp.config import parse_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

TOKEN = "client-token-abc"
WIDGETS = 24




def _widget(i: int) -> Any:
    def run(count: int = 1) -> str:
        return f"widget {i} x{count}"

    return run


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def gateway_http() -> AsyncIterator[tuple[str, Catalog]]:
    port = free_port()
    upstream = subprocess.Popen([sys.executable, FAKE, "--http", str(port)], stderr=subprocess.DEVNULL)
    catalog = Catalog()
    for i in range(WIDGETS):
        catalog.add_function(_widget(i), name=f"widget_{i:02d}", description=f"Operate widget number {i:02d}.")
    cfg = parse_config({"mcpServers": {"web": {"url": f"http://127.0.0.1:{port}/mcp", "headers": {"X-Upstream-Key": "k1"}}}})
    agg = Aggregator(cfg, catalog)
    try:

        async def listed() -> bool:
            assert upstream.poll() is None, "the HTTP upstream fixture exited"
            try:
                await agg.refresh("web")
                return True
            except Exception:
                agg.upstreams["web"]._next_attempt = 0.0  # retry now, not after backoff
                return False

        await until(listed, 60, interval=0.05)  # the upstream has bound its port
        assert agg.tool_count("web") == 6
        server = GatewayServer(Gateway(catalog, call_timeout=None), agg, max_revealed=8)
        async with serving(http_app(server, token=TOKEN)) as url:
            yield url, catalog
    finally:
        await agg.aclose()
        upstream.terminate()
        upstream.wait(10)


@pytest.fixture
def base_url(gateway_http: tuple[str, Catalog]) -> str:
    return gateway_http[0]


def connect(url: str, mode: str = "legacy", **kwargs: Any) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {TOKEN}"})
    return Client(streamable_http_client(f"{url}/mcp", http_client=http), mode=mode, **kwargs)


def names(result: types.ListToolsResult) -> list[str]:
    return [t.name for t in result.tools]


async def test_stateful_http_session_reveals_and_forwards_without_client_credentials(base_url: str) -> None:
    notes: list[object] = []

    async def on_message(message: object) -> None:
        notes.append(message)

    async with connect(base_url, message_handler=on_message) as client:
        assert client.protocol_version == "2025-11-25"
        found = await client.call_tool("find_tools", {"query": "headers this server received", "limit": 1})
        assert found.structured_content["tool_references"][0]["tool_name"] == "web_headers_seen"
        assert any(isinstance(n, types.ToolListChangedNotification) for n in notes)
        assert "web_headers_seen" in names(await client.list_tools())
        seen = json.loads((await client.call_tool("web_headers_seen", {})).content[0].text)
        assert seen.get("x-upstream-key") == "k1"  # the upstream's own configured header
        assert TOKEN not in json.dumps(seen) and "authorization" not in seen


async def test_stateless_http_client_finds_then_calls(base_url: str) -> None:
    async with connect(base_url, mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        await client.call_tool("find_tools", {"query": "widget number 07"})
        result = await client.call_tool("call_tool", {"name": "widget_07", "arguments": {"count": 3}})
        assert result.content[0].text == "widget 7 x3"
        upstream = await client.call_tool("call_tool", {"name": "web_add", "arguments": {"a": 1, "b": 2}})
        assert upstream.structured_content == {"sum": 3}


@pytest.mark.parametrize("auth", [None, "Bearer wrong", f"Basic {TOKEN}"])
async def test_requests_without_the_token_are_refused(base_url: str, auth: str | None) -> None:
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    if auth:
        headers["Authorization"] = auth
    async with httpx.AsyncClient() as http:
        reply = await http.post(f"{base_url}/mcp", headers=headers, json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert reply.status_code == 401 and reply.json()["error"] == "unauthorized"


async def test_missing_session_header_is_rejected_and_service_continues(base_url: str) -> None:
    headers = {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "Authorization": f"Bearer {TOKEN}",
    }
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
    }
    async with httpx.AsyncClient() as http:
        first = await http.post(f"{base_url}/mcp", headers=headers, json=init)
        assert first.status_code == 200 and first.headers.get("mcp-session-id")
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
        orphan = await http.post(f"{base_url}/mcp", headers=headers, json=listing)
    assert orphan.status_code == 400
    async with connect(base_url) as client:  # everything else keeps working
        assert "find_tools" in names(await client.list_tools())


async def test_concurrent_http_sessions_never_see_each_others_tools(base_url: str) -> None:
    async def one(i: int) -> tuple[int, list[str]]:
        async with connect(base_url) as client:
            await client.call_tool("find_tools", {"query": f"widget_{i:02d}", "limit": 1})
            return i, names(await client.list_tools())

    results = await asyncio.gather(*(one(i) for i in range(12)))
    for i, listed in results:
        widgets = [n for n in listed if n.startswith("widget_")]
        assert widgets == [f"widget_{i:02d}"]


async def test_http_upstream_list_changed_refreshes_the_catalog(gateway_http: tuple[str, Catalog]) -> None:
    """Runs last: the HTTP upstream grows a tool and announces it; the gateway picks it up."""
    url, catalog = gateway_http
    async with connect(url) as client:
        await client.call_tool("call_tool", {"name": "web_grow", "arguments": {}})
    await until(lambda: "web_extra" in catalog, 10)  # the notification is processed
    assert "web_extra" in catalog and catalog.get("web_extra").original_name == "extra"
