"""The guard's guarantees on two replicas sharing PostgreSQL (audit) and Redis (sessions),
behind one balancer URL and one real issuer: a call the policy denies over MCP
``tools/call`` on one replica is in the audit log the other reads; a code-mode program on
the other is one record with its calls under it; neither replica names what the caller may
not see. In a module of its own, as test_auth_replicas.py (in-process servers start and
stop apart)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from _oidc import Issuer, oidc_server
from _procs import free_port
from _team import CLIENTS, POLICIES
from _team import catalog as _catalog
from _team import serve as _serve
from toolscout.access.audit import AuditLog
from toolscout.access.auth import AuthConfig, TokenVerifier
from toolscout.gateway import Gateway
from toolscout.server.app import http_app
from toolscout.server.mcp import GatewayServer
from toolscout.sessions.redis import RedisSessionStore
from toolscout.storage import open_store

pytestmark = pytest.mark.asyncio


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with oidc_server(CLIENTS) as found:
        yield found


def _connect(url: str, token: str) -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="legacy")


@pytest.mark.usefixtures("postgres")
async def test_two_replicas_record_every_decision_and_hide_the_same(issuer: Issuer, pg_dsn: str, redis_server: Any) -> None:
    redis_server.flush()
    resource = "http://tools.example.test/mcp"
    config = AuthConfig.model_validate({"issuer": issuer.url, "resource": resource, "policies": POLICIES})
    stores, replicas = [], []
    for _ in range(2):
        store = open_store(pg_dsn)
        gateway = Gateway(_catalog(), call_timeout=None, learn=False)
        server = GatewayServer(
            gateway, access=config.access_rules(), verifier=TokenVerifier(config, resource),
            session_store=RedisSessionStore(redis_server.url, gateway), code_mode=True,
        )
        server.audit_log = AuditLog(store)
        gateway.recorders.append(server.audit_log)
        port = free_port()
        stores.append(store)
        replicas.append((f"http://127.0.0.1:{port}", server, *(await _serve(http_app(server), port))))
    try:
        bob = issuer.token("bob", resource)  # sales: the github_* tools are not his
        async with _connect(replicas[0][0], bob) as client:
            denied = await client.call_tool("call_tool", {"name": "github_create_issue", "arguments": {}})
            missed = await client.call_tool("find_tools", {"query": "qqqq zzzz"})
        async with _connect(replicas[1][0], bob) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
            ran = await client.call_tool("execute", {"code": "print(await weather_forecast())"})
        assert denied.is_error and "github" not in str(missed.structured_content)
        assert "github" not in (tools["execute"].description or "")
        assert not ran.is_error and "weather_forecast done" in ran.content[-1].text
        for _url, server, _http, _task in replicas:  # either replica reads the same shared record
            seen = server.audit_log.query(since=time.time() - 600)
            assert ("bob", "github_create_issue", "denied") in {(r.principal, r.tool, r.decision) for r in seen}
            programs = [r for r in seen if r.operation == "program" and r.principal == "bob"]
            assert len(programs) == 1
            inner = [r for r in seen if r.parent == programs[0].id]
            assert [(r.tool, r.decision) for r in inner] == [("weather_forecast", "allowed")]
    finally:
        for _url, _server, http_server, task in replicas:
            http_server.should_exit = True
            await task
        for store in stores:
            store.close()
