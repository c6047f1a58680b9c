"""Prometheus metrics (serve --metrics): off unless asked, counted at the MCP and HTTP
surfaces, upstream states and tool-list cache hits read from the aggregator."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from prometheus_client.parser import text_string_to_metric_families
from typer.testing import CliRunner

from _procs import free_port
from _wait import until
from mcp_fixtures import fake
from mcp_fixtures.asgi import serving
from mcp_fixtures.fake_upstream import tools_for
from toolscout.catalog import Catalog
from toolscout.cli import app as cli
from toolscout.gateway import Gateway
from toolscout.server.app import http_app
from toolscout.server.mcp import GatewayServer
from toolscout.sources.mcp.aggregator import Aggregator
from toolscout.sources.mcp.cache import ToolListCache
from toolscout.sources.mcp.config import parse_config

TOKEN = "metrics-token-123"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def sample(text: str, name: str, **labels: str) -> float:
    """One sample's value from a Prometheus text exposition (0 when absent)."""
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    return 0.0


def _server() -> GatewayServer:
    catalog = Catalog()

    def add(a: int, b: int) -> int:
        return a + b

    catalog.add_function(add, name="math_add", description="Add two integers.")
    return GatewayServer(Gateway(catalog))


@pytest.fixture
async def http() -> AsyncIterator[httpx.AsyncClient]:
    app = http_app(_server(), metrics=True)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
        yield client


async def test_metrics_are_off_unless_asked() -> None:
    app = http_app(_server())
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client:
        assert (await client.get("/metrics")).status_code == 404
        assert (await client.get("/v1/health")).status_code == 200


async def test_http_finds_calls_and_errors_are_counted(http: httpx.AsyncClient) -> None:
    before = (await http.get("/metrics")).text
    assert sample(before, "toolscout_find_seconds_count", surface="http") == 0
    assert sample(before, "toolscout_catalog_tools") == 1

    await http.post("/v1/find", json={"query": "add integers"})
    await http.post("/v1/find", json={"query": "zzqqxx vvbbnn"})
    await http.post("/v1/call", json={"name": "math_add", "arguments": {"a": 1, "b": 2}})
    await http.post("/v1/call", json={"name": "math_ad", "arguments": {}})
    await http.post("/v1/find", json={"query": 5})
    scraped = await http.get("/metrics")
    assert scraped.status_code == 200 and scraped.headers["content-type"].startswith("text/plain")
    text = scraped.text
    assert sample(text, "toolscout_find_seconds_count", surface="http") == 2
    assert sample(text, "toolscout_call_seconds_count", surface="http") == 2
    assert sample(text, "toolscout_call_seconds_sum", surface="http") > 0
    assert sample(text, "toolscout_errors_total", surface="http", op="find", code="no_match") == 1
    assert sample(text, "toolscout_errors_total", surface="http", op="call", code="unknown_tool") == 1
    assert sample(text, "toolscout_errors_total", surface="http", op="find", code="invalid_request") == 1


async def test_mcp_and_http_counted_on_one_port() -> None:
    server = _server()
    async with serving(http_app(server, token=TOKEN, metrics=True)) as url, httpx.AsyncClient(base_url=url) as http:
        assert (await http.get("/metrics")).status_code == 401  # behind the same token
        mcp_http = create_mcp_http_client(headers=AUTH)
        async with Client(streamable_http_client(f"{url}/mcp", http_client=mcp_http), mode="auto") as client:
            await client.call_tool("find_tools", {"query": "add integers"})
            await client.call_tool("call_tool", {"name": "math_add", "arguments": {"a": 1, "b": 2}})
            await client.call_tool("call_tool", {"name": "nope_tool", "arguments": {}})
        await http.post("/v1/find", json={"query": "add integers"}, headers=AUTH)
        text = (await http.get("/metrics", headers=AUTH)).text
    assert sample(text, "toolscout_find_seconds_count", surface="mcp") == 1
    assert sample(text, "toolscout_call_seconds_count", surface="mcp") == 2
    assert sample(text, "toolscout_errors_total", surface="mcp", op="call", code="unknown_tool") == 1
    assert sample(text, "toolscout_find_seconds_count", surface="http") == 1


async def test_upstream_states_and_cache_hits(tmp_path: Path) -> None:
    cfg = parse_config(
        {"mcpServers": {"cached": fake("normal"), "gone": {"command": str(tmp_path / "no-such-binary")}}}
    )
    cache = ToolListCache.open(tmp_path / "cache.db")
    cache.save("cached", cfg.servers["cached"].config_hash(), tools_for("normal", False))
    catalog = Catalog()
    aggregator = Aggregator(cfg, catalog, cache=cache)
    server = GatewayServer(Gateway(catalog, call_timeout=None), aggregator, cold_start_wait=0)
    app = http_app(server, metrics=True)
    assert aggregator.load_cached() == ["cached"]  # what run_with does before serving
    with pytest.raises(Exception):  # noqa: B017 - whatever the spawn error, it fails
        await aggregator.refresh("gone")
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as http:
            text = (await http.get("/metrics")).text
    finally:
        await aggregator.aclose()
    assert sample(text, "toolscout_tool_list_cache_loads_total", result="hit") == 1
    assert sample(text, "toolscout_tool_list_cache_loads_total", result="miss") == 1
    assert sample(text, "toolscout_upstream_state", server="cached", state="idle") == 1
    assert sample(text, "toolscout_upstream_state", server="cached", state="ready") == 0
    assert sample(text, "toolscout_upstream_state", server="gone", state="failed") == 1
    assert sample(text, "toolscout_upstream_tools", server="cached") == 6
    assert sample(text, "toolscout_catalog_tools") == 6


def test_metrics_need_the_http_transport(tmp_path: Path) -> None:
    cfg = tmp_path / "servers.json"
    cfg.write_text(json.dumps({"mcpServers": {"up": fake("normal")}}))
    result = CliRunner().invoke(cli, ["serve", "-c", str(cfg), "--metrics", "--no-cache"])
    assert result.exit_code == 2 and "--metrics needs --transport http" in result.output




@pytest.mark.parametrize("metrics", [True, False])
async def test_serve_exposes_metrics_only_with_the_flag(tmp_path: Path, metrics: bool) -> None:
    cfg = tmp_path / "servers.json"
    cfg.write_text(json.dumps({"mcpServers": {"up": fake("normal")}}))
    port = free_port()
    toolscout = str(Path(sys.executable).with_name("toolscout"))
    args = [toolscout, "serve", "-c", str(cfg), "--no-cache", "--transport", "http", "--port", str(port)]
    proc = subprocess.Popen([*args, *(["--metrics"] if metrics else [])], stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        async with httpx.AsyncClient(base_url=base) as http:

            async def ready() -> bool:
                assert proc.poll() is None, "toolscout serve exited"
                try:
                    return (await http.get("/v1/ready")).status_code == 200
                except httpx.TransportError:
                    return False

            await until(ready, 60, interval=0.05)  # readiness, not timing
            found = await http.post("/v1/find", json={"query": "add two integers", "limit": 1})
            assert found.json()["tool_references"][0]["tool_name"] == "up_add"
            scraped = await http.get("/metrics")
    finally:
        proc.terminate()
        proc.wait(10)
    if not metrics:
        assert scraped.status_code == 404
        return
    assert scraped.status_code == 200
    assert sample(scraped.text, "toolscout_find_seconds_count", surface="http") == 1
    assert sample(scraped.text, "toolscout_upstream_state", server="up", state="ready") == 1
