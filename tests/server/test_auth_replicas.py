"""Two gateway replicas sharing PostgreSQL behind one balancer URL, each behind the same
real issuer. In a module of its own: its in-process servers start and stop apart from
test_auth.py's shared server (stopping in-process uvicorn servers beside a running one
disturbed it; separate processes, as replicas are, do not share that)."""

from __future__ import annotations

import time
from collections.abc import Iterator

import httpx
import pytest

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
from toolscout.storage import open_store

pytestmark = pytest.mark.asyncio


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with oidc_server(CLIENTS) as found:
        yield found


@pytest.mark.usefixtures("postgres")
async def test_two_replicas_sharing_postgresql_agree_on_policies_and_audit(issuer: Issuer, pg_dsn: str) -> None:
    """Behind one balancer URL (the resource both check tokens for), each replica applies the
    same policies, and the audit log the replicas share names every call's caller."""
    resource = "http://tools.example.test/mcp"  # the balancer's URL: what the tokens are for
    config = AuthConfig.model_validate({"issuer": issuer.url, "resource": resource, "policies": POLICIES})
    stores, replicas = [], []
    for _ in range(2):
        store = open_store(pg_dsn)
        gateway = Gateway(_catalog(), call_timeout=None, learn=False)
        server = GatewayServer(gateway, access=config.access_rules(), verifier=TokenVerifier(config, resource))
        server.audit_log = AuditLog(store)
        gateway.recorders.append(server.audit_log)
        port = free_port()
        stores.append(store)
        replicas.append((f"http://127.0.0.1:{port}", server, *(await _serve(http_app(server), port))))
    try:
        alice, bob = issuer.token("alice", resource), issuer.token("bob", resource)
        async with httpx.AsyncClient(timeout=30) as http:
            for url, token, tool in ((replicas[0][0], alice, "github_create_issue"), (replicas[1][0], bob, "crm_lookup_customer")):
                ran = await http.post(f"{url}/v1/call", json={"name": tool}, headers={"Authorization": f"Bearer {token}"})
                assert ran.json()["ok"] is True
            refused = await http.post(f"{replicas[0][0]}/v1/call", json={"name": "github_create_issue"}, headers={"Authorization": f"Bearer {bob}"})
            assert refused.json()["error"]["code"] == "unknown_tool"  # hidden: absent; audited denied below
        seen = {(r.principal, r.tool, r.decision) for r in replicas[1][1].audit_log.query(since=time.time() - 600)}
        assert {("alice", "github_create_issue", "allowed"), ("bob", "crm_lookup_customer", "allowed"),
                ("bob", "github_create_issue", "denied")} <= seen
    finally:
        for _url, _server, http_server, task in replicas:
            http_server.should_exit = True
            await task
        for store in stores:
            store.close()
