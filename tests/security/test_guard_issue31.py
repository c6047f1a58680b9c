"""Issue 31's failures, each as it was attacked: a hostile upstream's text reaches the model
unscreened on some path, a hidden server is still named or told apart, a decision goes
unrecorded. Over the official SDK client against a real (stdio) upstream; each test failed
on 672a837 and passes with the guard (tests/security/README: run them against a base)."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_fixtures.poisoned_upstream import INJECTED
from toolscout.access.policy import Policy
from toolscout.catalog import Catalog
from toolscout.gateway import Gateway
from toolscout.security.results import ResultScreen
from toolscout.server.mcp import GatewayServer
from toolscout.sources.mcp.aggregator import Aggregator
from toolscout.sources.mcp.config import parse_config

FIXTURE = Path(__file__).resolve().parents[1] / "mcp_fixtures" / "poisoned_upstream.py"
MARK = "[toolscout]"
DROP = "drop.example.com"

pytestmark = pytest.mark.asyncio


class Served:
    def __init__(self, server: GatewayServer, records: list[Any]) -> None:
        self.server, self.records = server, records


async def _serve(*, policy: Policy | None = None, screen: str | None = "warn", code_mode: bool = False) -> AsyncIterator[Served]:
    cfg = parse_config({"mcpServers": {"web": {"command": sys.executable, "args": [str(FIXTURE)]}}})
    agg = Aggregator(cfg, Catalog())
    try:
        await agg.refresh("web")
        gateway = Gateway(agg.catalog, call_timeout=None, policy=policy)
        if screen is not None:
            gateway.screen_results = ResultScreen(screen)
        records: list[Any] = []
        gateway.recorders.append(records.append)
        yield Served(GatewayServer(gateway, agg, code_mode=code_mode), records)
    finally:
        await agg.aclose()


@pytest.fixture
async def warn() -> AsyncIterator[Served]:
    async for s in _serve(code_mode=True):
        yield s


@pytest.fixture
async def quarantine() -> AsyncIterator[Served]:
    async for s in _serve(screen="quarantine"):
        yield s


@pytest.fixture
async def hidden() -> AsyncIterator[Served]:
    """A caller whose policy hides the server ``web`` (its tools, resources and prompts)."""
    async for s in _serve(policy=Policy(deny=("web_*", "web")), code_mode=True):
        yield s


def _text(result: Any) -> str:
    return "\n".join(getattr(b, "text", "") for b in result.content)


# -- item 3: screening on every path ------------------------------------------------------
@pytest.mark.parametrize("mode", ["legacy", "auto"])  # a stateful session, and the stateless revision
async def test_an_upstream_result_reaches_an_mcp_client_marked(warn: Served, mode: str) -> None:
    async with Client(warn.server.lowlevel, mode=mode) as client:
        result = await client.call_tool("call_tool", {"name": "web_page", "arguments": {}})
    assert result.content[0].text.startswith(MARK), _text(result)


async def test_a_program_reading_poisoned_structured_content_is_marked(warn: Served) -> None:
    async with Client(warn.server.lowlevel, mode="auto") as client:
        result = await client.call_tool("execute", {"code": "r = await web_data()\nprint(r)"})
    assert not result.is_error, _text(result)
    assert DROP in _text(result) and result.content[0].text.startswith(MARK), _text(result)


async def test_a_resource_read_is_screened(warn: Served) -> None:
    async with Client(warn.server.lowlevel, mode="auto") as client:
        read = await client.read_resource("web+memo://page")
    assert read.contents[0].text.startswith(MARK), read.contents


async def test_a_prompt_is_screened(warn: Served) -> None:
    async with Client(warn.server.lowlevel, mode="auto") as client:
        got = await client.get_prompt("web_brief")
    assert got.messages[0].content.text.startswith(MARK), got.messages


async def test_quarantine_withholds_a_poisoned_resource(quarantine: Served) -> None:
    async with Client(quarantine.server.lowlevel, mode="auto") as client:
        with pytest.raises(MCPError, match="result_withheld") as caught:
            await client.read_resource("web+memo://page")
    assert DROP not in str(caught.value)


# -- item 4: hidden means absent ----------------------------------------------------------
async def test_no_match_hints_do_not_name_a_hidden_server(hidden: Served) -> None:
    async with Client(hidden.server.lowlevel, mode="auto") as client:
        found = await client.call_tool("find_tools", {"query": "qqqq zzzz"})
        empty = await client.call_tool("find_tools", {"query": "   "})
    for result in (found, empty):
        dumped = json.dumps(result.structured_content or {}) + _text(result)
        assert "web" not in dumped, dumped


async def test_the_execute_description_does_not_name_a_hidden_server(hidden: Served) -> None:
    async with Client(hidden.server.lowlevel, mode="auto") as client:
        tools = (await client.list_tools()).tools
    execute = next(t for t in tools if t.name == "execute")
    assert "web" not in (execute.description or "")


async def test_capabilities_do_not_name_a_hidden_server(hidden: Served) -> None:
    async with Client(hidden.server.lowlevel, mode="auto") as client:
        read = await client.read_resource("toolscout://capabilities")
    caps = json.loads(read.contents[0].text)
    assert "web" not in caps["servers"] and caps["tools"] == 0 and caps["categories"] == 0


async def test_a_hidden_prefix_answers_exactly_as_an_unknown_one(hidden: Served) -> None:
    answers = []
    async with Client(hidden.server.lowlevel, mode="auto") as client:
        for uri in ("web+memo://page", "nosuch+memo://page"):
            with pytest.raises(MCPError) as caught:
                await client.read_resource(uri)
            answers.append((caught.value.error.code, caught.value.error.message.replace(uri, "URI")))
        for name in ("web_brief", "nosuch_brief"):
            with pytest.raises(MCPError) as caught:
                await client.get_prompt(name)
            answers.append((caught.value.error.code, caught.value.error.message.replace(name, "NAME")))
    assert answers[0] == answers[1] and answers[2] == answers[3], answers


# -- item 5: every decision audited ---------------------------------------------------------
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_a_call_denied_over_mcp_tools_call_is_audited(hidden: Served, mode: str) -> None:
    async with Client(hidden.server.lowlevel, mode=mode) as client:
        result = await client.call_tool("call_tool", {"name": "web_page", "arguments": {}})
    assert result.is_error
    assert [(r.tool, r.decision) for r in hidden.records] == [("web_page", "denied")]


async def test_a_program_is_one_record_with_its_calls_under_it(warn: Served) -> None:
    async with Client(warn.server.lowlevel, mode="auto") as client:
        await client.call_tool("execute", {"code": "await web_page()\nawait web_data()\nprint('done')"})
    programs = [r for r in warn.records if getattr(r, "operation", None) == "program"]
    assert len(programs) == 1 and programs[0].id
    inner = [r for r in warn.records if r is not programs[0]]
    assert sorted(r.tool for r in inner) == ["web_data", "web_page"]
    assert {r.parent for r in inner} == {programs[0].id}


async def test_resource_and_prompt_reads_are_audited(warn: Served) -> None:
    async with Client(warn.server.lowlevel, mode="auto") as client:
        await client.read_resource("web+memo://page")
        await client.get_prompt("web_brief")
    assert [(getattr(r, "operation", None), r.tool, r.decision) for r in warn.records] == [
        ("resources/read", "web+memo://page", "allowed"), ("prompts/get", "web_brief", "allowed")]


# -- item 6: per-user credentials on every operation ---------------------------------------
async def test_a_per_user_servers_resources_and_prompts_use_the_callers_own_process(tmp_path: Path) -> None:
    from toolscout.access.credentials import Credential, Vault, generate_key
    from toolscout.context import CallContext, Principal, using
    from toolscout.sources.mcp.per_user import CredentialBroker
    from toolscout.storage import open_store

    script = Path(__file__).resolve().parents[1] / "mcp_fixtures" / "env_resources.py"
    server = {"command": sys.executable, "args": [str(script)], "credentials": "per-user",
              "tokenEnv": "USER_TOKEN", "env": {"USER_TOKEN": "gateway-own"}}
    aggregator = Aggregator(parse_config({"mcpServers": {"local": server}}), Catalog())
    vault = Vault(open_store(str(tmp_path / "vault.db")), [generate_key()])
    aggregator.use_credentials(CredentialBroker(aggregator.config.enabled(), vault=vault))
    try:
        await aggregator.start()
        vault.put("alice", "local", Credential(token="tok-alice"))
        vault.put("bob", "local", Credential(token="tok-bob"))
        seen = {}
        for user in ("alice", "bob"):
            with using(CallContext(principal=Principal(user, "user"))):
                _, read = await aggregator.federation.read("local+who://me")
                _, prompt = await aggregator.federation.get_prompt("local_me", None)
            seen[user] = (read["contents"][0]["text"], prompt["messages"][0]["content"]["text"])
        assert seen == {"alice": ("tok-alice", "tok-alice"), "bob": ("tok-bob", "tok-bob")}
    finally:
        await aggregator.aclose()


async def test_skill_resources_are_read_under_the_callers_rule_and_audited() -> None:
    skills_dir = Path(__file__).resolve().parents[2] / "src" / "toolscout" / "demo" / "skills"
    catalog = Catalog()
    names = [t.name for t in catalog.load_skills(skills_dir)]
    shown, denied = names[0], names[1]
    gateway = Gateway(catalog, call_timeout=None, policy=Policy(deny=(denied,)))
    records: list[Any] = []
    gateway.recorders.append(records.append)
    server = GatewayServer(gateway)
    async with Client(server.lowlevel, mode="auto") as client:
        read = await client.read_resource(f"toolscout://skills/{shown}")
        answers = []
        for name in (denied, "no-such-skill"):
            with pytest.raises(MCPError) as caught:
                await client.read_resource(f"toolscout://skills/{name}")
            answers.append((caught.value.error.code, caught.value.error.message.replace(name, "NAME")))
    assert read.contents[0].text and answers[0] == answers[1]
    assert [(r.tool, r.decision) for r in records] == [
        (f"toolscout://skills/{shown}", "allowed"), (f"toolscout://skills/{denied}", "denied")]


async def test_an_upstreams_sampling_request_is_screened_before_the_clients_model_reads_it(tmp_path: Path) -> None:
    import mcp_types as types

    from mcp_fixtures import fake
    from toolscout.server.app import ServeConfig, build_app, http_app, run_with

    path = tmp_path / "gateway.json"
    path.write_text(json.dumps({"mcpServers": {"loc": fake("relay")}, "screenResults": True}))
    built = build_app(ServeConfig.load(path, {"no_cache": True}))
    asked: list[str] = []

    async def model(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        asked.extend(m.content.text for m in params.messages if isinstance(m.content, types.TextContent))
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="ok"), model="m")

    async def talk() -> None:
        from mcp_fixtures.asgi import serving

        await built.aggregator.refresh("loc")
        async with serving(http_app(built.server, console=False)) as base, \
                Client(f"{base}/mcp", mode="legacy", sampling_callback=model) as client:
            result = await client.call_tool("call_tool", {"name": "loc_sample", "arguments": {"prompt": "Summarise. " + INJECTED}})
            asked.append(f"RESULT {_text(result)}")

    records: list[Any] = []
    built.gateway.recorders.append(records.append)
    await run_with(built.aggregator, talk)
    assert asked[0].startswith(MARK) and DROP in asked[1] and asked[-1].startswith("RESULT"), asked
    relayed = [r for r in records if getattr(r, "operation", None) == "sampling/createMessage"]
    assert [(r.tool, r.decision, r.outcome) for r in relayed] == [("loc", "allowed", "ok")]


async def test_cli_call_prints_the_mark_before_poisoned_structured_content(tmp_path: Path) -> None:
    import os
    import subprocess

    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"web": {"command": sys.executable, "args": [str(FIXTURE)]}},
                                  "screenResults": True}))
    toolscout = str(Path(sys.executable).with_name("toolscout"))
    done = subprocess.run([toolscout, "call", "--config", str(config), "--cache", str(tmp_path / "cache.json"), "web_data"],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL,
                          env={**os.environ, "COLUMNS": "80", "NO_COLOR": "1"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(MARK) and DROP in done.stdout, done.stdout


# -- the same over /v1 (the console's calls go through /v1/call) --------------------------
async def test_v1_servers_and_capabilities_do_not_name_a_hidden_server(hidden: Served) -> None:
    import httpx

    from mcp_fixtures.asgi import serving
    from toolscout.server.app import http_app

    async with serving(http_app(hidden.server, console=False)) as base, httpx.AsyncClient(base_url=base) as http:
        servers = (await http.get("/v1/servers")).json()
        caps = (await http.get("/v1/capabilities")).json()
        call = (await http.post("/v1/call", json={"name": "web_page", "arguments": {}})).json()
    assert servers == {"servers": {}} and "web" not in caps["servers"] and caps["tools"] == 0
    assert call["error"]["code"] == "unknown_tool" and [(r.tool, r.decision) for r in hidden.records] == [("web_page", "denied")]


async def test_v1_call_marks_an_upstream_result(warn: Served) -> None:
    import httpx

    from mcp_fixtures.asgi import serving
    from toolscout.server.app import http_app

    async with serving(http_app(warn.server, console=False)) as base, httpx.AsyncClient(base_url=base) as http:
        page = (await http.post("/v1/call", json={"name": "web_page", "arguments": {}})).json()
        data = (await http.post("/v1/call", json={"name": "web_data", "arguments": {}})).json()
    for result in (page, data):
        assert result["content"][0]["text"].startswith(MARK) and result["findings"], result


@pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")
async def test_completions_and_subscriptions_answer_a_hidden_server_as_an_unknown_one(hidden: Served) -> None:
    import mcp_types as types

    answers = []
    async with Client(hidden.server.lowlevel, mode="legacy") as client:
        for name in ("web_brief", "nosuch_brief"):
            with pytest.raises(MCPError) as caught:
                await client.complete(types.PromptReference(type="ref/prompt", name=name), {"name": "x", "value": "y"})
            answers.append((caught.value.error.code, caught.value.error.message.replace(name, "NAME")))
        for uri in ("web+memo://page", "nosuch+memo://page"):
            with pytest.raises(MCPError) as caught:
                await client.subscribe_resource(uri)
            answers.append((caught.value.error.code, caught.value.error.message.replace(uri, "URI")))
    assert answers[0] == answers[1] and answers[2] == answers[3], answers
    assert [(r.operation, r.decision) for r in hidden.records] == [
        ("completion/complete", "denied"), ("resources/subscribe", "denied")]


async def test_an_upstreams_elicitation_is_screened_before_the_user_reads_it(tmp_path: Path) -> None:
    import mcp_types as types

    from mcp_fixtures import fake
    from mcp_fixtures.asgi import serving
    from toolscout.server.app import ServeConfig, build_app, http_app, run_with

    path = tmp_path / "gateway.json"
    path.write_text(json.dumps({"mcpServers": {"loc": fake("relay")}, "screenResults": True}))
    built = build_app(ServeConfig.load(path, {"no_cache": True}))
    shown: list[str] = []

    async def user(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        shown.append(params.message)
        return types.ElicitResult(action="decline")

    async def talk() -> None:
        await built.aggregator.refresh("loc")
        async with serving(http_app(built.server, console=False)) as base, \
                Client(f"{base}/mcp", mode="legacy", elicitation_callback=user) as client:
            await client.call_tool("call_tool", {"name": "loc_ask", "arguments": {"question": "Proceed? " + INJECTED}})

    records: list[Any] = []
    built.gateway.recorders.append(records.append)
    await run_with(built.aggregator, talk)
    assert len(shown) == 1 and shown[0].startswith(MARK) and DROP in shown[0], shown
    # the relayed request is recorded when it is answered, inside the tool call it serves
    assert [(r.operation, r.tool) for r in records] == [("elicitation/create", "loc"), ("tools/call", "loc_ask")]
