"""The gateway as an OAuth 2.1 resource server against a real authorization server
(oidc-provider on Node, tests/_oidc.py): protected-resource metadata, the 401/403
challenges, the attack list (each refused with a structured error), two callers with
different groups seeing only their tools over the MCP SDK client and /v1, the audit log
naming each call's caller, and learning that counts callers, not session names."""

from __future__ import annotations

import base64
import hashlib
import hmac
import io
import json
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
import pytest_asyncio
from mcp import Client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from _oidc import Issuer, oidc_server
from _procs import free_port
from _team import CLIENTS, POLICIES
from _team import catalog as _catalog
from _team import serve as _serve
from toolscout.access.audit import AuditLog, JsonLines
from toolscout.access.auth import AuthConfig, TokenVerifier
from toolscout.gateway import Gateway
from toolscout.server.app import http_app
from toolscout.server.mcp import GatewayServer
from toolscout.storage import open_store

pytestmark = pytest.mark.asyncio(loop_scope="module")

QUERY = "notify the team with a message"


@dataclass
class Served:
    url: str
    resource: str
    issuer: Issuer
    gateway: Gateway
    lines: io.StringIO

    tokens: dict[tuple[str, str], str] | None = None

    def token(self, client: str, scope: str = "tools") -> str:
        """A real token from the issuer (one per client and scope: they live 5 minutes)."""
        self.tokens = self.tokens or {}
        key = (client, scope)
        if key not in self.tokens:
            self.tokens[key] = self.issuer.token(client, self.resource, scope)
        return self.tokens[key]


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def issuer() -> AsyncIterator[Issuer]:
    with oidc_server(CLIENTS) as found:
        yield found


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def served(issuer: Issuer, tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    config = AuthConfig.model_validate(
        {
            "issuer": issuer.url,
            "requiredScopes": ["tools"],
            "clientId": "gateway",
            "clientSecret": issuer.secrets["gateway"],
            "policies": POLICIES,
            "admins": [{"groups": "admins"}],
        }
    )
    gateway = Gateway(_catalog(), call_timeout=None, learn=True)
    store = open_store(str(tmp_path_factory.mktemp("audit") / "audit.db"))
    lines = io.StringIO()
    server = GatewayServer(gateway, access=config.access_rules(), verifier=TokenVerifier(config, resource))
    server.audit_log = AuditLog(store)
    gateway.recorders += [server.audit_log, JsonLines(lines)]
    http, task = await _serve(http_app(server), port)
    try:
        yield Served(f"http://127.0.0.1:{port}", resource, issuer, gateway, lines)
    finally:
        http.should_exit = True
        await task
        store.close()


def connect(served: Served, token: str, mode: str = "legacy") -> Client:
    http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
    return Client(streamable_http_client(f"{served.url}/mcp", http_client=http), mode=mode)


async def _api(served: Served, token: str | None, method: str, path: str, **kwargs: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    async with httpx.AsyncClient(timeout=30) as http:
        return await http.request(method, f"{served.url}{path}", headers=headers, **kwargs)


# -- the resource server's face ------------------------------------------------------------


async def test_protected_resource_metadata_names_the_issuer(served: Served) -> None:
    for path in ("/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"):
        reply = await _api(served, None, "GET", path)
        assert reply.status_code == 200
        meta = reply.json()
        assert meta["resource"] == served.resource and meta["authorization_servers"] == [served.issuer.url]
        assert meta["scopes_supported"] == ["tools"]


async def test_no_token_gets_a_challenge_naming_the_metadata(served: Served) -> None:
    reply = await _api(served, None, "POST", "/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert reply.status_code == 401
    challenge = reply.headers["www-authenticate"]
    assert challenge.startswith("Bearer ")
    assert f'resource_metadata="{served.url}/.well-known/oauth-protected-resource/mcp"' in challenge
    assert reply.json()["error"] == "invalid_token" and reply.json()["hint"]


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _hs_with_public_key(served: Served) -> str:
    """HS256 keyed with the issuer's *public* key: the classic RS/HS confusion."""
    from cryptography.hazmat.primitives import serialization

    public = served.issuer.key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    header = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "test-signing-key"}).encode())
    now = int(time.time())
    claims = {"iss": served.issuer.url, "aud": served.resource, "sub": "mallory", "exp": now + 300, "scope": "tools"}
    body = _b64(json.dumps(claims).encode())
    signature = hmac.new(public, f"{header}.{body}".encode(), hashlib.sha256).digest()
    return f"{header}.{body}.{_b64(signature)}"


def _attack(served: Served, name: str) -> str:
    now = int(time.time())
    good = {"aud": served.resource, "scope": "tools", "groups": ["admins"]}
    mint = served.issuer.mint
    if name == "expired":
        return mint({**good, "exp": now - 3600, "iat": now - 7200})
    if name == "not yet valid":
        return mint({**good, "nbf": now + 3600})
    if name == "wrong issuer":
        return mint({**good, "iss": "http://127.0.0.1:1/evil"})
    if name == "wrong audience":
        return mint({**good, "aud": f"{served.url}/elsewhere"})
    if name == "token for another resource":  # a real token, asked for another server
        return served.issuer.token("alice", "http://127.0.0.1:9/mcp")
    if name == "alg none":
        header = _b64(json.dumps({"alg": "none", "typ": "JWT"}).encode())
        return f"{header}.{_b64(json.dumps({**good, 'iss': served.issuer.url, 'exp': now + 300}).encode())}."
    if name == "HS/RS confusion":
        return _hs_with_public_key(served)
    if name == "unknown kid":
        from cryptography.hazmat.primitives.asymmetric import rsa

        rogue = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        return mint(good, key=rogue, kid="rogue-key")
    if name == "tampered signature":  # a real token whose groups were edited
        header, body, signature = served.token("bob").split(".")
        claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        claims["groups"] = ["eng", "admins"]
        return f"{header}.{_b64(json.dumps(claims).encode())}.{signature}"
    if name == "garbage":
        return "not-a-token"
    if name == "kid not a string":
        _header, body, signature = mint(good).split(".")
        header = _b64(json.dumps({"alg": "RS256", "kid": ["test-signing-key"]}).encode())
        return f"{header}.{body}.{signature}"
    if name == "another algorithm for the key":  # PS256 with the key the issuer publishes for RS256
        import jwt

        claims = {**good, "iss": served.issuer.url, "exp": now + 300, "sub": "mallory"}
        return jwt.encode(claims, served.issuer.key, algorithm="PS256", headers={"kid": "test-signing-key"})
    if name == "header not JSON":
        return f"{_b64(b'{not json')}.{_b64(b'{}')}.c2ln"
    raise AssertionError(name)


ATTACKS = {  # attack -> why it is refused
    "expired": "expired",
    "not yet valid": "not valid yet",
    "wrong issuer": "another issuer",
    "wrong audience": "another resource",
    "token for another resource": "another resource",
    "alg none": "'none' are not accepted",
    "HS/RS confusion": "'HS256' are not accepted",
    "unknown kid": "a key the issuer does not publish",
    "tampered signature": "signature does not verify",
    "garbage": "not active",  # not a JWT: the issuer's introspection says so
    "kid not a string": "not a well-formed JWT",  # pyjwt itself refuses it
    "another algorithm for the key": "does not match its key",
    "header not JSON": "not a well-formed JWT",
}


@pytest.mark.parametrize("attack", ATTACKS)
async def test_attack_tokens_are_refused_with_a_structured_401(served: Served, attack: str) -> None:
    token = _attack(served, attack)
    for method, path, body in (("POST", "/v1/find", {"query": "repository"}), ("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"})):
        reply = await _api(served, token, method, path, json=body)
        assert reply.status_code == 401, (attack, reply.text)
        assert reply.headers["www-authenticate"].startswith('Bearer error="invalid_token"')
        error = reply.json()
        assert error["error"] == "invalid_token" and error["message"] and error["hint"]
        assert token not in reply.text  # never echoed
        assert ATTACKS[attack] in error["message"]


def _without_subject(served: Served, claims: dict[str, Any]) -> str:
    """A token the issuer's key signs that has no ``sub`` unless ``claims`` gives one."""
    import jwt

    now = int(time.time())
    return jwt.encode({"iss": served.issuer.url, "iat": now, "exp": now + 300, **claims}, served.issuer.key,
                      algorithm="RS256", headers={"kid": "test-signing-key"})


async def test_a_token_naming_no_caller_is_refused_not_shared(served: Served) -> None:
    """No ``sub`` and no ``client_id``: refused, never the shared principal ``unknown``
    (every such caller would be one person: sessions, vault records, audit identity)."""
    good = {"aud": served.resource, "scope": "tools", "groups": ["eng"]}
    for claims in (good, {**good, "sub": ""}, {**good, "email": "x@example.org"}):
        token = _without_subject(served, claims)
        for method, path, body in (("GET", "/v1/whoami", None), ("POST", "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "ping"})):
            reply = await _api(served, token, method, path, json=body)
            assert reply.status_code == 401, (claims, reply.text)
            error = reply.json()
            assert error["error"] == "invalid_token" and "names no caller" in error["message"] and "idClaim" in error["hint"]


async def test_the_operator_names_the_claim_that_identifies_callers(served: Served) -> None:
    from toolscout.errors import InvalidToken

    config = AuthConfig.model_validate({"issuer": served.issuer.url, "idClaim": "email"})
    verifier = TokenVerifier(config, served.resource)
    good = {"aud": served.resource, "scope": "tools"}
    first = await verifier.verify(_without_subject(served, {**good, "email": "ann@example.org"}))
    second = await verifier.verify(_without_subject(served, {**good, "email": "ben@example.org"}))
    assert (first.id, second.id) == ("ann@example.org", "ben@example.org")
    with pytest.raises(InvalidToken, match="'email', 'sub', 'client_id'"):
        await verifier.verify(_without_subject(served, good))


async def test_a_token_without_the_required_scope_gets_403_naming_it(served: Served) -> None:
    token = served.token("alice", scope="admin")
    reply = await _api(served, token, "POST", "/v1/find", json={"query": "repository"})
    assert reply.status_code == 403
    challenge = reply.headers["www-authenticate"]
    assert 'error="insufficient_scope"' in challenge and 'scope="tools"' in challenge
    assert reply.json()["error"] == "insufficient_scope"


async def test_a_good_token_and_an_introspected_opaque_one_name_their_caller(served: Served) -> None:
    reply = await _api(served, served.token("alice"), "GET", "/v1/whoami")
    assert reply.status_code == 200
    me = reply.json()
    assert (me["principal"], me["kind"], me["claims"]["groups"], me["admin"]) == ("alice", "service", ["eng"], False)
    opaque = served.token("opaque-agent")
    assert opaque.count(".") != 2  # not a JWT: checked by the issuer's introspection endpoint
    me = (await _api(served, opaque, "GET", "/v1/whoami")).json()
    assert (me["principal"], me["claims"]["groups"]) == ("opaque-agent", ["eng"])
    carol = (await _api(served, served.token("carol"), "GET", "/v1/whoami")).json()
    assert carol["admin"] is True


async def test_an_unreachable_issuer_fails_closed_and_readiness_says_so() -> None:
    port, dead = free_port(), free_port()
    config = AuthConfig.model_validate({"issuer": f"http://127.0.0.1:{dead}"})
    resource = f"http://127.0.0.1:{port}/mcp"
    server = GatewayServer(Gateway(_catalog(), call_timeout=None), verifier=TokenVerifier(config, resource))
    http, task = await _serve(http_app(server), port)
    try:
        async with httpx.AsyncClient(timeout=30) as client:
            token = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.eyJzdWIiOiJ4In0.c2ln"
            reply = await client.post(f"http://127.0.0.1:{port}/v1/find", json={"query": "x"}, headers={"Authorization": f"Bearer {token}"})
            assert reply.status_code == 503 and reply.json()["error"] == "issuer_unavailable"
            ready = await client.get(f"http://127.0.0.1:{port}/v1/ready", headers={"Authorization": f"Bearer {token}"})
            assert ready.status_code == 503  # refused at the edge: the issuer cannot vouch for anyone
        state = await server.verifier.status()  # what /v1/ready reports to a caller that gets through
        assert state["reachable"] is False and state["last_error"]
    finally:
        http.should_exit = True
        await task


# -- two callers, two views -----------------------------------------------------------------


def _names(result: Any) -> set[str]:
    return {t.name for t in result.tools}


async def test_each_caller_sees_only_their_tools_over_the_sdk_client(served: Served) -> None:
    async with connect(served, served.token("alice")) as alice, connect(served, served.token("bob")) as bob:
        assert "github_status" in _names(await alice.list_tools())  # pinned for the eng group only
        assert "github_status" not in _names(await bob.list_tools())
        for client, mine, theirs in ((alice, "github_", "crm_"), (bob, "crm_", "github_")):
            found = await client.call_tool("find_tools", {"query": "repository issue customer record leads", "limit": 10})
            names = [r["tool_name"] for r in found.structured_content["tool_references"]]
            assert any(n.startswith(mine) for n in names) and not any(n.startswith(theirs) for n in names)
        denied = await bob.call_tool("call_tool", {"name": "github_delete_repository", "arguments": {}})
        assert denied.is_error and denied.structured_content["error"]["code"] == "unknown_tool"  # hidden: absent
        typo = await bob.call_tool("call_tool", {"name": "github_create_isue", "arguments": {}})
        assert "github_create_issue" not in json.dumps(typo.structured_content)  # no did-you-mean leak
        ran = await alice.call_tool("call_tool", {"name": "github_create_issue", "arguments": {}})
        assert not ran.is_error and ran.content[0].text == "github_create_issue done"
    async with connect(served, served.token("bob"), mode="auto") as stateless:
        assert stateless.protocol_version == "2026-07-28"
        assert "github_status" not in _names(await stateless.list_tools())
        found = await stateless.call_tool("find_tools", {"query": "GitHub repository issue", "limit": 10})
        assert not any(r["tool_name"].startswith("github_") for r in found.structured_content.get("tool_references", []))


async def test_each_caller_sees_only_their_tools_over_v1(served: Served) -> None:
    alice, bob = served.token("alice"), served.token("bob")
    query = {"query": "repository issue customer record leads", "limit": 10}
    mine = [r["tool_name"] for r in (await _api(served, alice, "POST", "/v1/find", json=query)).json()["tool_references"]]
    theirs = [r["tool_name"] for r in (await _api(served, bob, "POST", "/v1/find", json=query)).json()["tool_references"]]
    assert any(n.startswith("github_") for n in mine) and not any(n.startswith("crm_") for n in mine)
    assert any(n.startswith("crm_") for n in theirs) and not any(n.startswith("github_") for n in theirs)
    assert (await _api(served, bob, "GET", "/v1/tools/github_create_issue")).status_code == 404  # hidden: absent
    assert (await _api(served, alice, "GET", "/v1/tools/github_create_issue")).status_code == 200
    refused = (await _api(served, bob, "POST", "/v1/call", json={"name": "github_create_issue"})).json()
    assert refused["error"]["code"] == "unknown_tool"
    ran = (await _api(served, bob, "POST", "/v1/call", json={"name": "crm_lookup_customer", "arguments": {}})).json()
    assert ran["ok"] is True
    gated = (await _api(served, alice, "POST", "/v1/call", json={"name": "github_delete_repository"})).json()
    assert gated["error"]["code"] == "approval_required"  # the eng rule: dangerous calls need approval


async def test_the_audit_log_names_each_calls_caller(served: Served) -> None:
    alice, bob, carol = served.token("alice"), served.token("bob"), served.token("carol")
    await _api(served, alice, "POST", "/v1/call", json={"name": "weather_forecast", "arguments": {"city": "Oslo"}})
    await _api(served, bob, "POST", "/v1/call", json={"name": "github_delete_repository"})
    async with connect(served, bob) as client:
        await client.call_tool("call_tool", {"name": "crm_export_leads", "arguments": {}})
    everyone = (await _api(served, carol, "GET", "/v1/audit", params={"since": "1h"})).json()["records"]
    seen = {(r["principal"], r["tool"], r["decision"], r["outcome"]) for r in everyone}
    assert ("alice", "weather_forecast", "allowed", "ok") in seen
    assert ("bob", "github_delete_repository", "denied", "denied") in seen
    assert ("bob", "crm_export_leads", "allowed", "ok") in seen
    assert all("arguments" not in r and r["replica"] and r["duration_ms"] >= 0 for r in everyone)  # no values by default
    own = (await _api(served, bob, "GET", "/v1/audit")).json()["records"]
    assert own and {r["principal"] for r in own} == {"bob"}
    assert (await _api(served, bob, "GET", "/v1/audit", params={"principal": "alice"})).status_code == 403
    only = (await _api(served, carol, "GET", "/v1/audit", params={"principal": "alice"})).json()["records"]
    assert only and {r["principal"] for r in only} == {"alice"}
    assert "Oslo" not in served.lines.getvalue()
    lines = [json.loads(line)["audit"] for line in served.lines.getvalue().splitlines()]
    assert any(r["principal"] == "bob" and r["decision"] == "denied" for r in lines)


# -- learning counts callers -------------------------------------------------------------------


def _top(gateway: Gateway) -> str:
    return gateway.find_tools(QUERY).tool_references[0].tool_name


async def test_one_caller_cannot_steer_learning_with_sessions_or_connections(served: Served) -> None:
    """Issue 23: self-named sessions, connections and /v1 conversations of one caller (three
    of each) move the ranking no more than one; three callers agreeing do move it."""
    before = _top(served.gateway)
    assert before == "chat_post_message"
    alice = served.token("alice")
    async with connect(served, alice, mode="auto") as client:
        for i in range(3):
            meta = {"toolscout/session": f"sybil-{i}"}
            await client.call_tool("find_tools", {"query": QUERY}, meta=meta)  # type: ignore[arg-type]
            await client.call_tool("call_tool", {"name": "mail_send_email", "arguments": {}}, meta=meta)  # type: ignore[arg-type]
    for _ in range(3):
        async with connect(served, alice) as client:
            await client.call_tool("find_tools", {"query": QUERY})
            await client.call_tool("call_tool", {"name": "mail_send_email", "arguments": {}})
    for i in range(3):
        await _api(served, alice, "POST", "/v1/find", json={"query": QUERY, "session": f"v1-{i}"})
        await _api(served, alice, "POST", "/v1/call", json={"name": "mail_send_email", "session": f"v1-{i}"})
    assert _top(served.gateway) == before
    for who in ("bob", "dave", "erin"):
        token = served.token(who)
        await _api(served, token, "POST", "/v1/find", json={"query": QUERY, "session": "c"})
        await _api(served, token, "POST", "/v1/call", json={"name": "mail_send_email", "session": "c"})
    assert _top(served.gateway) == "mail_send_email"


async def test_auth_config_refuses_symmetric_and_none_algorithms() -> None:
    from pydantic import ValidationError

    for algorithms in (["HS256"], ["none"], ["RS256", "HS512"], []):
        with pytest.raises(ValidationError, match="public-key"):
            AuthConfig.model_validate({"issuer": "http://127.0.0.1:1", "algorithms": algorithms})


async def test_the_console_shows_each_person_their_own_tools(served: Served) -> None:
    alice, bob, carol = served.token("alice"), served.token("bob"), served.token("carol")
    mine = (await _api(served, bob, "GET", "/ui/api/catalog")).json()
    names = {t["name"] for t in mine["tools"]}
    assert "crm_lookup_customer" in names and not any(n.startswith("github_") for n in names)
    assert mine["total"] == len(names)
    assert (await _api(served, bob, "GET", "/ui/api/tool", params={"name": "github_create_issue"})).status_code == 404
    assert (await _api(served, alice, "GET", "/ui/api/tool", params={"name": "github_create_issue"})).status_code == 200
    found = (await _api(served, bob, "GET", "/ui/api/search", params={"q": "GitHub repository issue"})).json()
    assert not any(h["name"].startswith("github_") for h in found["hits"])
    await _api(served, alice, "POST", "/v1/find", json={"query": "secret project codename"})
    assert (await _api(served, bob, "GET", "/ui/api/calls")).json()["calls"] == []  # others' queries: admins only
    assert (await _api(served, carol, "GET", "/ui/api/calls")).json()["calls"]
    page = (await _api(served, None, "GET", "/ui/")).text
    assert 'id="whoami"' in page and 'data-view="audit"' in page


async def test_readiness_reports_the_issuer(served: Served) -> None:
    alice = served.token("alice")
    ready = (await _api(served, alice, "GET", "/v1/ready")).json()
    assert ready["auth"]["reachable"] is True and ready["auth"]["issuer"] == served.issuer.url
