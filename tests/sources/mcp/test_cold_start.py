"""Cold start: with no cached tool list, the first find_tools waits (bounded) for upstreams
that have never listed, and says which are still loading or failed instead of a bare
no_match."""

from __future__ import annotations

import asyncio
from pathlib import Path

from mcp import Client

from mcp_fixtures import fake
from toolscout.catalog import Catalog
from toolscout.gateway import Gateway
from toolscout.server.mcp import GatewayServer
from toolscout.sources.mcp.aggregator import Aggregator
from toolscout.sources.mcp.config import parse_config


def _server(servers: dict, *, wait: float) -> tuple[GatewayServer, Aggregator]:
    catalog = Catalog()
    aggregator = Aggregator(parse_config({"mcpServers": servers}), catalog)  # no cache: a first start
    return GatewayServer(Gateway(catalog, call_timeout=None), aggregator, cold_start_wait=wait), aggregator


async def test_the_first_search_waits_for_a_starting_upstream() -> None:
    server, aggregator = _server({"up": fake("normal", delay=0.5)}, wait=30)
    starting = asyncio.ensure_future(aggregator.start(lazy=True))
    try:
        async with Client(server.lowlevel, mode="auto") as client:
            found = await client.call_tool("find_tools", {"query": "add two integers"})
        assert not found.is_error
        refs = found.structured_content["tool_references"]
        assert refs and refs[0]["tool_name"] == "up_add"
        assert "loading" not in found.structured_content["search_metadata"]
    finally:
        starting.cancel()
        await aggregator.aclose()


async def test_a_failed_upstream_is_named_in_the_result(tmp_path: Path) -> None:
    servers = {"up": fake("normal"), "gone": {"command": str(tmp_path / "no-such-binary")}}
    server, aggregator = _server(servers, wait=30)
    starting = asyncio.ensure_future(aggregator.start(lazy=True))
    try:
        async with Client(server.lowlevel, mode="auto") as client:
            found = await client.call_tool("find_tools", {"query": "add two integers"})
            missing = await client.call_tool("find_tools", {"query": "quantum teleport a llama"})
        # A failed source is reported as failed, with its reason (and next retry), never as loading.
        meta = found.structured_content["search_metadata"]
        assert "loading" not in meta and set(meta["failed"]) == {"gone"} and "no-such-binary" in meta["failed"]["gone"]
        assert "Failed to load (their tools cannot be found until they are back): gone (" in found.content[0].text
        assert "loading" not in found.content[0].text.lower()
        # No match while a source failed: said in the error's details and its text, with a hint
        # that does not promise the source will load in a moment.
        error = missing.structured_content["error"]
        assert error["code"] == "no_match" and "gone" in error["details"]["failed"] and "loading" not in error["details"]
        assert "Failed to load" in missing.content[0].text and "in a moment" not in missing.content[0].text
    finally:
        starting.cancel()
        await aggregator.aclose()


async def test_the_wait_is_bounded(tmp_path: Path) -> None:
    server, aggregator = _server({"slow": fake("normal", delay=60, connectTimeout=30)}, wait=0.3)
    starting = asyncio.ensure_future(aggregator.start(lazy=True))
    try:
        async with Client(server.lowlevel, mode="auto") as client:
            found = await asyncio.wait_for(client.call_tool("find_tools", {"query": "add two integers"}), 20)
        error = found.structured_content["error"]
        assert error["code"] == "no_match" and error["details"]["loading"] == {"slow": "starting"}
        assert "search again in a moment" in found.content[0].text
    finally:
        starting.cancel()
        await aggregator.aclose()
