"""A user's environment for their own stdio upstream: only the names the operator lists.

The attack of issue 31, reproduced against a real stdio upstream the gateway starts per user
(tests/mcp_fixtures/env_whoami.py, run by this Python): ``PYTHONWARNINGS`` naming the
``antigravity`` module makes the interpreter import it at start-up, which opens a "browser",
and ``BROWSER`` makes that a shell command. With any name accepted, a signed-in user ran
commands on the gateway's host; now every name outside ``userEnv`` is refused, names that
steer a process are refused even when the operator lists them, and the operator's ``env``
always wins.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio

from _procs import free_port
from _team import AsUser
from mcp_fixtures.asgi import serving
from toolscout.access.credentials import Credential, generate_key
from toolscout.errors import ConfigError
from toolscout.server.app import build_app
from toolscout.server.serve_config import ServeConfig
from toolscout.sources.mcp.config import parse_config
from toolscout.sources.mcp.per_user import user_config

ENV_WHOAMI = str(Path(__file__).parents[1] / "mcp_fixtures" / "env_whoami.py")
STATIC = "static-gateway-token-1234"
module_loop = pytest.mark.asyncio(loop_scope="module")


@dataclass
class Served:
    url: str
    marker: Path
    app: Any

    async def request(self, method: str, path: str, user: str, **kwargs: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {STATIC}", "X-Test-User": user}
        async with httpx.AsyncClient(timeout=60) as http:
            return await http.request(method, f"{self.url}{path}", headers=headers, **kwargs)

    async def env(self, user: str, name: str) -> str:
        reply = await self.request("POST", "/v1/call", user, json={"name": "local_whoami", "arguments": {"name": name}})
        body = reply.json()
        assert "content" in body, body
        return str(body["content"][0]["text"])


def _attack(marker: Path) -> dict[str, str]:
    return {"PYTHONWARNINGS": "ignore::antigravity.x::0", "BROWSER": f"/bin/sh -c 'id > {marker}' #%s"}


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def served(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Served]:
    tmp = tmp_path_factory.mktemp("userenv")
    keys = tmp / "vault.keys"
    keys.write_text(f"{generate_key()}\n")
    sources = parse_config({"mcpServers": {"local": {
        "command": sys.executable, "args": [ENV_WHOAMI], "credentials": "per-user", "tokenEnv": "USER_TOKEN",
        "userEnv": ["REGION"], "env": {"MODE": "operator"},
    }}})
    port = free_port()
    settings = ServeConfig.for_sources(sources, transport="http", port=port, token=STATIC,
                                       cache=str(tmp / "store.db"), vault_keys=str(keys))
    app = build_app(settings)
    try:
        app.aggregator.load_cached()
        await app.aggregator.start(lazy=False)
        async with serving(AsUser(app.asgi()), port=port) as url:
            yield Served(url, tmp / "marker", app)
    finally:
        await app.aggregator.aclose()


@module_loop
async def test_the_issue_attack_is_refused_and_runs_nothing(served: Served) -> None:
    body = {"token": "tok-mallory", "env": _attack(served.marker)}
    put = await served.request("PUT", "/v1/credentials/local", "mallory", json=body)
    # a call of the server's tools starts mallory's process (if anything was stored)
    call = await served.request("POST", "/v1/call", "mallory", json={"name": "local_whoami", "arguments": {}})
    assert not served.marker.exists(), "the user's environment ran a shell command on the gateway host"
    assert call.json()["error"]["code"] == "authorization_required"  # nothing was stored
    assert put.status_code == 422, put.text
    error = put.json()["error"]
    assert error["code"] == "env_not_allowed" and error["hint"]
    assert set(error["details"]["refused"]) == {"PYTHONWARNINGS", "BROWSER"} and error["details"]["allowed"] == ["REGION"]
    assert "REGION" in error["hint"]


@module_loop
async def test_a_record_stored_before_the_rules_still_runs_nothing(served: Served) -> None:
    """A vault record written before ``userEnv`` existed (or by hand) is filtered at every
    process start: the payload never reaches the process."""
    broker = served.app.aggregator.credentials
    broker.vault.put("eve", "local", Credential(token="tok-eve", env={**_attack(served.marker), "MODE": "user", "REGION": "eu"}))
    broker.pools["local"].drop("eve")
    assert await served.env("eve", "MODE") == "operator"  # the operator's env wins
    assert await served.env("eve", "REGION") == "eu"  # an allowed name arrives
    assert await served.env("eve", "PYTHONWARNINGS") == "-"
    assert await served.env("eve", "USER_TOKEN") == "tok-eve"
    assert not served.marker.exists()


@module_loop
async def test_an_allowed_name_is_kept_and_values_are_capped(served: Served) -> None:
    ok = await served.request("PUT", "/v1/credentials/local", "alice", json={"token": "tok-a", "env": {"REGION": "us"}})
    assert ok.status_code == 200, ok.text
    assert await served.env("alice", "REGION") == "us"
    for env, why in (({"REGION": "x" * 16_385}, "over 16 KB"), ({"REGION": "a\x00b"}, "NUL")):
        reply = await served.request("PUT", "/v1/credentials/local", "alice", json={"env": env})
        assert reply.status_code == 422 and reply.json()["error"]["code"] == "env_not_allowed"
        assert why in reply.json()["error"]["message"]
    for env in ({"MODE": "user"}, {"PATH": "/tmp"}, {"LD_PRELOAD": "/tmp/x.so"}, {"region": "eu"}):
        reply = await served.request("PUT", "/v1/credentials/local", "alice", json={"env": env})
        assert reply.status_code == 422 and reply.json()["error"]["code"] == "env_not_allowed", env
    assert await served.env("alice", "REGION") == "us"  # the refused requests changed nothing


@pytest.mark.parametrize("name", ["PYTHONWARNINGS", "BROWSER", "LD_PRELOAD", "NODE_OPTIONS", "PATH", "GIT_SSH_COMMAND",
                                  "BASH_ENV", "PERL5OPT", "JAVA_TOOL_OPTIONS", "npm_config_registry", "UV_INDEX_URL"])
def test_an_operator_cannot_let_users_set_a_name_that_steers_the_process(name: str) -> None:
    with pytest.raises(ConfigError, match=name) as caught:
        parse_config({"mcpServers": {"local": {"command": "x", "credentials": "per-user", "userEnv": ["REGION", name]}}})
    assert "steer interpreters" in caught.value.message


def test_user_env_names_the_operator_sets_or_on_http_are_config_errors() -> None:
    with pytest.raises(ConfigError, match="operator's env always wins"):
        parse_config({"mcpServers": {"s": {"command": "x", "userEnv": ["MODE"], "env": {"MODE": "a"}}}})
    with pytest.raises(ConfigError, match="stdio"):
        parse_config({"mcpServers": {"s": {"url": "http://127.0.0.1:1/mcp", "userEnv": ["MODE"]}}})
    with pytest.raises(ConfigError, match="tokenEnv"):
        parse_config({"mcpServers": {"s": {"command": "x", "tokenEnv": "NODE_OPTIONS"}}})


def test_a_given_credential_never_overrides_the_operator_or_steers() -> None:
    cfg = parse_config({"mcpServers": {"s": {"command": "x", "userEnv": ["REGION"], "env": {"MODE": "op"}}}}).servers["s"]
    env = user_config(cfg, Credential(env={"MODE": "user", "REGION": "eu", "LD_PRELOAD": "/x.so"}, kind="given")).env
    assert env == {"MODE": "op", "REGION": "eu"}
