"""Per-user credentials over HTTP: ``/v1/credentials``, the OAuth callback, and calls with them.

The gateway is built by ``build_app`` from a ``ServeConfig`` (vault key file, default
callback URL, a static bearer token) and served on loopback in front of a real per-user
upstream (tests/mcp_fixtures/per_user_upstream.py). Who a request is from comes from a
test-only ASGI wrapper that puts a Principal in the scope (``server/edge.py``'s seam; the
OAuth resource server does the same in production).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from _procs import free_port
from _team import AsUser
from mcp_fixtures.asgi import serving
from mcp_fixtures.per_user_upstream import PerUserUpstream
from toolscout.access.credentials import generate_key
from toolscout.errors import ConfigError
from toolscout.server.app import build_app
from toolscout.server.serve_config import ServeConfig
from toolscout.sources.mcp.config import parse_config

STATIC = "static-gateway-token-1234"
module_loop = pytest.mark.asyncio(loop_scope="module")


@dataclass
class Served:
    url: str
    upstream: PerUserUpstream
    upstream_base: str

    def upstream_url(self, path: str) -> str:
        return self.upstream_base + path

    async def request(self, method: str, path: str, user: str | None = None, **kwargs: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {STATIC}"}
        if user:
            headers["X-Test-User"] = user
        async with httpx.AsyncClient() as http:
            return await http.request(method, f"{self.url}{path}", headers=headers, **kwargs)

    async def whoami(self, user: str) -> dict[str, Any]:
        return (await self.request("POST", "/v1/call", user, json={"name": "team_whoami", "arguments": {}})).json()


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    tmp = tmp_path_factory.mktemp("creds")
    keys = tmp / "vault.keys"
    keys.write_text(f"# first key encrypts\n{generate_key()}\n")
    upstream = PerUserUpstream()
    upstream.grant("lister", "lister-token")
    async with serving(upstream.app()) as up:
        sources = parse_config({"mcpServers": {"team": {
            "url": f"{up}/mcp", "credentials": "per-user", "headers": {"Authorization": "Bearer lister-token"},
            "oauth": {"tokenUrl": f"{up}/token", "authorizationUrl": f"{up}/authorize", "clientId": "toolscout"},
        }}})
        port = free_port()
        settings = ServeConfig.for_sources(sources, transport="http", port=port, token=STATIC,
                                           cache=str(tmp / "store.db"), vault_keys=str(keys))
        app = build_app(settings)
        try:
            app.aggregator.load_cached()
            await app.aggregator.start(lazy=False)
            async with serving(AsUser(app.asgi()), port=port) as url:
                yield Served(url, upstream, up)
        finally:
            await app.aggregator.aclose()


@module_loop
async def test_register_list_call_and_forget_a_token(served: Served) -> None:
    token = served.upstream.grant("alice")
    put = await served.request("PUT", "/v1/credentials/team", "alice", json={"token": token})
    assert put.status_code == 200 and put.json() == {"server": "team", "connected": True}
    listing = await served.request("GET", "/v1/credentials", "alice")
    assert listing.status_code == 200 and token not in listing.text  # never the secret
    body = listing.json()
    assert body["principal"] == "alice"
    assert body["servers"][0] | {"connected_at": None} == {
        "server": "team", "mode": "per-user", "connected": True, "kind": "token", "expires_at": None,
        "connected_at": None, "oauth": True,
    }
    assert (await served.whoami("alice"))["content"][0]["text"] == "alice"
    missing = await served.whoami("bob")
    assert missing["error"]["code"] == "authorization_required"
    assert missing["error"]["details"]["authorization_url"].startswith(served.upstream_url("/authorize"))
    bob = (await served.request("GET", "/v1/credentials", "bob")).json()
    assert bob["servers"][0]["connected"] is False  # alice's connection is not bob's
    gone = await served.request("DELETE", "/v1/credentials/team", "alice")
    assert gone.json() == {"server": "team", "removed": True}
    assert (await served.whoami("alice"))["error"]["code"] == "authorization_required"
    assert STATIC not in served.upstream.seen  # the gateway's own token never reaches an upstream


@module_loop
async def test_consent_through_the_callback_binds_the_account_to_who_started_it(served: Served) -> None:
    started = await served.request("POST", "/v1/credentials/team/authorize", "carol")
    url = started.json()["authorization_url"]
    async with httpx.AsyncClient() as browser:  # the user's browser: no gateway token
        consent = await browser.get(url + "&login_hint=carol")
        assert consent.status_code == 302
        back = consent.headers["location"]
        assert back.startswith(f"{served.url}/oauth/callback?")  # the default callback URL
        landed = await browser.get(back)
        assert landed.status_code == 200 and "Connected" in landed.text and "carol" in landed.text
        replay = await browser.get(back)
        assert replay.status_code == 400 and "used already" in replay.text
        declined = await browser.get(f"{served.url}/oauth/callback?error=access_denied&state=x")
        assert declined.status_code == 400 and "access_denied" in declined.text
        bare = await browser.get(f"{served.url}/oauth/callback")
        assert bare.status_code == 400
    assert (await served.whoami("carol"))["content"][0]["text"] == "carol"
    assert served.upstream.calls[-1][1] == "carol"


@module_loop
async def test_token_holder_unknown_and_malformed_requests(served: Served) -> None:
    # Only the gateway's static token: its holder is one caller of its own (serve's identity
    # guard names it), never someone else who connected an account.
    holder = await served.request("GET", "/v1/credentials")
    assert holder.status_code == 200 and holder.json()["principal"].startswith("token:")
    assert not any(row["connected"] for row in holder.json()["servers"])
    unknown = await served.request("PUT", "/v1/credentials/nope", "alice", json={"token": "x"})
    assert unknown.status_code == 404 and unknown.json()["error"]["code"] == "unknown_server"
    empty = await served.request("PUT", "/v1/credentials/team", "alice", json={})
    assert empty.status_code == 422
    extra = await served.request("PUT", "/v1/credentials/team", "alice", json={"token": "x", "password": "y"})
    assert extra.status_code == 422 and extra.json()["error"]["code"] == "invalid_request"
    assert "password" in extra.json()["error"]["message"] and "y" not in extra.json()["error"].get("details", {})
    async with httpx.AsyncClient() as http:
        unguarded = await http.get(f"{served.url}/v1/credentials", headers={"X-Test-User": "alice"})
    assert unguarded.status_code == 401  # /v1/credentials sits behind the gateway's token


@module_loop
async def test_the_mcp_endpoint_calls_with_the_callers_own_credential(served: Served) -> None:
    token = served.upstream.grant("dave")
    await served.request("PUT", "/v1/credentials/team", "dave", json={"token": token})
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {STATIC}", "X-Test-User": "dave"})
    async with Client(streamable_http_client(f"{served.url}/mcp", http_client=http), mode="legacy") as client:
        result = await client.call_tool("call_tool", {"name": "team_whoami", "arguments": {}})
    assert "dave" in result.content[0].text
    assert served.upstream.calls[-1] == ("whoami", "dave", token)


def test_a_per_user_server_without_a_vault_key_stops_serve_before_anything_starts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("TOOLSCOUT_VAULT_KEYS", raising=False)
    sources = parse_config({"mcpServers": {"team": {"url": "http://127.0.0.1:9/mcp", "credentials": "per-user"}}})
    settings = ServeConfig.for_sources(sources, transport="http", cache=str(tmp_path / "store.db"))
    with pytest.raises(ConfigError, match="vault key") as refused:
        build_app(settings)
    assert "TOOLSCOUT_VAULT_KEYS" in refused.value.hint
    plain = parse_config({"mcpServers": {"team": {"url": "http://127.0.0.1:9/mcp"}}})
    app = build_app(ServeConfig.for_sources(plain, transport="http", cache=str(tmp_path / "plain.db")))
    assert app.aggregator.credentials is None  # the single-user path stays as it was
