"""The gateway in front of three real upstream servers nobody here wrote, and the MCP
Inspector CLI as a real client. Installed by .ci/setup-mcp.sh; skipped when absent."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from mcp import Client

from _paths import ROOT
from toolscout.catalog import Catalog
from toolscout.gateway import Gateway
from toolscout.server.mcp import GatewayServer
from toolscout.sources.mcp.aggregator import Aggregator
from toolscout.sources.mcp.cache import ToolListCache
from toolscout.sources.mcp.config import parse_config
from toolscout.storage import SQLiteStore as Store

NODE_BIN = ROOT / ".ci" / "node" / "node_modules" / ".bin"


def _find(name: str) -> str | None:
    for candidate in (NODE_BIN / name, Path(sys.executable).with_name(name)):
        if candidate.exists():
            return str(candidate)
    return shutil.which(name)


EVERYTHING, MEMORY, TIME = _find("mcp-server-everything"), _find("mcp-server-memory"), _find("mcp-server-time")
INSPECTOR = _find("mcp-inspector")
TOOLSCOUT = str(Path(sys.executable).with_name("toolscout"))

pytestmark = [
    pytest.mark.skipif(
        not (EVERYTHING and MEMORY and TIME), reason="real MCP servers not installed (run .ci/setup-mcp.sh)"
    ),
    pytest.mark.asyncio(loop_scope="module"),
]


def servers(tmp: Path) -> dict:
    return {
        "mcpServers": {
            "everything": {"command": EVERYTHING, "args": ["stdio"]},
            "memory": {"command": MEMORY, "env": {"MEMORY_FILE_PATH": str(tmp / "memory.json")}},
            "time": {"command": TIME, "args": ["--local-timezone", "UTC"]},
        }
    }


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("real")
    (tmp / "servers.json").write_text(json.dumps(servers(tmp)))
    return tmp


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def gateway(workdir: Path) -> AsyncIterator[GatewayServer]:
    cfg = parse_config(servers(workdir))
    with Store(workdir / "cache.db") as store:
        agg = Aggregator(cfg, Catalog(), cache=ToolListCache(store))
        await agg.start()
        try:
            yield GatewayServer(Gateway(agg.catalog, call_timeout=None), agg)
        finally:
            await agg.aclose()


async def test_all_three_real_servers_are_aggregated(gateway: GatewayServer) -> None:
    status = gateway.aggregator.status()
    assert {n: s["state"] for n, s in status.items()} == dict.fromkeys(("everything", "memory", "time"), "ready")
    assert status["everything"]["tools"] >= 10 and status["memory"]["tools"] >= 8 and status["time"]["tools"] == 2
    names = set(gateway.gateway.catalog.names())
    assert {"everything_echo", "memory_create_entities", "time_get_current_time"} <= names


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_find_and_call_real_tools_through_the_gateway(gateway: GatewayServer, mode: str) -> None:
    async with Client(gateway.lowlevel, mode=mode) as client:
        found = await client.call_tool("find_tools", {"query": "current time in a timezone", "limit": 3})
        refs = [r["tool_name"] for r in found.structured_content["tool_references"]]
        assert refs[0] == "time_get_current_time"
        now = await client.call_tool("call_tool", {"name": "time_get_current_time", "arguments": {"timezone": "UTC"}})
        assert not now.is_error and now.structured_content["timezone"] == "UTC"
        echo = await client.call_tool("call_tool", {"name": "everything_echo", "arguments": {"message": "hi"}})
        assert "hi" in echo.content[0].text
        bad = await client.call_tool("call_tool", {"name": "time_get_current_time", "arguments": {}})
        assert bad.structured_content["error"]["code"] == "invalid_arguments"


async def test_memory_server_round_trip(gateway: GatewayServer, workdir: Path) -> None:
    async with Client(gateway.lowlevel, mode="legacy") as client:
        await client.call_tool("find_tools", {"query": "create entities in the knowledge graph"})
        entity = {"name": "toolscout", "entityType": "project", "observations": ["fronts MCP servers"]}
        created = await client.call_tool("memory_create_entities", {"entities": [entity]})
        assert not created.is_error
        graph = await client.call_tool("call_tool", {"name": "memory_read_graph", "arguments": {}})
        assert "fronts MCP servers" in json.dumps(graph.structured_content or graph.content[0].text)
    assert (workdir / "memory.json").exists()  # the upstream got its configured env


def _inspector(workdir: Path, *args: str) -> dict:
    home = workdir / "home"
    home.mkdir(exist_ok=True)
    command = [INSPECTOR, "--cli", TOOLSCOUT, "serve", "-c", str(workdir / "servers.json")]
    command += ["--cache", str(workdir / "cache.db"), *args]
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=120, env={**os.environ, "HOME": str(home)}
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.skipif(not INSPECTOR, reason="MCP Inspector CLI not installed (run .ci/setup-mcp.sh)")
async def test_inspector_cli_lists_and_calls_through_the_gateway(gateway: GatewayServer, workdir: Path) -> None:
    listed = _inspector(workdir, "--method", "tools/list")
    assert [t["name"] for t in listed["tools"]][:2] == ["find_tools", "call_tool"]
    called = _inspector(
        workdir,
        "--method", "tools/call", "--tool-name", "call_tool",
        "--tool-arg", "name=time_get_current_time", "--tool-arg", 'arguments={"timezone": "UTC"}',
    )  # fmt: skip
    assert called["isError"] is False and called["structuredContent"]["timezone"] == "UTC"


PROGRAM = """
now = await time_get_current_time(timezone="UTC")
echo = await everything_echo(message="from code mode")
await memory_create_entities(entities=[{"name": NAME, "entityType": "test", "observations": [now["datetime"]]}])
graph = await memory_read_graph()
seen = [e["observations"][0] for e in graph["entities"] if e["name"] == NAME]
print(echo)
{"timezone": now["timezone"], "stored": seen[0] == now["datetime"], "entities": len(graph["entities"])}
"""


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_code_mode_combines_three_real_upstreams(gateway: GatewayServer, mode: str) -> None:
    """serve --code-mode: one execute call through the official client runs a program that
    calls all three real servers and combines their results; only its output comes back."""
    pytest.importorskip("pydantic_monty")
    from toolscout.codemode.runner import code_runner

    inner = Gateway(gateway.aggregator.catalog, call_timeout=None)
    server = GatewayServer(inner, gateway.aggregator, code_mode=True)
    try:
        async with Client(server.lowlevel, mode=mode) as client:
            listed = [t.name for t in (await client.list_tools()).tools]
            assert listed[:3] == ["find_tools", "call_tool", "execute"]
            done = await client.call_tool("execute", {"code": f"NAME = 'code-mode-{mode}'\n{PROGRAM}"})
            assert not done.is_error, done.content[0].text
            text = done.content[0].text
            assert text.startswith("Echo: from code mode\n")
            assert json.loads(text.splitlines()[-1])["stored"] is True
            assert done.structured_content["tool_calls"] == 4
            bad = await client.call_tool("execute", {"code": "x = 1\nawait time_get_current_time()"})
            assert bad.is_error and bad.structured_content["error"]["code"] == "invalid_arguments"
            assert bad.structured_content["error"]["details"]["line"] == 2
            again = await client.call_tool("call_tool", {"name": "everything_echo", "arguments": {"message": "still here"}})
            assert "still here" in again.content[0].text
    finally:
        await code_runner(inner).aclose()
