"""DNS-rebinding guard on the HTTP gateway: Host and Origin checked for every loopback
notation, Origin checked on token-protected binds, 403 with a JSON body, and legitimate
clients (the official SDK, no Origin) unaffected."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from typer.testing import CliRunner

from _procs import free_port
from mcp_fixtures import fake
from mcp_fixtures.asgi import serving
from toolscout.catalog import Catalog
from toolscout.cli import app as cli
from toolscout.gateway import Gateway
from toolscout.server.app import http_app
from toolscout.server.guard import HostOriginGuard, is_loopback
from toolscout.server.mcp import GatewayServer

LOOPBACK_BINDS = ["127.0.0.1", "127.0.0.2", "0:0:0:0:0:0:0:1", "[::1]", "::1", "localhost", "127.1"]
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
TOKEN = "tok-123"


@pytest.mark.parametrize("host", [*LOOPBACK_BINDS, "127.255.255.254", "LOCALHOST", "[0:0:0:0:0:0:0:1]", "::ffff:127.0.0.1"])
def test_every_loopback_notation_is_loopback(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "10.1.2.3", "evil.example", "localhost.evil.example", ""])
def test_other_hosts_are_not_loopback(host: str) -> None:
    assert not is_loopback(host)


def _gateway() -> GatewayServer:
    catalog = Catalog()
    catalog.add_function(lambda: "pong", name="widget", description="A widget.")
    return GatewayServer(Gateway(catalog))


async def _ok(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """Stands in for the MCP app: reached only if the guard lets the request through."""
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b"ok"})


async def _post(app: Any, headers: dict[str, str], token: str | None = None) -> httpx.Response:
    extra = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1:8765") as http:
        return await http.post("/mcp", headers={**HEADERS, **extra, **headers}, json=PING)


def _refused(reply: httpx.Response, error: str) -> bool:
    body = reply.json()
    return reply.status_code == 403 and body["error"] == error and "--allow-" in body["hint"]


@pytest.mark.parametrize("bind", LOOPBACK_BINDS)
async def test_loopback_binds_refuse_foreign_host_and_origin(bind: str) -> None:
    app = http_app(_gateway(), host=bind)  # the real app: the guard answers before the SDK
    assert _refused(await _post(app, {"Host": "evil.example:8765"}), "forbidden_host")
    assert _refused(await _post(app, {"Host": "evil.example"}), "forbidden_host")
    evil_origin = {"Host": "127.0.0.1:8765", "Origin": "http://evil.example:8765"}
    assert _refused(await _post(app, evil_origin), "forbidden_origin")
    assert _refused(await _post(app, {"Origin": "null"}), "forbidden_origin")


@pytest.mark.parametrize("bind", LOOPBACK_BINDS)
@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"Host": "localhost:8765"},
        {"Host": "[::1]:8765", "Origin": "http://[::1]:3000"},
        {"Host": "127.0.0.2", "Origin": "http://localhost:5173"},
        {"Host": "127.1:8765"},
        {"Host": "[0:0:0:0:0:0:0:1]:8765", "Origin": "https://127.0.0.1"},
    ],
)
async def test_loopback_binds_accept_loopback_host_and_origin(bind: str, headers: dict[str, str]) -> None:
    reply = await _post(HostOriginGuard(_ok, bind=bind), headers)
    assert reply.status_code == 200


async def test_allow_lists_extend_a_loopback_bind() -> None:
    guard = HostOriginGuard(
        _ok,
        bind="127.0.0.1",
        allow_hosts=["gw.example"],
        allow_origins=["https://app.example.com", "http://dev.test:*", "chrome-extension://abcdef"],
    )
    assert (await _post(guard, {"Origin": "chrome-extension://abcdef"})).status_code == 200
    assert (await _post(guard, {"Host": "gw.example:443", "Origin": "https://app.example.com"})).status_code == 200
    assert (await _post(guard, {"Origin": "https://APP.example.com:443"})).status_code == 200
    assert (await _post(guard, {"Origin": "http://dev.test:9000"})).status_code == 200
    assert _refused(await _post(guard, {"Origin": "http://app.example.com"}), "forbidden_origin")  # scheme differs
    assert _refused(await _post(guard, {"Host": "gw.example.evil"}), "forbidden_host")


async def test_token_protected_public_bind_validates_origin_too() -> None:
    app = http_app(_gateway(), host="0.0.0.0", token=TOKEN, allow_origins=["https://app.example.com"])
    # Host is not checked here (the public name is unknown) but a browser Origin is, token or not.
    evil = {"Host": "gw.example", "Origin": "http://evil.example"}
    assert _refused(await _post(app, evil, token=TOKEN), "forbidden_origin")
    assert _refused(await _post(app, {"Origin": "http://localhost:3000"}, token=TOKEN), "forbidden_origin")
    allowed = await _post(app, {"Host": "gw.example", "Origin": "https://app.example.com"})
    assert allowed.status_code == 401  # past the Origin check, then the token is required
    assert (await _post(app, {"Host": "gw.example"})).status_code == 401


def test_bad_allow_lists_are_refused_up_front() -> None:
    for bad in (["app.example.com"], ["https://app.example.com/path"], ["*"], ["localhost:3000"]):
        with pytest.raises(ValueError, match="--allow-origin"):
            HostOriginGuard(_ok, bind="127.0.0.1", allow_origins=bad)
    with pytest.raises(ValueError, match="--allow-host"):
        HostOriginGuard(_ok, bind="127.0.0.1", allow_hosts=["gw.example:port"])


async def test_served_gateway_refuses_rebinding_and_serves_the_sdk_client() -> None:
    app = http_app(_gateway(), host="127.0.0.1", allow_hosts=["gw.example"])
    async with serving(app) as url:
        async with httpx.AsyncClient() as http:
            evil = await http.post(f"{url}/mcp", headers={**HEADERS, "Host": "evil.example"}, json=PING)
            bad_origin = await http.post(f"{url}/mcp", headers={**HEADERS, "Origin": "http://evil.example"}, json=PING)
            init = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "r", "version": "1"}},
            }
            # an allowed Host without a port: the SDK's own (narrower) check would answer 421
            named = await http.post(f"{url}/mcp", headers={**HEADERS, "Host": "gw.example"}, json=init)
        assert _refused(evil, "forbidden_host") and _refused(bad_origin, "forbidden_origin")
        assert named.status_code == 200
        async with Client(streamable_http_client(f"{url}/mcp"), mode="legacy") as client:
            found = await client.call_tool("find_tools", {"query": "widget"})
            assert found.structured_content["tool_references"][0]["tool_name"] == "widget"


def _serve_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> tuple[Any, list[Any]]:
    """Run ``toolscout serve --transport http`` with uvicorn replaced: the app it would serve."""
    configs: list[Any] = []

    class FakeServer:
        def __init__(self, config: uvicorn.Config) -> None:
            configs.append(config)

        async def serve(self) -> None:
            return None

    monkeypatch.setattr(uvicorn, "Server", FakeServer)
    cfg = tmp_path / "servers.json"
    cfg.write_text(json.dumps({"mcpServers": {"up": fake("normal")}}))
    cache = str(tmp_path / "cache.db")
    port = str(free_port())  # serve binds --port first: never assume the default 8765 is free
    result = CliRunner().invoke(cli, ["serve", "-c", str(cfg), "--cache", cache, "--transport", "http", "--port", port, *args])
    return result, configs


def test_cli_wires_the_guard_for_any_loopback_notation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result, configs = _serve_cli(
        tmp_path, monkeypatch, "--host", "[::1]", "--allow-origin", "https://app.example.com", "--allow-host", "gw.example"
    )
    assert result.exit_code == 0, result.output
    assert configs[0].host == "::1" and f"http://[::1]:{configs[0].port}/mcp" in result.output  # no token needed: loopback
    app = configs[0].app
    assert isinstance(app, HostOriginGuard) and app.loopback
    assert _refused(asyncio.run(_post(app, {"Host": "evil.example"})), "forbidden_host")
    assert app.origin_ok("https://app.example.com") and app.host_ok("gw.example")


def test_cli_refuses_a_malformed_allow_origin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result, configs = _serve_cli(tmp_path, monkeypatch, "--allow-origin", "app.example.com")
    assert result.exit_code == 2 and "--allow-origin" in result.output and not configs
