"""The gateway as an MCP server, driven by the official SDK client in-process.

Both protocol paths: ``mode="legacy"`` (2025-11-25, stateful: found tools join the
session's tools/list and list_changed is sent) and ``mode="auto"`` (2026-07-28, stateless:
find, then call_tool). One scripted upstream process serves the whole module.
"""

from __future__ import annotations

import asyncio
import gc
import json
from collections.abc import AsyncIterator

import mcp_types as types
import pytest
import pytest_asyncio
from mcp import Client

from _wait import until
from mcp_fixtures import fake
from toolscout.catalog import Catalog
from toolscout.gateway import Gateway
from toolscout.server.mcp import GatewayServer
from toolscout.sources.mcp.aggregator import Aggregator
from toolscout.sources.mcp.config import parse_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

SECRET = "s3cret-value-123"


async def _serve() -> AsyncIterator[GatewayServer]:
    cfg = parse_config(
        {"mcpServers": {"up": fake("normal", alwaysLoad=["echo", "extra"], env={"UPSTREAM_KEY": SECRET})}, "maxRevealed": 3}
    )
    catalog = Catalog()
    agg = Aggregator(cfg, catalog)
    await agg.start()
    yield GatewayServer(Gateway(catalog, call_timeout=None), agg, max_revealed=cfg.max_revealed)
    await agg.aclose()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def server() -> AsyncIterator[GatewayServer]:
    """One gateway the read-only tests share."""
    async for served in _serve():
        yield served


@pytest_asyncio.fixture(loop_scope="module")
async def own_server() -> AsyncIterator[GatewayServer]:
    """A gateway of its own, for a test that changes its upstream (any test order)."""
    async for served in _serve():
        yield served


def names(result: types.ListToolsResult) -> list[str]:
    return [t.name for t in result.tools]


async def test_stateful_session_reveals_found_tools_and_notifies(server: GatewayServer) -> None:
    notes: list[object] = []

    async def on_message(message: object) -> None:
        notes.append(message)

    async with Client(server.lowlevel, mode="legacy", message_handler=on_message) as client:
        assert client.protocol_version == "2025-11-25"
        assert names(await client.list_tools()) == ["find_tools", "call_tool", "up_echo"]
        found = await client.call_tool("find_tools", {"query": "add two integers", "limit": 1})
        assert not found.is_error
        assert found.structured_content["tool_references"][0]["tool_name"] == "up_add"
        assert found.structured_content["tools"][0]["inputSchema"]["required"] == ["a", "b"]
        assert "up_add" in found.content[0].text
        assert any(isinstance(n, types.ToolListChangedNotification) for n in notes)
        assert names(await client.list_tools()) == ["find_tools", "call_tool", "up_echo", "up_add"]
        direct = await client.call_tool("up_add", {"a": 2, "b": 3})
        assert direct.structured_content == {"sum": 3 + 2} and direct.content[0].text == "5"


async def test_reveal_sets_are_per_session_and_bounded(server: GatewayServer) -> None:
    async with Client(server.lowlevel, mode="legacy") as first, Client(server.lowlevel, mode="legacy") as second:
        await first.call_tool("find_tools", {"query": "add two integers", "limit": 1})
        assert "up_add" in names(await first.list_tools())
        assert "up_add" not in names(await second.list_tools())
        refused = await second.call_tool("up_add", {"a": 1, "b": 1})
        assert refused.is_error and refused.structured_content["error"]["code"] == "not_revealed"
        for query in ("fails with an error", "announce the change", "environment variable", "echo text"):
            await first.call_tool("find_tools", {"query": query, "limit": 1})
        revealed = [n for n in names(await first.list_tools()) if n not in ("find_tools", "call_tool", "up_echo")]
        assert len(revealed) <= 3 and "up_add" not in revealed  # oldest dropped first
    gc.collect()
    assert len(server.router.sessions) == 0  # a closed session's reveal set goes with it


async def test_stateless_client_finds_then_calls_through_call_tool(server: GatewayServer) -> None:
    async with Client(server.lowlevel, mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        await client.call_tool("find_tools", {"query": "add two integers"})
        assert names(await client.list_tools()) == ["find_tools", "call_tool", "up_echo"]  # nothing revealed
        result = await client.call_tool("call_tool", {"name": "up_add", "arguments": {"a": 4, "b": 5}})
        assert result.structured_content == {"sum": 9} and not result.is_error
        by_name = await client.call_tool("up_add", {"a": 1, "b": 1})
        assert by_name.is_error and "call_tool" in by_name.content[0].text


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_errors_are_structured_and_the_session_keeps_working(server: GatewayServer, mode: str) -> None:
    async with Client(server.lowlevel, mode=mode) as client:
        unknown = await client.call_tool("call_tool", {"name": "up_ad", "arguments": {}})
        error = unknown.structured_content["error"]
        assert unknown.is_error and error["code"] == "unknown_tool"
        assert "up_add" in error["details"]["suggestions"] and "Did you mean" in unknown.content[0].text
        bad = await client.call_tool("call_tool", {"name": "up_add", "arguments": {"a": "x"}})
        problems = bad.structured_content["error"]["details"]["errors"]
        assert {p["pointer"] for p in problems} == {"/a", "/b"}
        failed = await client.call_tool("call_tool", {"name": "up_fail", "arguments": {}})
        assert failed.is_error and failed.content[0].text == "it failed on purpose"  # upstream's own
        missing = await client.call_tool("call_tool", {"arguments": {}})
        assert missing.structured_content["error"]["code"] == "invalid_arguments"  # the same code on every surface
        empty = await client.call_tool("find_tools", {"query": ""})
        assert empty.is_error and empty.structured_content["error"]["code"] == "empty_query"
        ok = await client.call_tool("up_echo", {"text": "still here"})  # always-load: callable by name
        assert ok.content[0].text == "still here"


async def test_capabilities_resource_and_secrets(server: GatewayServer) -> None:
    async with Client(server.lowlevel, mode="legacy") as client:
        assert "call_tool(name, arguments)" in client.instructions and "- up (" in client.instructions
        listed = await client.list_resources()
        assert [str(r.uri) for r in listed.resources] == ["toolscout://capabilities"]
        text = (await client.read_resource("toolscout://capabilities")).contents[0].text
        caps = json.loads(text)
        assert caps["tools"] == 6 and caps["server_count"] == 1
        assert caps["servers"]["up"]["state"] == "ready" and "keyword" in caps["search"]["backends"]
        assert caps["limits"]["max_revealed_per_session"] == 3
        assert SECRET not in text and "UPSTREAM_KEY" not in text
        probe = await client.call_tool("call_tool", {"name": "up_env_probe", "arguments": {"var": "UPSTREAM_KEY"}})
        assert probe.content[0].text == "set"  # the upstream got its configured env


async def test_upstream_annotations_pass_through_and_call_tool_is_least_permissive(
    server: GatewayServer,
) -> None:
    async with Client(server.lowlevel, mode="legacy") as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
        assert tools["up_echo"].annotations.read_only_hint is True
        assert tools["find_tools"].annotations.read_only_hint is True
        call = tools["call_tool"].annotations
        assert call.read_only_hint is False and call.destructive_hint is True


async def test_upstream_change_reaches_stateful_sessions(own_server: GatewayServer) -> None:
    """It makes the upstream grow a tool (matched by alwaysLoad 'extra'): its own server, so
    the shared one keeps six tools whatever the order."""
    server = own_server
    notes: list[object] = []

    async def on_message(message: object) -> None:
        notes.append(message)

    async with Client(server.lowlevel, mode="legacy", message_handler=on_message) as client:
        assert "up_extra" not in names(await client.list_tools())
        await client.call_tool("call_tool", {"name": "up_grow", "arguments": {}})
        await until(lambda: "up_extra" in server.gateway.catalog, 10)  # the upstream's list_changed is processed
        await asyncio.sleep(0)
        assert "up_extra" in names(await client.list_tools())
        assert any(isinstance(n, types.ToolListChangedNotification) for n in notes)


async def test_an_upstream_result_carries_the_catalog_name(server: GatewayServer) -> None:
    result = await server.gateway.acall("up_add", {"a": 2, "b": 3})
    assert result.ok and result.tool == "up_add"  # not the upstream's own "add"
    async with Client(server.lowlevel, mode="auto") as client:
        out = await client.call_tool("call_tool", {"name": "up_add", "arguments": {"a": 2, "b": 3}})
    assert not out.is_error and out.content[0].text == result.text()  # the upstream's result, passed on
