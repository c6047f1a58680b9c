"""An MCP session answers only the principal that opened it, at the transport too.

Alice opens a stateful session with her token; Bob, with his own valid token, names her
``Mcp-Session-Id`` on a GET (her notification stream), a POST and a DELETE. Each is answered
exactly as an id nobody holds (same status, same body), and Alice's session goes on. The
same holds across two replicas sharing Redis: the owner is kept beside the session, so the
replica that did not open it checks the same owner. Real issuer (tests/_oidc.py), real HTTP.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import httpx
import pytest

from _oidc import Issuer, oidc_server
from _redis import RedisServer
from _team import CLIENTS, POLICIES
from _team import catalog as _catalog
from mcp_fixtures.asgi import serving
from toolscout.access.auth import AuthConfig, TokenVerifier
from toolscout.gateway import Gateway
from toolscout.server.app import http_app
from toolscout.server.mcp import GatewayServer

pytestmark = pytest.mark.asyncio

RESOURCE = "http://tools.example.test/mcp"  # what a balancer in front of the replicas would be
VERSION = "2025-11-25"
ACCEPT = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": VERSION, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}
PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}


@pytest.fixture(scope="module")
def issuer() -> Iterator[Issuer]:
    with oidc_server(CLIENTS) as found:
        yield found


def _server(issuer: Issuer, redis_url: str | None = None) -> GatewayServer:
    config = AuthConfig.model_validate({"issuer": issuer.url, "resource": RESOURCE, "policies": POLICIES})
    gateway = Gateway(_catalog(), call_timeout=None, learn=False)
    store = None
    if redis_url is not None:
        from toolscout.sessions.redis import RedisSessionStore

        store = RedisSessionStore(redis_url, gateway, timeout=2.0)
    return GatewayServer(gateway, access=config.access_rules(), verifier=TokenVerifier(config, RESOURCE), session_store=store)


@asynccontextmanager
async def _replicas(issuer: Issuer, count: int, redis_url: str | None = None) -> AsyncIterator[list[str]]:
    async with AsyncExitStack() as stack:
        yield [await stack.enter_async_context(serving(http_app(_server(issuer, redis_url)))) for _ in range(count)]


def _headers(token: str, session: str | None = None) -> dict[str, str]:
    out = {**ACCEPT, "Authorization": f"Bearer {token}", "MCP-Protocol-Version": VERSION}
    if session is not None:
        out["Mcp-Session-Id"] = session
    return out


async def _open(http: httpx.AsyncClient, url: str, token: str) -> str:
    reply = await http.post(f"{url}/mcp", json=INITIALIZE, headers=_headers(token))
    assert reply.status_code == 200, reply.text
    sid = reply.headers["mcp-session-id"]
    done = await http.post(f"{url}/mcp", json={"jsonrpc": "2.0", "method": "notifications/initialized"},
                           headers=_headers(token, sid))
    assert done.status_code == 202, done.text
    return sid


async def _answer(http: httpx.AsyncClient, method: str, url: str, token: str, sid: str) -> tuple[int, str, str | None]:
    """Status, body and content type of one request on session ``sid`` (a 200 GET is a
    stream: only its status is read)."""
    body: Any = PING if method == "POST" else None
    async with http.stream(method, f"{url}/mcp", json=body, headers=_headers(token, sid)) as reply:
        if reply.status_code == 200 and method == "GET":
            return 200, "", reply.headers.get("content-type")
        text = (await reply.aread()).decode()
        return reply.status_code, text, reply.headers.get("content-type")


async def _assert_unknown_to(http: httpx.AsyncClient, url: str, token: str, sid: str) -> None:
    for method in ("GET", "POST", "DELETE"):
        foreign = await _answer(http, method, url, token, sid)
        unknown = await _answer(http, method, url, token, uuid.uuid4().hex)
        assert foreign == unknown, (method, foreign, unknown)
        assert foreign[0] == 404


async def test_another_principals_session_id_is_answered_as_unknown(issuer: Issuer) -> None:
    alice, bob = issuer.token("alice", RESOURCE), issuer.token("bob", RESOURCE)
    async with _replicas(issuer, 1) as (url,), httpx.AsyncClient(timeout=30) as http:
        sid = await _open(http, url, alice)
        await _assert_unknown_to(http, url, bob, sid)  # GET stream, POST, DELETE: as if no such session
        # Alice's session was neither ended nor touched: her stream and calls work.
        assert (await _answer(http, "GET", url, alice, sid))[0] == 200
        status, text, _ = await _answer(http, "POST", url, alice, sid)
        assert status == 200 and '"result"' in text
        # Bob's own session is his, and Alice cannot end it either.
        mine = await _open(http, url, bob)
        await _assert_unknown_to(http, url, alice, mine)
        # The owner ends her own session.
        assert (await _answer(http, "DELETE", url, alice, sid))[0] == 200
        assert (await _answer(http, "POST", url, alice, sid))[0] == 404


@pytest.mark.usefixtures("redis_server")
async def test_the_owner_is_checked_on_every_replica(issuer: Issuer, redis_server: RedisServer) -> None:
    alice, bob = issuer.token("alice", RESOURCE), issuer.token("bob", RESOURCE)
    async with _replicas(issuer, 2, redis_server.url) as (url_a, url_b), httpx.AsyncClient(timeout=30) as http:
        sid = await _open(http, url_a, alice)
        await _assert_unknown_to(http, url_b, bob, sid)  # the replica that did not open it
        await _assert_unknown_to(http, url_a, bob, sid)  # and the one that did
        status, text, _ = await _answer(http, "POST", url_b, alice, sid)  # the owner moves freely
        assert status == 200 and '"result"' in text
        assert (await _answer(http, "DELETE", url_b, alice, sid))[0] == 200
