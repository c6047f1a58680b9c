"""Gateway replicas sharing sessions through a real Redis (``serve --sessions redis://``),
driven by the official MCP SDK client through a balancer that moves every request to
whichever replica it is told: a session revealed on one replica is called by name on the
other, killing a replica loses no session, and Redis restarting while serving gives
structured errors, then recovers without restarting the gateway."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
import httpx2
import mcp_types as types
import pytest
import redis
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from _procs import free_port, wait_http
from _redis import RedisServer
from mcp_fixtures import fake
from mcp_fixtures.asgi import serving
from toolscout.catalog import Catalog
from toolscout.gateway import Gateway
from toolscout.server.app import http_app
from toolscout.server.mcp import GatewayServer
from toolscout.sessions.redis import RedisSessionStore

ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class Balancer(httpx2.AsyncBaseTransport):
    """A load balancer without affinity, as the client sees it: each request goes to the
    replica ``target`` names now, with the same headers (the ``Mcp-Session-Id`` too)."""

    def __init__(self, ports: dict[str, int], target: str) -> None:
        self.ports = ports
        self.target = target
        self.inner = httpx2.AsyncHTTPTransport()
        self.seen: list[str] = []

    async def handle_async_request(self, request: Any) -> Any:
        self.seen.append(self.target)
        request.url = request.url.copy_with(port=self.ports[self.target])
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def connect(balancer: Balancer) -> Client:
    http = httpx2.AsyncClient(transport=balancer, timeout=httpx2.Timeout(30.0, read=300.0))
    first = next(iter(balancer.ports.values()))
    return Client(streamable_http_client(f"http://127.0.0.1:{first}/mcp", http_client=http), mode="legacy")


def names(result: types.ListToolsResult) -> set[str]:
    return {t.name for t in result.tools}


# -- two `toolscout serve` processes --------------------------------------------------------
@pytest.fixture
def replicas(redis_server: RedisServer, tmp_path: Path) -> Iterator[dict[str, subprocess.Popen[bytes] | int]]:
    redis_server.flush()
    cfg = tmp_path / "servers.json"
    cfg.write_text(json.dumps({"mcpServers": {"up": fake("normal")}}))
    toolscout = str(Path(sys.executable).with_name("toolscout"))
    procs: dict[str, Any] = {}
    for name in ("a", "b"):
        port = free_port()
        args = [toolscout, "serve", "-c", str(cfg), "--no-cache", "--transport", "http", "--port", str(port)]
        procs[name] = subprocess.Popen([*args, "--sessions", redis_server.url], stderr=subprocess.DEVNULL)
        procs[f"{name}_port"] = port
    try:
        for name in ("a", "b"):
            wait_http(procs[name], "http://127.0.0.1:{}/mcp".format(procs[f"{name}_port"]))
        yield procs
    finally:
        for name in ("a", "b"):
            if procs[name].poll() is None:
                procs[name].terminate()
                procs[name].wait(10)




async def test_reveal_on_one_replica_call_on_the_other_and_survive_a_killed_replica(
    replicas: dict[str, Any], redis_server: RedisServer
) -> None:
    for name in ("a", "b"):  # each replica has listed its upstream (a find waits for that)
        url = f"http://127.0.0.1:{replicas[f'{name}_port']}/mcp"
        async with Client(streamable_http_client(url), mode="auto") as warm:
            assert not (await warm.call_tool("find_tools", {"query": "echo"})).is_error
    balancer = Balancer({"a": replicas["a_port"], "b": replicas["b_port"]}, target="a")
    sessions = 4
    async with AsyncExitStack() as stack:
        clients = [await stack.enter_async_context(connect(balancer)) for _ in range(sessions)]
        for client in clients:  # revealed on replica a
            found = await client.call_tool("find_tools", {"query": "echo text back", "limit": 1})
            assert found.structured_content["tool_references"][0]["tool_name"] == "up_echo"
        balancer.target = "b"  # every session moves to replica b, which never saw them
        for i, client in enumerate(clients):
            echoed = await client.call_tool("up_echo", {"text": f"hi {i}"})
            assert not echoed.is_error, echoed.content
            assert echoed.content[0].text == f"hi {i}"
            assert "up_echo" in names(await client.list_tools())
        # Revealed on b, called by name on a (a refreshes its own copy first).
        added = await clients[0].call_tool("find_tools", {"query": "add two integers", "limit": 1})
        assert added.structured_content["tool_references"][0]["tool_name"] == "up_add"
        balancer.target = "a"
        summed = await clients[0].call_tool("up_add", {"a": 2, "b": 3})
        assert summed.structured_content == {"sum": 5}
        # Replica a is killed (no shutdown at all): its sessions go on on b.
        os.kill(replicas["a"].pid, signal.SIGKILL)
        replicas["a"].wait(10)
        balancer.target = "b"
        for i, client in enumerate(clients):
            echoed = await client.call_tool("up_echo", {"text": f"after {i}"})
            assert echoed.content[0].text == f"after {i}"
        assert {"up_echo", "up_add"} <= names(await clients[0].list_tools())
        assert (await clients[0].call_tool("up_add", {"a": 1, "b": 1})).structured_content == {"sum": 2}
    assert "a" in balancer.seen and "b" in balancer.seen
    keys = redis.Redis.from_url(redis_server.url).keys("toolscout:session:*")
    assert len(keys) == 0  # each client ended its session (DELETE): gone from Redis too


# -- in-process replicas: the SDK's rules and Redis outages ------------------------------------
def _server(url: str) -> GatewayServer:
    catalog = Catalog()
    for i in range(24):
        catalog.add_function(lambda count=1, i=i: f"widget {i} x{count}", name=f"widget_{i:02d}",
                             description=f"Operate widget number {i:02d}.")
    gateway = Gateway(catalog)
    return GatewayServer(gateway, session_store=RedisSessionStore(url, gateway, timeout=0.5), max_revealed=8)


async def _post(port_url: str, body: dict[str, Any], session: str) -> httpx.Response:
    headers = {**ACCEPT, "Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
    async with httpx.AsyncClient() as http:
        return await http.post(f"{port_url}/mcp", json=body, headers=headers)


@pytest.fixture
async def outage_redis() -> AsyncIterator[RedisServer]:
    server = RedisServer().start()
    try:
        yield server
    finally:
        server.stop()


async def test_an_unknown_session_id_is_still_refused(outage_redis: RedisServer) -> None:
    async with serving(http_app(_server(outage_redis.url))) as url:
        listed = await _post(url, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, "f" * 32)
        assert listed.status_code == 404  # not in Redis either: the SDK's answer stands


async def test_redis_restarting_while_serving_gives_structured_errors_then_recovers(
    outage_redis: RedisServer,
) -> None:
    server_a, server_b = _server(outage_redis.url), _server(outage_redis.url)
    async with serving(http_app(server_a)) as url_a, serving(http_app(server_b)) as url_b:
        ports = {"a": httpx.URL(url_a).port, "b": httpx.URL(url_b).port}
        balancer = Balancer(ports, target="a")  # type: ignore[arg-type]
        async with connect(balancer) as client:
            await client.call_tool("find_tools", {"query": "widget number 07", "limit": 1})
            assert (await client.call_tool("widget_07", {"count": 2})).content[0].text == "widget 7 x2"
            outage_redis.stop()
            # Stateful calls say what is wrong, as a tool result; nothing ran.
            refused = await client.call_tool("widget_07", {"count": 3})
            assert refused.is_error
            error = refused.structured_content["error"]
            assert error["code"] == "session_store_unavailable" and "redis://127.0.0.1" in error["message"]
            found = await client.call_tool("find_tools", {"query": "widget number 09"})
            assert found.structured_content["error"]["code"] == "session_store_unavailable"
            assert "widget_07" in names(await client.list_tools())  # listed from this replica's copy
            # Another replica cannot tell whether it knows the session: 503, retry later.
            moved = await _post(url_b, {"jsonrpc": "2.0", "id": 9, "method": "tools/list"}, _session_id(server_a))
            assert moved.status_code == 503 and "session_store_unavailable" in moved.text
            assert moved.headers["retry-after"] == "1"
            # A session opened now works once Redis is back; meanwhile its calls say why not.
            async with connect(Balancer(ports, target="a")) as fresh:  # type: ignore[arg-type]
                early = await fresh.call_tool("find_tools", {"query": "widget number 01"})
                assert early.structured_content["error"]["code"] == "session_store_unavailable"
            # Stateless clients never needed Redis.
            async with Client(streamable_http_client(f"{url_a}/mcp"), mode="auto") as stateless:
                ran = await stateless.call_tool("call_tool", {"name": "widget_03", "arguments": {"count": 1}})
                assert ran.content[0].text == "widget 3 x1"
            # Redis is back (empty): the same gateway recovers, no restart; replica a's copy
            # is written again, so replica b can take the session over.
            outage_redis.start()
            again = await client.call_tool("widget_07", {"count": 4})
            assert again.content[0].text == "widget 7 x4"
            balancer.target = "b"
            assert (await client.call_tool("widget_07", {"count": 5})).content[0].text == "widget 7 x5"


def _session_id(server: GatewayServer) -> str:
    (key,) = list(server.router.peers)
    return key


async def test_a_session_moves_before_it_searched(outage_redis: RedisServer) -> None:
    server_a, server_b = _server(outage_redis.url), _server(outage_redis.url)
    async with serving(http_app(server_a)) as url_a, serving(http_app(server_b)) as url_b:
        balancer = Balancer({"a": httpx.URL(url_a).port, "b": httpx.URL(url_b).port}, target="a")  # type: ignore[dict-item]
        async with connect(balancer) as client:
            balancer.target = "b"  # initialized on a, nothing else: b still knows the id
            assert "find_tools" in names(await client.list_tools())
            await client.call_tool("find_tools", {"query": "widget number 11", "limit": 1})
            balancer.target = "a"
            assert (await client.call_tool("widget_11", {})).content[0].text == "widget 11 x1"


def test_serve_refuses_sessions_it_cannot_use(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from toolscout.cli import app

    cfg = tmp_path / "servers.json"
    cfg.write_text(json.dumps({"mcpServers": {"up": fake("normal")}}))
    base = ["serve", "-c", str(cfg), "--no-cache", "--port", str(free_port())]  # http binds it first: a free one
    stdio = CliRunner().invoke(app, [*base, "--sessions", "redis://127.0.0.1:1/0"])
    assert stdio.exit_code == 2 and "--sessions needs --transport http" in stdio.output
    wrong = CliRunner().invoke(app, [*base, "--transport", "http", "--sessions", "http://user:secret@cache.test/"])
    assert wrong.exit_code == 2 and "not a Redis URL" in wrong.output and "secret" not in wrong.output


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
async def test_a_log_level_set_on_one_replica_holds_on_the_other(redis_server: RedisServer) -> None:
    """``logging/setLevel`` reaches replica a; the session's next call lands on replica b,
    whose upstream logs at three levels: the client gets only what its level lets through."""
    from _wait import until
    from toolscout.sources.mcp.aggregator import Aggregator
    from toolscout.sources.mcp.config import parse_config

    redis_server.flush()
    ports: dict[str, int] = {}
    logs: list[str] = []

    async def on_log(params: Any) -> None:
        logs.append(str(params.level))

    async with AsyncExitStack() as stack:
        for name in ("a", "b"):
            agg = Aggregator(parse_config({"mcpServers": {"loc": fake("relay")}}), Catalog())
            stack.push_async_callback(agg.aclose)
            await agg.refresh("loc")
            gateway = Gateway(agg.catalog, call_timeout=None, learn=False)
            server = GatewayServer(gateway, agg, session_store=RedisSessionStore(redis_server.url, gateway))
            url = await stack.enter_async_context(serving(http_app(server, console=False)))
            ports[name] = int(url.rsplit(":", 1)[1])
        balancer = Balancer(ports, target="a")
        http = httpx2.AsyncClient(transport=balancer, timeout=httpx2.Timeout(30.0, read=300.0))
        transport = streamable_http_client(f"http://127.0.0.1:{ports['a']}/mcp", http_client=http)
        client = await stack.enter_async_context(Client(transport, mode="legacy", logging_callback=on_log))
        await client.set_logging_level("error")
        balancer.target = "b"
        done = await client.call_tool("call_tool", {"name": "loc_chatty", "arguments": {"tag": "x"}})
        assert not done.is_error, done.content
        await until(lambda: len(logs) >= 1, 10)
        assert logs == ["error"] and balancer.seen[-1] == "b"
