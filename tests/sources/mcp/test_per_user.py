"""Upstream calls with each caller's own credential: isolation, consent, refresh, revocation.

Against a real upstream MCP server (tests/mcp_fixtures/per_user_upstream.py, streamable
HTTP, the official SDK) that accepts only tokens it issued and records which token every
call carried, and a stdio server started once per user (tests/mcp_fixtures/env_whoami.py).
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from _wait import until
from mcp_fixtures.asgi import serving
from mcp_fixtures.per_user_upstream import PerUserUpstream
from toolscout.access.credentials import SUBJECT_TOKEN, Credential, Vault, generate_key
from toolscout.access.credentials.vault import NAMESPACE
from toolscout.catalog import Catalog
from toolscout.context import CallContext, Principal
from toolscout.errors import ConfigError, InvalidRequest
from toolscout.gateway import Gateway
from toolscout.request import CallRequest
from toolscout.sources.mcp.aggregator import Aggregator
from toolscout.sources.mcp.config import parse_config
from toolscout.sources.mcp.per_user import CredentialBroker
from toolscout.storage import open_store

ENV_WHOAMI = str(Path(__file__).parents[2] / "mcp_fixtures" / "env_whoami.py")
CALLBACK = "http://127.0.0.1:9/oauth/callback"  # never contacted: the test takes the redirect itself


def who(name: str, gateway_token: str | None = None) -> CallContext:
    """A signed-in caller; ``gateway_token`` is the token they sent the gateway (never forwarded)."""
    secrets = {SUBJECT_TOKEN: gateway_token} if gateway_token else {}
    return CallContext(principal=Principal(name, "user"), credentials=secrets)


@dataclass
class Setup:
    upstream: PerUserUpstream
    base: str
    gateway: Gateway
    aggregator: Aggregator
    broker: CredentialBroker
    vault: Vault | None

    async def call(self, ctx: CallContext, tool: str = "team_whoami", **arguments: Any) -> Any:
        return await self.gateway.execute(CallRequest.parse(tool, arguments), ctx)

    async def consent(self, url: str, user: str) -> str:
        """Be ``user`` at the upstream's authorization server: approve, come back to the callback."""
        async with httpx.AsyncClient() as http:
            reply = await http.get(url + "&login_hint=" + user)
        assert reply.status_code == 302
        back = urlsplit(reply.headers["location"])
        assert f"{back.scheme}://{back.netloc}{back.path}" == CALLBACK
        query = {k: v[0] for k, v in parse_qs(back.query).items()}
        principal, server = await self.broker.complete(query["state"], query["code"])
        assert (principal, server) == (user, "team")  # bound to whoever started the flow
        return query["state"]


@asynccontextmanager
async def setup(tmp_path: Path, mode: str = "per-user", **options: Any) -> AsyncIterator[Setup]:
    upstream = PerUserUpstream(lifetime=options.pop("lifetime", 3600))
    upstream.grant("lister", "lister-token")  # the gateway's own credential: lists tools, never calls
    async with serving(upstream.app()) as base:
        server = {
            "url": f"{base}/mcp",
            "credentials": mode,
            "headers": {"Authorization": "Bearer lister-token"},
            "oauth": {"tokenUrl": f"{base}/token", "authorizationUrl": f"{base}/authorize", "clientId": "toolscout"},
            **options,
        }
        aggregator = Aggregator(parse_config({"mcpServers": {"team": server}}), Catalog())
        vault = Vault(open_store(str(tmp_path / "vault.db")), [generate_key()]) if mode == "per-user" else None
        broker = CredentialBroker(aggregator.config.enabled(), vault=vault, redirect_uri=CALLBACK)
        aggregator.use_credentials(broker)
        await aggregator.start()
        try:
            yield Setup(upstream, base, Gateway(aggregator.catalog), aggregator, broker, vault)
        finally:
            await aggregator.aclose()


async def test_each_caller_carries_their_own_credential_never_another_or_their_gateway_token(tmp_path: Path) -> None:
    async with setup(tmp_path) as s:
        assert s.vault is not None
        tokens = {user: s.upstream.grant(user) for user in ("alice", "bob")}
        for user, token in tokens.items():
            s.vault.put(user, "team", Credential(token=token))
        callers = [who(u, gateway_token=f"gateway-token-of-{u}") for u in ("alice", "bob") for _ in range(8)]
        results = await asyncio.gather(*(s.call(ctx) for ctx in callers))  # concurrent, interleaved
        assert [r.text() for r in results] == [ctx.principal.id for ctx in callers]
        calls = [c for c in s.upstream.calls if c[0] == "whoami"]
        assert len(calls) == 16
        for _tool, user, token in calls:  # every call carried its caller's own token
            assert token == tokens[user]
        carried = {token for _t, _u, token in calls}
        assert carried == set(tokens.values())
        assert "lister-token" not in carried  # the gateway's own credential never stands in
        assert not any(t.startswith("gateway-token-of-") for t in s.upstream.seen)  # nor the caller's
        assert len(s.broker.pools["team"]) == 2  # one connection per user


async def test_no_credential_answers_a_consent_link_and_the_callback_connects_that_caller(tmp_path: Path) -> None:
    async with setup(tmp_path) as s:
        first = await s.call(who("carol"))
        assert first.error is not None and first.error.code == "authorization_required"
        url = first.error.details["authorization_url"]
        assert url.startswith(f"{s.base}/authorize?") and "code_challenge_method=S256" in url
        assert url in first.error.text()  # the model sees the link in the text it reads
        state = await s.consent(url, "carol")
        again = await s.call(who("carol"))
        assert again.ok and again.text() == "carol"
        assert s.upstream.grants == ["authorization_code"]
        with pytest.raises(InvalidRequest, match="used already"):  # a state is single-use
            await s.broker.complete(state, "another-code")
        dave = await s.call(who("dave"))  # carol's connection is hers alone
        assert dave.error is not None and dave.error.code == "authorization_required"
        anonymous = await s.call(CallContext())
        assert anonymous.error is not None and anonymous.error.code == "authorization_required"
        assert "anonymous" in anonymous.error.message


async def test_an_old_or_forged_state_is_refused(tmp_path: Path) -> None:
    async with setup(tmp_path) as s:
        assert s.broker.store is not None
        with pytest.raises(InvalidRequest, match="unknown"):
            await s.broker.complete("forged", "code")
        url = s.broker.consent_url("team", "erin")
        assert url is not None
        state = parse_qs(urlsplit(url).query)["state"][0]
        entry = s.broker.store.get("oauth-state", state)
        assert entry is not None and "erin" in entry.text
        record = json.loads(entry.text)
        s.broker.store.put("oauth-state", state, json.dumps({**record, "created": record["created"] - 601}), entry.meta)
        with pytest.raises(InvalidRequest, match="expired"):
            await s.broker.complete(state, "code")


async def test_a_revoked_credential_asks_to_reconsent_and_an_oauth_grant_refreshes_once(tmp_path: Path) -> None:
    async with setup(tmp_path) as s:
        assert s.vault is not None
        token = s.upstream.grant("alice")
        s.vault.put("alice", "team", Credential(token=token))
        assert (await s.call(who("alice"))).text() == "alice"
        s.upstream.revoke(token)
        refused = await s.call(who("alice"))
        assert refused.error is not None and refused.error.code == "authorization_required"
        assert refused.error.details["reason"] == "revoked" and "authorization_url" in refused.error.details
        assert s.vault.get("alice", "team", fresh=True) is None  # forgotten: the next call asks again
        # An OAuth grant: the upstream revokes the access token, the refresh token still works.
        missing = await s.call(who("bob"))
        await s.consent(missing.error.details["authorization_url"], "bob")
        bob = s.vault.get("bob", "team")
        assert bob is not None and bob.refresh_token
        s.upstream.revoke(bob.token or "")
        again = await s.call(who("bob"))
        assert again.ok and again.text() == "bob"
        assert s.upstream.grants == ["authorization_code", "refresh_token"]
        assert s.vault.get("bob", "team").token != bob.token


async def test_a_grant_about_to_expire_is_refreshed_before_the_call(tmp_path: Path) -> None:
    async with setup(tmp_path, lifetime=30) as s:  # expires within the 60 s refresh margin
        missing = await s.call(who("alice"))
        await s.consent(missing.error.details["authorization_url"], "alice")
        first = s.vault.get("alice", "team") if s.vault else None
        result = await s.call(who("alice"))
        assert result.ok and result.text() == "alice"
        assert s.upstream.grants == ["authorization_code", "refresh_token"]
        assert first is not None and s.upstream.calls[-1][2] != first.token  # the call carried the new one


async def test_a_corrupt_or_foreign_record_is_a_structured_error_and_others_keep_working(tmp_path: Path) -> None:
    async with setup(tmp_path) as s:
        assert s.vault is not None
        s.vault.put("bob", "team", Credential(token=s.upstream.grant("bob")))
        s.vault.store.put(NAMESPACE, "alice\nteam", b"not a fernet token at all")
        s.vault.forget("alice", "team")
        broken = await s.call(who("alice"))
        assert broken.error is not None and broken.error.code == "credential_unreadable"
        assert "authorization_url" in broken.error.details
        other = Vault(s.vault.store, [generate_key()])  # sealed with a key this gateway lacks
        other.put("carol", "team", Credential(token="x"))
        foreign = await s.call(who("carol"))
        assert foreign.error is not None and foreign.error.code == "credential_unreadable"
        assert "key" in foreign.error.message
        assert (await s.call(who("bob"))).text() == "bob"


async def test_token_exchange_trades_the_callers_token_and_never_forwards_it(tmp_path: Path) -> None:
    async with setup(tmp_path, mode="token-exchange") as s:
        s.upstream.trust_subject("idp-token-alice", "alice")
        s.upstream.trust_subject("idp-token-bob", "bob")
        results = await asyncio.gather(
            s.call(who("alice", "idp-token-alice")), s.call(who("bob", "idp-token-bob")),
            s.call(who("alice", "idp-token-alice")),
        )
        assert [r.text() for r in results] == ["alice", "bob", "alice"]
        assert not {"idp-token-alice", "idp-token-bob"} & set(s.upstream.seen)
        assert s.upstream.grants.count("urn:ietf:params:oauth:grant-type:token-exchange") <= 3
        none = await s.call(who("carol"))  # no token of their own to exchange
        assert none.error is not None and none.error.code == "authorization_required"
        refused = await s.call(who("mallory", "idp-token-unknown"))
        assert refused.error is not None and refused.error.code == "authorization_required"


async def test_stdio_upstream_runs_one_process_per_user_with_their_environment(tmp_path: Path) -> None:
    server = {"command": sys.executable, "args": [ENV_WHOAMI], "credentials": "per-user",
              "tokenEnv": "USER_TOKEN", "maxUserConnections": 1, "env": {"USER_TOKEN": "gateway-own"}}
    aggregator = Aggregator(parse_config({"mcpServers": {"local": server}}), Catalog())
    vault = Vault(open_store(str(tmp_path / "vault.db")), [generate_key()])
    broker = CredentialBroker(aggregator.config.enabled(), vault=vault)
    aggregator.use_credentials(broker)
    try:
        await aggregator.start()
        gateway = Gateway(aggregator.catalog)
        vault.put("alice", "local", Credential(token="tok-alice"))
        vault.put("bob", "local", Credential(token="tok-bob"))

        async def whoami(user: str) -> tuple[str, str]:
            result = await gateway.execute(CallRequest.parse("local_whoami", {}), who(user))
            token, pid = result.text().split()
            return token, pid

        alice_token, alice_pid = await whoami("alice")
        assert alice_token == "tok-alice"
        bob_token, bob_pid = await whoami("bob")  # the pool holds one: alice's idle process goes
        assert bob_token == "tok-bob" and bob_pid != alice_pid
        assert len(broker.pools["local"]) == 1
        again_token, again_pid = await whoami("alice")
        assert again_token == "tok-alice" and again_pid not in (alice_pid, bob_pid)
        assert broker.pools["local"].sweep(now=float("inf")) == 1 and len(broker.pools["local"]) == 0
    finally:
        await aggregator.aclose()


async def test_idle_user_processes_are_stopped_without_another_call(tmp_path: Path) -> None:
    server = {"command": sys.executable, "args": [ENV_WHOAMI], "credentials": "per-user",
              "tokenEnv": "USER_TOKEN", "userIdleTimeout": 0.2}
    aggregator = Aggregator(parse_config({"mcpServers": {"local": server}}), Catalog())
    broker = CredentialBroker(aggregator.config.enabled(), vault=None)
    aggregator.use_credentials(broker)
    try:
        await aggregator.start()
        ctx = who("alice").replace(credentials={"local": "tok-given"})  # a library caller's own token
        result = await Gateway(aggregator.catalog).execute(CallRequest.parse("local_whoami", {}), ctx)
        assert result.text().split()[0] == "tok-given"
        assert len(broker.pools["local"]) == 1
        await until(lambda: len(broker.pools["local"]) == 0, timeout=10)
    finally:
        await aggregator.aclose()


def test_config_modes_are_checked_and_their_secrets_masked() -> None:
    with pytest.raises(ConfigError, match="token-exchange' needs 'oauth'"):
        parse_config({"mcpServers": {"x": {"url": "http://h/mcp", "credentials": "token-exchange"}}})
    with pytest.raises(ConfigError, match="credentials"):
        parse_config({"mcpServers": {"x": {"url": "http://h/mcp", "credentials": "everyone"}}})
    cfg = parse_config({"mcpServers": {"x": {"url": "http://h/mcp", "credentials": "per-user", "oauth": {
        "tokenUrl": "http://h/token", "clientId": "gw", "clientSecret": "client-secret-1"}}}}).servers["x"]
    assert cfg.redact("failed with client-secret-1") == "failed with ***"
    assert cfg.public()["credentials"] == "per-user" and "client-secret-1" not in repr(cfg)
    plain = parse_config({"mcpServers": {"x": {"url": "http://h/mcp"}}}).servers["x"]
    assert plain.config_hash() == cfg.config_hash()  # the mode does not change what is listed
