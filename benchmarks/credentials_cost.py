"""What a per-user upstream credential costs per call, against the gateway's own credential.

One run, one upstream: a streamable-HTTP MCP server (the official SDK's low-level server,
served by uvicorn in this process) that checks a bearer token on every request. The
gateway reaches it twice: as ``shared`` (``credentials: gateway``, one configured header)
and as ``mine`` (``credentials: per-user``, each caller's token from the encrypted vault in
an SQLite store, one connection per user). Calls alternate between the two in rounds, so
both see the same machine load. Then the lookup alone (no network): the vault read with
this process's 10 s cache, without it (store read + Fernet decryption), and the pool's
acquire/release.

    .venv/bin/python benchmarks/credentials_cost.py [--calls 400] [--users 4] [--no-write]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import mcp_types as types
import uvicorn
from mcp.server.lowlevel.server import Server

from toolscout.access.credentials import Credential, Vault, generate_key
from toolscout.catalog import Catalog
from toolscout.context import CallContext, Principal
from toolscout.gateway import Gateway
from toolscout.request import CallRequest
from toolscout.sources.mcp.aggregator import Aggregator
from toolscout.sources.mcp.config import parse_config
from toolscout.sources.mcp.per_user import CredentialBroker
from toolscout.storage import open_store

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import write_section

ECHO = {"name": "echo", "description": "Echo text.",
        "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}


def upstream_app(tokens: set[str]) -> Any:
    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> dict[str, Any]:
        return {"tools": [ECHO]}

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> dict[str, Any]:
        return {"content": [{"type": "text", "text": str((params.arguments or {}).get("text"))}]}

    inner = Server("bench", version="1", on_list_tools=list_tools, on_call_tool=call_tool).streamable_http_app(host="127.0.0.1")
    accepted = {f"Bearer {t}".encode() for t in tokens}

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and dict(scope.get("headers") or []).get(b"authorization") not in accepted:
            await send({"type": "http.response.start", "status": 401, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        await inner(scope, receive, send)

    return app


def us(samples: list[float]) -> str:
    return f"{statistics.median(samples) * 1e6:,.0f}"


async def main(calls: int, users: int) -> str:
    tokens = {f"user-token-{i}" for i in range(users)} | {"gateway-token"}
    server = uvicorn.Server(uvicorn.Config(upstream_app(tokens), host="127.0.0.1", port=0, log_level="warning"))
    serving = asyncio.ensure_future(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}/mcp"
    config = parse_config({"mcpServers": {
        "shared": {"url": url, "headers": {"Authorization": "Bearer gateway-token"}},
        "mine": {"url": url, "headers": {"Authorization": "Bearer gateway-token"}, "credentials": "per-user"},
    }})
    with tempfile.TemporaryDirectory() as tmp:
        store = open_store(str(Path(tmp) / "store.db"))
        key = generate_key()
        vault = Vault(store, [key])
        for i in range(users):
            vault.put(f"user{i}", "mine", Credential(token=f"user-token-{i}"))
        aggregator = Aggregator(config, Catalog())
        broker = CredentialBroker(config.enabled(), vault=vault)
        aggregator.use_credentials(broker)
        await aggregator.start()
        gateway = Gateway(aggregator.catalog, call_timeout=None)
        people = [CallContext(principal=Principal(f"user{i}", "user")) for i in range(users)]
        shared_req = CallRequest.parse("shared_echo", {"text": "hi"})
        mine_req = CallRequest.parse("mine_echo", {"text": "hi"})
        for ctx in people:  # connect everyone once: the figures are per call, not per connect
            assert (await gateway.execute(mine_req, ctx)).ok
        assert (await gateway.execute(shared_req, people[0])).ok
        shared: list[float] = []
        mine: list[float] = []
        for i in range(calls):
            ctx = people[i % users]
            for request, out in ((shared_req, shared), (mine_req, mine)) if i % 2 else ((mine_req, mine), (shared_req, shared)):
                t = time.perf_counter()
                result = await gateway.execute(request, ctx)
                out.append(time.perf_counter() - t)
                assert result.ok, result.text()
        # The lookup alone.
        cached, uncached, pooled = [], [], []
        cold = Vault(store, [key], cache_seconds=0.0)
        cold_broker = CredentialBroker(config.enabled(), vault=cold)
        pool = broker.pools["mine"]
        for i in range(calls):
            ctx = people[i % users]
            t = time.perf_counter()
            credential = await broker.credential("mine", ctx)
            cached.append(time.perf_counter() - t)
            t = time.perf_counter()
            await cold_broker.credential("mine", ctx)
            uncached.append(time.perf_counter() - t)
            t = time.perf_counter()
            pool.release(pool.acquire(ctx.principal.id, credential))
            pooled.append(time.perf_counter() - t)
        await aggregator.aclose()
        store.close()
    server.should_exit = True
    await serving
    ratio = statistics.median(mine) / statistics.median(shared)
    return (
        f"{calls} calls per path, alternating, {users} users, one HTTP upstream on loopback; median microseconds.\n\n"
        "| path | per call |\n|---|---:|\n"
        f"| `credentials: gateway` (the configured header, one connection) | {us(shared)} |\n"
        f"| `credentials: per-user` (vault lookup + the caller's own connection) | {us(mine)} |\n"
        f"| ratio per-user / gateway | {ratio:.2f}x |\n\n"
        "The lookup alone, without the network:\n\n"
        "| step | per call |\n|---|---:|\n"
        f"| vault read, this process's cache (10 s) | {us(cached)} |\n"
        f"| vault read from SQLite + Fernet decryption (no cache) | {us(uncached)} |\n"
        f"| the caller's connection from the pool (acquire + release) | {us(pooled)} |\n\n"
        "Absolute times depend on the machine's load (the run shares 2 cores with other jobs); "
        "compare the ratio and the lookup steps, which are measured in the same run.\n"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--users", type=int, default=4)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    body = asyncio.run(main(args.calls, args.users))
    print(body)
    if not args.no_write:
        write_section("credentials-cost", "Per-user upstream credentials: cost per call",
                      f"python benchmarks/credentials_cost.py --calls {args.calls} --users {args.users}", body)
