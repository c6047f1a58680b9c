"""`toolscout serve` and `toolscout servers`: a real gateway process, the cache, the guards."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from typer.testing import CliRunner

from mcp_fixtures import fake
from mcp_fixtures.fake_upstream import tools_for
from toolscout.cli import app
from toolscout.model import Annotations, Tool
from toolscout.server.mcp_results import least_permissive
from toolscout.sources.mcp.cache import ToolListCache
from toolscout.sources.mcp.config import parse_config
from toolscout.storage import SQLiteStore as Store

runner = CliRunner()


def write(path: Path, servers: dict) -> Path:
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def test_bad_config_stops_before_anything_starts(tmp_path: Path) -> None:
    cfg = write(tmp_path / "servers.json", {"ok": fake("normal"), "broken": {"command": "x", "timeout": "soon"}})
    result = runner.invoke(app, ["serve", "--config", str(cfg), "--no-cache"])
    assert result.exit_code == 2
    assert "server 'broken'" in result.output and "field 'timeout'" in result.output


def test_non_loopback_http_needs_a_token(tmp_path: Path) -> None:
    cfg = write(tmp_path / "servers.json", {"ok": fake("normal")})
    result = runner.invoke(app, ["serve", "-c", str(cfg), "--transport", "http", "--host", "0.0.0.0"])
    assert result.exit_code == 2 and "needs a bearer token" in result.output


def test_servers_command_reports_state_count_and_error(tmp_path: Path) -> None:
    cfg = write(
        tmp_path / "servers.json",
        {
            "good": fake("normal"),
            "gone": {"command": str(tmp_path / "no-such-binary")},
            "off": {**fake("normal"), "enabled": False},
        },
    )
    result = runner.invoke(app, ["servers", "-c", str(cfg), "--cache", str(tmp_path / "c.db"), "--json"])
    rows = json.loads(result.output)
    assert result.exit_code == 1  # 'gone' failed
    assert rows["good"]["state"] == "ready" and rows["good"]["tools"] == 6
    assert rows["gone"]["state"] == "failed" and rows["gone"]["last_error"]
    assert rows["off"]["state"] == "disabled"


async def test_cold_start_answers_from_cache_while_the_server_is_down(tmp_path: Path) -> None:
    """The upstream takes 60 s to start: find_tools still answers at once from the cache,
    and a call to it fails with a structured error while the gateway keeps serving."""
    servers = {"slow": fake("normal", delay=60, connectTimeout=1)}
    cfg_path = write(tmp_path / "servers.json", servers)
    cache_path = tmp_path / "cache.db"
    slow = parse_config({"mcpServers": servers}).servers["slow"]
    with Store(cache_path) as store:
        ToolListCache(store).save("slow", slow.config_hash(), tools_for("normal", False))
    params = StdioServerParameters(
        command=str(Path(sys.executable).with_name("toolscout")),
        args=["serve", "-c", str(cfg_path), "--cache", str(cache_path)],
    )
    async with Client(params, mode="legacy") as client:
        found = await client.call_tool("find_tools", {"query": "echo text back"})
        assert found.structured_content["tool_references"][0]["tool_name"] == "slow_echo"
        down = await client.call_tool("slow_echo", {"text": "x"})
        assert down.is_error and down.structured_content["error"]["code"] == "upstream_unavailable"
        again = await client.call_tool("find_tools", {"query": "add integers"})
        assert not again.is_error


def test_least_permissive_hints() -> None:
    safe = Tool("a", annotations=Annotations(read_only=True, idempotent=True, open_world=False))
    assert least_permissive([safe]) == {
        "readOnlyHint": True,
        "destructiveHint": False,
        "idempotentHint": True,
        "openWorldHint": False,
    }
    hints = least_permissive([safe, Tool("b")])  # unstated hints count as the unsafe defaults
    assert hints["readOnlyHint"] is False and hints["destructiveHint"] is True and hints["openWorldHint"] is True


async def test_stateless_client_over_stdio_starts_the_upstream_on_first_call(tmp_path: Path) -> None:
    servers = {"up": fake("normal")}
    cfg_path = write(tmp_path / "servers.json", servers)
    cache_path = tmp_path / "cache.db"
    with Store(cache_path) as store:
        hash_ = parse_config({"mcpServers": servers}).servers["up"].config_hash()
        ToolListCache(store).save("up", hash_, tools_for("normal", False))
    params = StdioServerParameters(
        command=str(Path(sys.executable).with_name("toolscout")),
        args=["serve", "-c", str(cfg_path), "--cache", str(cache_path)],
    )
    async with Client(params, mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        found = await client.call_tool("find_tools", {"query": "add two integers", "limit": 1})
        assert found.structured_content["tool_references"][0]["tool_name"] == "up_add"
        summed = await client.call_tool("call_tool", {"name": "up_add", "arguments": {"a": 20, "b": 22}})
        assert summed.structured_content == {"sum": 42}  # the upstream was started just now
        caps = json.loads((await client.read_resource("toolscout://capabilities")).contents[0].text)
        assert caps["servers"]["up"]["state"] == "ready"
