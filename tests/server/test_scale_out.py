"""Three ``toolscout serve --transport http --store postgresql://... --sessions redis://...``
processes on one real PostgreSQL and one real Redis, driven by the official MCP SDK client and
by the HTTP API (``/v1/find``, ``/v1/call``, ``/v1/tools/{name}``):

- a catalog change made through one replica (an upstream tool registered by a ``/v1/call`` on
  replica a, which lists the upstream again and writes the catalog once) is found on the others;
- a session that reveals tools on replica a calls them by name on replica b;
- replica b is killed (SIGKILL) while a bounded load of MCP sessions and catalog writes runs
  over all three: the client retries its failed in-flight requests on another replica, and
  every acknowledged write and every revealed tool is still there afterwards.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import httpx
import httpx2
import pytest

from _procs import free_port, stop, wait_http
from _redis import RedisServer
from _wait import until
from mcp_fixtures import FAKE
from toolscout.model import Tool
from toolscout.search.keyword_snapshot import SNAPSHOT_NS

pytest.importorskip("psycopg", reason="toolscout[postgres] is not installed")
pytest.importorskip("redis", reason="toolscout[redis] is not installed")

PROPAGATION = 1.0
"""The promise: a change is searchable on every replica within a second."""
NAMES = ("a", "b", "c")
SESSIONS = 4
ROUNDS = 6  # find + call per round and session: 48 MCP tool requests, plus the writes
WRITES = 8


def _ready(response: httpx.Response) -> bool:
    return response.status_code == 200


@pytest.fixture
def cluster(pg_dsn: str, redis_server: RedisServer, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """One HTTP upstream (registry mode) and three replicas on one database and one Redis."""
    redis_server.flush()
    upstream_port = free_port()
    upstream = subprocess.Popen(
        [sys.executable, FAKE, "--mode", "registry", "--http", str(upstream_port)], stderr=subprocess.DEVNULL
    )
    cfg = tmp_path / "servers.json"
    cfg.write_text(json.dumps({"mcpServers": {"web": {"url": f"http://127.0.0.1:{upstream_port}/mcp"}}}))
    toolscout = str(Path(sys.executable).with_name("toolscout"))
    procs: dict[str, subprocess.Popen[bytes]] = {}
    ports: dict[str, int] = {}
    try:
        for name in NAMES:  # started together: a replica retries an upstream not up yet
            ports[name] = free_port()
            args = ["serve", "-c", str(cfg), "--transport", "http", "--port", str(ports[name]),
                    "--store", pg_dsn, "--sessions", redis_server.url]
            procs[name] = subprocess.Popen([toolscout, *args], stderr=subprocess.DEVNULL)
        for name, proc in procs.items():
            wait_http(proc, f"http://127.0.0.1:{ports[name]}/v1/ready", ready=_ready)
        yield {"procs": procs, "ports": ports, "dsn": pg_dsn}
    finally:
        stop(*procs.values(), upstream)


class RetryingBalancer(httpx2.AsyncBaseTransport):
    """A load balancer without affinity, as the MCP client sees it: round-robin over the live
    replicas, or always the one ``pin`` names. A POST or DELETE is read whole and, if the
    replica fails (refused, reset, closed mid-response), sent again to the next live replica,
    which drops the dead one (a passive health check). ``inflight`` counts requests sent and
    not yet answered, per replica."""

    def __init__(self, ports: dict[str, int], live: list[str], sent: asyncio.Event | None = None) -> None:
        self.ports = ports
        self.sent = sent or asyncio.Event()  # set at each request sent
        self.live = live  # shared by every balancer: what a health check would leave in the pool
        self.pin: str | None = None
        self.turn = itertools.count()
        self.inner = httpx2.AsyncHTTPTransport()
        self.inflight = dict.fromkeys(ports, 0)
        self.retries = 0
        self.seen: list[str] = []

    def _next(self) -> str:
        if self.pin is not None:
            return self.pin
        return self.live[next(self.turn) % len(self.live)]

    async def handle_async_request(self, request: Any) -> Any:
        for _attempt in range(len(self.ports) + 1):  # bounded: each dead replica fails once
            target = self._next()
            request.url = request.url.copy_with(port=self.ports[target])
            self.seen.append(target)
            self.inflight[target] += 1
            self.sent.set()
            try:
                response = await self.inner.handle_async_request(request)
                if request.method == "GET":  # a notification stream: passed on as it streams
                    return response
                try:
                    body = await response.aread()
                finally:
                    await response.aclose()
            except httpx2.TransportError:
                if target in self.live and len(self.live) > 1:
                    self.live.remove(target)
                self.pin = None if self.pin == target else self.pin
                self.retries += 1
                continue
            finally:
                self.inflight[target] -= 1
            headers = [(k, v) for k, v in response.headers.items()
                       if k.lower() not in ("content-length", "transfer-encoding", "content-encoding")]
            return httpx2.Response(response.status_code, headers=headers, content=body, request=request)
        raise httpx2.ConnectError("no live replica answered")

    async def aclose(self) -> None:
        await self.inner.aclose()


def mcp_client(balancer: RetryingBalancer) -> Any:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    http = httpx2.AsyncClient(transport=balancer, timeout=httpx2.Timeout(30.0, read=60.0))
    first = next(iter(balancer.ports.values()))
    return Client(streamable_http_client(f"http://127.0.0.1:{first}/mcp", http_client=http), mode="legacy")


class Api:
    """The HTTP API as a non-MCP caller uses it, round-robin over the live replicas, retrying a
    request that failed in flight on the next one (bounded)."""

    def __init__(self, ports: dict[str, int], live: list[str]) -> None:
        self.ports = ports
        self.live = live
        self.turn = itertools.count()
        self.http = httpx.AsyncClient(timeout=30)
        self.retries = 0

    async def send(self, method: str, path: str, body: Any = None, on: str | None = None) -> tuple[str, httpx.Response]:
        for _attempt in range(len(self.ports) + 1):
            target = on if on is not None and on in self.live else self.live[next(self.turn) % len(self.live)]
            try:
                url = f"http://127.0.0.1:{self.ports[target]}{path}"
                return target, await self.http.request(method, url, json=body)
            except httpx.TransportError:
                if target in self.live and len(self.live) > 1:
                    self.live.remove(target)
                self.retries += 1
                on = None
        raise httpx.ConnectError("no live replica answered")

    async def has_tool(self, name: str, on: str) -> bool:
        _, response = await self.send("GET", f"/v1/tools/{name}", on=on)
        return response.status_code == 200

    async def finds(self, query: str, name: str, on: str) -> bool:
        _, response = await self.send("POST", "/v1/find", {"query": query, "limit": 5}, on=on)
        return any(r["tool_name"] == name for r in response.json()["tool_references"])

    async def until(self, check: Any, timeout: float) -> float | None:
        """Seconds until ``await check()`` is true (bounded), else None."""
        start = asyncio.get_running_loop().time()
        return asyncio.get_running_loop().time() - start if await until(check, timeout) else None

    async def register(self, name: str, on: str | None = None) -> str:
        """A catalog write through one replica: that replica's upstream gains ``web_<name>``, it
        lists it again and writes the catalog. Acknowledged once the replica that ran it serves
        the tool (its memory follows only a committed write); retried on another replica if it
        dies first. Returns the replica that acknowledged."""
        for _attempt in range(len(self.ports) + 1):
            body = {"name": "web_register", "arguments": {"name": name}}
            target, response = await self.send("POST", "/v1/call", body, on=on)
            on = None
            assert response.json()["ok"], response.text
            seen = await self.until(lambda t=target: self.has_tool(f"web_{name}", on=t), PROPAGATION + 4)
            if seen is not None and target in self.live:
                return target
        raise AssertionError(f"web_{name} was never acknowledged")


def _why(found: Any) -> str:
    """What a find returned, short enough to survive pytest's truncation: each reference's
    name, score and usage boost, the match count and warnings (rare failures under load
    have shown an unrelated tool first; this is what to read when one recurs)."""
    result = found.structured_content or {}
    refs = [(r["tool_name"], r.get("relevance_score"), r.get("usage_boost")) for r in result.get("tool_references", [])]
    meta = result.get("search_metadata", {})
    return f"refs={refs} total={result.get('total_matches')} warnings={meta.get('warnings')} loading={meta.get('loading')}"


async def test_three_replicas_on_postgres_and_redis_survive_a_killed_replica(cluster: dict[str, Any]) -> None:
    ports, procs = cluster["ports"], cluster["procs"]
    live = list(NAMES)
    api = Api(ports, live)
    try:
        # A catalog change made through replica a is found on b (MCP) and c (HTTP API).
        assert await api.register("first", on="a") == "a"
        pinned = RetryingBalancer(ports, live)
        async with mcp_client(pinned) as client:
            pinned.pin = "b"
            for _ in range(int((PROPAGATION + 1) / 0.02)):  # bounded poll on b over MCP
                found = await client.call_tool("find_tools", {"query": "registered tool first", "limit": 3})
                refs = (found.structured_content or {}).get("tool_references", [])
                if any(r["tool_name"] == "web_first" for r in refs):
                    break
                await asyncio.sleep(0.02)
            else:
                raise AssertionError("web_first never found on replica b")
            assert await api.until(lambda: api.finds("registered tool first", "web_first", on="c"), PROPAGATION + 1) is not None

            # The session revealed web_first (and web_echo next) on b: it calls them on a and c.
            pinned.pin = "b"
            echo = await client.call_tool("find_tools", {"query": "echo the given text back", "limit": 1})
            assert echo.structured_content["tool_references"][0]["tool_name"] == "web_echo", _why(echo)
            pinned.pin = "a"
            assert (await client.call_tool("web_echo", {"text": "on a"})).content[0].text == "on a"
            pinned.pin = "c"
            assert (await client.call_tool("web_first", {})).content[0].text == "ran first"
            assert {"web_echo", "web_first"} <= {t.name for t in (await client.list_tools()).tools}
        _, called = await api.send("POST", "/v1/call", {"name": "web_add", "arguments": {"a": 2, "b": 3}}, on="b")
        assert called.json()["structured"] == {"sum": 5}

        # Load over all three replicas; b is SIGKILLed while requests are in flight on it.
        sent = asyncio.Event()
        balancers = [RetryingBalancer(ports, live, sent) for _ in range(SESSIONS)]
        revealed: list[set[str]] = [set() for _ in range(SESSIONS)]
        done = {"requests": 0}
        acknowledged: list[str] = []
        killed = asyncio.Event()

        async def session(k: int, client: Any) -> None:
            plan = [("echo the given text back", "web_echo", {"text": f"s{k}"}),
                    ("add two integers and return the sum", "web_add", {"a": k, "b": 1}),
                    ("registered tool first", "web_first", {})]
            for i in range(ROUNDS):
                query, name, args = plan[(i + k) % len(plan)]
                found = await client.call_tool("find_tools", {"query": query, "limit": 1})
                assert found.structured_content["tool_references"][0]["tool_name"] == name, _why(found)
                revealed[k].add(name)
                ran = await client.call_tool(name, args)  # by name: needs the session's reveals
                assert not ran.is_error, ran.content
                done["requests"] += 2

        async def writer() -> None:
            for i in range(WRITES):
                await api.register(f"w{i}")
                acknowledged.append(f"web_w{i}")
                done["requests"] += 1

        async def killer() -> None:
            third = (SESSIONS * ROUNDS * 2 + WRITES) // 3
            while not (done["requests"] >= third and any(x.inflight["b"] for x in balancers)):
                # bounded: each request sent wakes this check; the load stops by itself
                try:
                    await asyncio.wait_for(sent.wait(), 30)
                except TimeoutError:
                    raise AssertionError("the load ended before replica b could be killed mid-request") from None
                sent.clear()
            os.kill(procs["b"].pid, signal.SIGKILL)
            killed.set()

        async with AsyncExitStack() as stack:
            clients = [await stack.enter_async_context(mcp_client(b)) for b in balancers]
            await asyncio.wait_for(
                asyncio.gather(killer(), writer(), *(session(k, c) for k, c in enumerate(clients))), 60
            )
            assert killed.is_set() and procs["b"].wait(10) == -signal.SIGKILL
            assert "b" not in live and sum(b.retries for b in balancers) + api.retries >= 1
            # No session lost: each one lists and runs everything it revealed, on a and on c.
            for k, client in enumerate(clients):
                for target in ("a", "c"):
                    balancers[k].pin = target
                    listed = {t.name for t in (await client.list_tools()).tools}
                    assert revealed[k] <= listed, (k, target, revealed[k] - listed)
                    ran = await client.call_tool("web_echo" if "web_echo" in revealed[k] else "web_add",
                                                 {"text": "still"} if "web_echo" in revealed[k] else {"a": 1, "b": 1})
                    assert not ran.is_error, ran.content
        # No catalog write lost: every acknowledged tool is on both survivors and in PostgreSQL.
        assert len(acknowledged) == WRITES
        for name in ["web_first", *acknowledged]:
            for target in ("a", "c"):
                assert await api.has_tool(name, on=target), (name, target)
            assert await api.finds(f"registered tool {name.removeprefix('web_')}", name, on="c")
        from toolscout.storage import PostgresStore

        with PostgresStore(cluster["dsn"]) as store:
            stored = store.tool_names()
        assert len(stored) == len(set(stored)) and {"web_first", *acknowledged} <= set(stored)
    finally:
        await api.http.aclose()


class _SavesInterleaved:
    """A replica's view of the shared store in which, just before its index snapshot is
    written, another replica's whole snapshot save runs (``before``): the order two replicas
    starting together can take, which a loaded machine makes likely."""

    def __init__(self, store: Any, before: Any) -> None:
        self.store, self.before = store, before

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def put_arrays(self, ns: str, key: str, arrays: Any, meta: Any = None) -> None:
        if ns == SNAPSHOT_NS and self.before is not None:
            before, self.before = self.before, None
            before()
        self.store.put_arrays(ns, key, arrays, meta)


def test_an_index_restored_from_one_replicas_snapshot_never_reads_another_replicas_term_counts(pg_dsn: str) -> None:
    """Replicas a and b build the same tools at once and both save the index snapshot; c
    restores it, then a tool is added. Two processes number their terms differently (the
    order follows each one's hash seed), so term counts saved by b read with a's vocabulary
    index the wrong terms: c then ranked unrelated tools first for an exact description
    (the rare failure of the test above under load). c must rank as a fresh build does."""
    from toolscout.catalog import Catalog
    from toolscout.search.index import ToolIndex
    from toolscout.search.keyword import KeywordBackend
    from toolscout.storage import PostgresStore

    descriptions = {"echo": "Echo the given text back unchanged.", "add": "Add two integers and return the sum.",
                    "fail": "Always fails with an error result.", "grow": "Add a tool named 'extra' and announce the change.",
                    "env_probe": "Report whether an environment variable is set.",
                    "headers_seen": "List the HTTP request headers this server received (HTTP only).",
                    "register": "Add a tool of the given name and announce the change."}
    tools = [Tool(f"web_{name}", text, source_id="web") for name, text in descriptions.items()]
    reference = ToolIndex(Catalog(tools))
    numbered = reference.backend("keyword")._vocab  # this process's numbering of the terms
    other = KeywordBackend()  # b's: the same terms in another order, as another hash seed gives
    other._vocab = {term: i for i, term in enumerate(sorted(numbered, key=numbered.__getitem__, reverse=True))}
    with PostgresStore(pg_dsn) as store:
        b = ToolIndex(Catalog(tools), keyword=other, snapshots=store)
        a = ToolIndex(Catalog(tools), snapshots=_SavesInterleaved(store, b.refresh))
        a.refresh()
        assert b.backend("keyword")._vocab != a.backend("keyword")._vocab  # both saved, numbered apart
        catalog = Catalog(tools)
        c = ToolIndex(catalog, snapshots=store)
        c.refresh()  # restored: a's snapshot, with b's counts under its key
        kw = c.backend("keyword")
        assert kw._vocab == a.backend("keyword")._vocab and kw._counts_loader is not None
        added = Tool("web_first", "Registered tool first.", source_id="web")
        catalog.add(added)
        reference.catalog.add(added)
        for query in ("echo the given text back", "add two integers and return the sum", "registered tool first"):
            got = [(h.tool.name, round(h.score, 5)) for h in c.search(query, limit=3).hits]
            want = [(h.tool.name, round(h.score, 5)) for h in reference.search(query, limit=3).hits]
            assert got == want, (query, got, want)
        assert kw._counts_loader() is None  # b's counts were refused: c analysed its tools again

        store.clear(SNAPSHOT_NS)
        ToolIndex(Catalog(tools), snapshots=store).refresh()  # one writer: a snapshot and its counts
        d = ToolIndex(Catalog(tools), snapshots=store)
        d.refresh()
        loader = d.backend("keyword")._counts_loader
        assert loader is not None and loader() is not None  # numbered alike: taken, not re-analysed


async def test_readiness_reports_both_stores_and_follows_their_outages(
    pg_dsn: str, postgres: Any, tmp_path: Path
) -> None:
    """``GET /v1/ready`` of a ``serve --store postgresql:// --sessions redis://`` process names
    both stores' state and the catalog version it holds; it answers 503 ``unavailable`` while
    PostgreSQL or Redis is down (searches still answer from memory) and 200 again once the
    server is back, without a restart of toolscout."""
    from toolscout.server.http_api import ReadyResponse
    from toolscout.storage import PostgresStore

    cache = RedisServer().start()  # this test's own Redis: it is stopped below
    cfg = tmp_path / "servers.json"
    cfg.write_text(json.dumps({"mcpServers": {}}))
    with PostgresStore(pg_dsn) as store:
        first = store.write_source("crm", [Tool("crm_close_deal", "Close a deal as won or lost.")], kind="sync")
    port = free_port()
    toolscout = str(Path(sys.executable).with_name("toolscout"))
    args = ["serve", "-c", str(cfg), "--transport", "http", "--port", str(port), "--store", pg_dsn, "--sessions", cache.url]
    proc = subprocess.Popen([toolscout, *args], stderr=subprocess.DEVNULL)
    try:
        wait_http(proc, f"http://127.0.0.1:{port}/v1/ready", ready=_ready)
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", timeout=10) as http:

            async def readiness(status: int, check: Any = lambda body: True, timeout: float = 15.0) -> ReadyResponse:
                """The readiness body once it answers ``status`` and ``check(body)`` holds (bounded)."""
                deadline = time.monotonic() + timeout
                while True:
                    response = await http.get("/v1/ready")
                    body = ReadyResponse.model_validate(response.json())
                    if response.status_code == status and check(body):
                        return body
                    assert time.monotonic() < deadline, (status, response.status_code, response.text)
                    await asyncio.sleep(0.05)  # the next poll of a bounded wait for the condition

            ready = await readiness(200, lambda b: b.store is not None and b.store.reachable)
            assert ready.status == "ready" and ready.store is not None and ready.sessions is not None
            assert ready.store.kind == "postgresql" and ready.store.sources == {"crm": first.version}
            assert ready.store.version == first.version and ready.store.last_error is None
            assert ready.sessions.kind == "redis" and ready.sessions.reachable
            assert "127.0.0.1" in ready.store.where and "postgres@" not in ready.store.where

            postgres.stop()
            try:
                down = await readiness(503)
                assert down.status == "unavailable" and down.store is not None and not down.store.reachable
                assert down.store.last_error and down.store.sources == {"crm": first.version}
                assert down.sessions is not None and down.sessions.reachable
                assert (await http.get("/v1/health")).status_code == 200  # alive: do not restart it
                found = (await http.post("/v1/find", json={"query": "close a deal"})).json()
                assert found["tool_references"][0]["tool_name"] == "crm_close_deal"  # from memory
            finally:
                postgres.start()
            back = await readiness(200)
            assert back.status == "ready" and back.store is not None and back.store.reachable
            with PostgresStore(pg_dsn) as store:
                second = store.write_source("ops", [Tool("ops_restart", "Restart a service.")], kind="sync")
            moved = await readiness(200, lambda b: b.store is not None and b.store.version == second.version)
            assert moved.store is not None and moved.store.sources == {"crm": first.version, "ops": second.version}

            cache.stop()
            try:
                down = await readiness(503)
                assert down.status == "unavailable" and down.sessions is not None and not down.sessions.reachable
                assert down.store is not None and down.store.reachable
            finally:
                cache.start()
            back = await readiness(200)
            assert back.sessions is not None and back.sessions.reachable
    finally:
        stop(proc)
        cache.stop()
