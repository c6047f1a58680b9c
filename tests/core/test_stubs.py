"""Seed 003's stub mode: deferred tools go as name + one line (no parameters) instead of
being withheld, through the library, a provider adapter and the MCP server."""

from __future__ import annotations

import importlib
import importlib.metadata
import json
from typing import Any

import pytest
from mcp import Client

import _sdk_requests as sdk
from _session_fixtures import Script, build_catalog, build_session, claude_turn
from toolscout import Catalog, Session, Tool
from toolscout.accounting.ledger import count_definitions
from toolscout.gateway import Gateway
from toolscout.server.mcp import GatewayServer


def _props(definition: dict[str, Any]) -> dict[str, Any]:
    schema = definition.get("input_schema") or definition.get("inputSchema") or definition.get("parameters") or {}
    return schema.get("properties") or {}


def test_stubs_list_every_deferred_tool_and_load_in_place() -> None:
    plain = build_session()
    session = build_session(stubs=True)
    first = session.tools("anthropic")
    names = [t["name"] for t in first]
    assert names[:2] == ["find_tools", "read_notes"] and len(names) == 2 + 33
    assert set(names) == {"find_tools", *(t.name for t in session.gateway.catalog)}
    weather = first[names.index("get_weather")]
    assert _props(weather) == {} and "select:get_weather" in weather["description"]
    assert weather["description"].startswith("Get the current weather forecast for a city.")

    refused = session.handle("get_weather", {"city": "Oslo"})  # a stub is not callable yet
    assert refused.error is not None and refused.error.code == "not_revealed"
    found = session.handle("find_tools", {"query": "select:get_weather"})
    assert found.revealed == ("get_weather",)
    second = session.tools("anthropic")
    assert [t["name"] for t in second] == names  # same tools, same places
    loaded = second[names.index("get_weather")]
    assert _props(loaded) == {"city": {"type": "string", "description": "City name"}}
    changed = [i for i, (a, b) in enumerate(zip(first, second, strict=True)) if json.dumps(a) != json.dumps(b)]
    assert changed == [names.index("get_weather")]  # only that tool's bytes changed
    assert json.loads(session.handle("get_weather", {"city": "Oslo"}).text()) == {"city": "Oslo", "temp_c": 21}

    # The ledger counts the stubs with the rest of the list, exactly.
    plain.tools("anthropic")
    with_stubs, without = session.ledger.turns[0], plain.ledger.turns[0]
    assert without.tokens < with_stubs.tokens
    stubbed = [d for d in first if d["name"] not in ("find_tools", "read_notes")]
    assert session.ledger.turns[0].tokens == without.tokens + count_definitions(stubbed)
    assert 0 < session.stub_tokens("anthropic") < count_definitions(stubbed)  # get_weather is loaded now


def test_stubs_only_while_deferring() -> None:
    session = build_session(filler=3, stubs=True)  # 7 tools: below the threshold
    assert all(_props(t) or t["name"] in ("format_disk", "read_notes") for t in session.tools("anthropic"))
    assert session.stub_tokens("anthropic") == 0
    assert "find_tools" not in session.tool_names()


def test_stubs_through_the_anthropic_adapter() -> None:
    anthropic = pytest.importorskip("anthropic")
    from toolscout.adapters.anthropic import MessagesAdapter

    try:
        import httpx2 as http
    except ImportError:
        import httpx as http  # type: ignore[no-redef]

    script = Script(
        claude_turn(("t1", "find_tools", {"query": "select:get_weather"})),
        claude_turn(("t2", "get_weather", {"city": "Lima"})),
        claude_turn(text="done"),
        validate=sdk.anthropic_request,
    )
    session = build_session(stubs=True)
    client = anthropic.Anthropic(api_key="test", base_url="http://test", http_client=script.client(http))
    messages: list[Any] = [{"role": "user", "content": "weather in Lima"}]
    MessagesAdapter(session).run(client, model="claude-test", messages=messages)
    tools = [{t["name"]: t for t in r["tools"]} for r in script.requests]
    assert len(tools[0]) == 35 and _props(tools[0]["get_weather"]) == {}
    assert _props(tools[1]["get_weather"]) and list(tools[1]) == list(tools[0])
    result = messages[-2]["content"][0]
    assert result["tool_use_id"] == "t2" and json.loads(result["content"][0]["text"])["city"] == "Lima"


@pytest.mark.asyncio
async def test_stubs_through_the_mcp_server() -> None:
    server = GatewayServer(Gateway(build_catalog()), stubs=True)
    async with Client(server.lowlevel, mode="legacy") as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert "get_weather" in listed and "inventory_item_7" in listed
        assert not (listed["get_weather"].input_schema.get("properties") or {})
        assert "select:get_weather" in (listed["get_weather"].description or "")
        await client.call_tool("find_tools", {"query": "select:get_weather"})
        after = {t.name: t for t in (await client.list_tools()).tools}
        assert list(after) == list(listed) and after["get_weather"].input_schema["required"] == ["city"]
        ran = await client.call_tool("get_weather", {"city": "Oslo"})
        assert not ran.is_error and ran.structured_content == {"city": "Oslo", "temp_c": 21}
    async with Client(server.lowlevel) as stateless:  # 2026-07-28: nothing revealed, so no stubs
        assert [t.name for t in (await stateless.list_tools()).tools] == ["find_tools", "call_tool", "read_notes"]


# -- native="auto": the provider's own tool search where the SDK and model support it -------


def test_auto_picks_native_for_models_that_support_it() -> None:
    from toolscout.adapters.anthropic import MessagesAdapter
    from toolscout.adapters.openai import ResponsesAdapter

    def kinds(tools: list[dict[str, Any]]) -> set[str]:
        return {str(t.get("type", "function")) for t in tools}

    native = ResponsesAdapter(build_session(), native="auto", model="gpt-5.4")
    assert native.native and "tool_search" in kinds(native.tools())
    portable = ResponsesAdapter(build_session(), native="auto", model="gpt-4.1-mini")
    assert not portable.native and "tool_search" not in kinds(portable.tools())
    chosen = ResponsesAdapter(build_session(), native="auto", model="my-gpt", native_models=lambda m: m == "my-gpt")
    assert chosen.native

    deferred = MessagesAdapter(build_session(), native="auto", model="claude-sonnet-4-5").tools()
    assert any(t.get("defer_loading") for t in deferred) and len(deferred) == 35
    plain = MessagesAdapter(build_session(), native="auto", model="claude-3-5-haiku").tools()
    assert not any(t.get("defer_loading") for t in plain) and len(plain) == 2


def test_auto_decides_at_the_first_run_and_falls_back_on_an_old_sdk(monkeypatch: pytest.MonkeyPatch) -> None:
    anthropic = pytest.importorskip("anthropic")
    from toolscout.adapters.anthropic import MessagesAdapter
    from toolscout.errors import ConfigError

    try:
        import httpx2 as http
    except ImportError:
        import httpx as http  # type: ignore[no-redef]
    done = {
        "id": "m", "type": "message", "role": "assistant", "model": "x", "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    for model, native in (("claude-opus-4-6", True), ("claude-test", False)):
        script = Script(done)
        adapter = MessagesAdapter(build_session(), native="auto")
        client = anthropic.Anthropic(api_key="test", base_url="http://test", http_client=script.client(http))
        adapter.run(client, model=model, messages=[{"role": "user", "content": "hi"}])
        assert adapter.native is native
        assert any(t.get("defer_loading") for t in script.requests[0]["tools"]) is native

    monkeypatch.setattr(importlib.metadata, "version", lambda dist: "0.1.0")
    assert not MessagesAdapter(build_session(), native="auto", model="claude-sonnet-4-5").native
    with pytest.raises(ConfigError):
        MessagesAdapter(build_session(), native=True)
    with pytest.raises(ConfigError, match="auto"):
        MessagesAdapter(build_session(), native="yes")


def test_the_list_is_rebuilt_when_what_it_shows_changes() -> None:
    """The list is kept between turns (nothing is rendered again while nothing changed), and
    built again at once when a reveal, a native load, a catalog change or the stub option
    changes what it shows."""
    cat = Catalog()
    for i in range(20):
        cat.add(Tool(f"tool_{i}", f"Tool number {i}.", {"type": "object"}), handler=lambda a: "ok")
    session = Session(Gateway(cat))
    first = session.tools("openai", record=False)
    assert session.tools("openai", record=False) == first
    session.reveal("tool_3")
    assert [d["function"]["name"] for d in session.tools("openai", record=False)][-1] == "tool_3"
    session.stubs = True
    assert len(session.tools("openai", record=False)) > len(first) + 1  # every visible tool, as a stub
    stubbed = session.tools("openai", record=False)
    session.mark_loaded("tool_5")  # loaded natively: its stub becomes its full definition
    assert session.tools("openai", record=False) != stubbed
    cat.add(Tool("tool_new", "A new tool.", {"type": "object"}), handler=lambda a: "ok")
    assert any(d["function"]["name"] == "tool_new" for d in session.tools("openai", record=False))
