"""One request path: the same request gives the same answer on every surface.

Each numbered item of the one-request-path issue is driven through the library
(``Gateway``), ``Session`` with two provider adapters (OpenAI Chat and Anthropic), and the
MCP server with the official SDK client, stateful (``legacy``) and stateless (``auto``).
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mcp import Client

from toolscout import Catalog, DeferPolicy, Tool
from toolscout.adapters.anthropic import MessagesAdapter
from toolscout.adapters.openai import ChatCompletionsAdapter
from toolscout.eval.runner import index_ranker
from toolscout.formats import wire_name
from toolscout.gateway import Gateway
from toolscout.request import MAX_QUERY_CHARS, SEARCH_TYPES
from toolscout.server.mcp import GatewayServer
from toolscout.session import Session

LONG = "acme_enterprise_crm_" + "customer_relationship_management_" * 2 + "update_contact_record"
DOTTED = "files.read_text"
ODD = "PDF&URLTool"
CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
MODES = ["legacy", "auto"]  # stateful 2025-11-25, stateless 2026-07-28


def _catalog(filler: int = 20) -> Catalog:
    cat = Catalog()
    cat.add(Tool("get_weather", "Get the current weather forecast for a city.", CITY), handler=lambda a: f"sunny in {a['city']}")
    cat.add(Tool("get_air_quality", "Get the air quality index for a city.", CITY), handler=lambda a: "aqi 12")
    cat.add(Tool(LONG, "Update a contact record in the CRM.", {"type": "object"}), handler=lambda a: "updated")
    cat.add(Tool(DOTTED, "Read a text file from disk.", {"type": "object"}), handler=lambda a: "file text")
    cat.add(Tool(ODD, "Convert a PDF at a URL to text.", {"type": "object"}), handler=lambda a: "pdf text")
    cat.add(
        Tool("read_notes", "Read the user's saved notes.", {"type": "object"}, defer=DeferPolicy.NEVER, category="notes"),
        handler=lambda a: "no notes",
    )
    for i in range(filler):
        cat.add(
            Tool(f"inventory_item_{i}", f"Look up warehouse inventory record {i} by SKU.", {"type": "object"}, category="stock"),
            handler=lambda a: "ok",
        )
    return cat


@pytest.fixture()
def gateway() -> Gateway:
    return Gateway(_catalog())


def _server(gateway: Gateway, **options: Any) -> GatewayServer:
    return GatewayServer(gateway, **options)


async def _mcp_find(client: Client, args: dict[str, Any]) -> dict[str, Any]:
    out = await client.call_tool("find_tools", args)
    return out.structured_content


def _refs(found: dict[str, Any]) -> list[str]:
    return [r["tool_name"] for r in found["tool_references"]]


# -- 1. long and odd names: what a format renders is callable, on every surface -------------
@pytest.mark.parametrize("fmt", ["openai", "openai-responses", "anthropic", "gemini"])
def test_renamed_tools_are_callable_through_the_session(gateway: Gateway, fmt: str) -> None:
    session = Session(gateway, threshold=1)
    found = session.handle("find_tools", {"query": f"select:{LONG},{DOTTED},{ODD}"})
    assert found.ok and set(found.revealed) == {LONG, DOTTED, ODD}
    listed = session.tools(fmt)
    wires = [wire_name(n, fmt) for n in (LONG, DOTTED, ODD)]
    shown = {d.get("name") or d.get("function", {}).get("name") for d in listed}
    assert set(wires) <= shown
    for wire in wires:
        assert session.handle(wire, {}).ok, wire
    # The find text names tools as the model sees them (after tools() set the format).
    text = session.handle("find_tools", {"query": f"select:{LONG}"}).text()
    assert wire_name(LONG, fmt) in text


def test_renamed_tools_are_callable_through_two_adapters(gateway: Gateway) -> None:
    chat = ChatCompletionsAdapter(Session(gateway, threshold=1))
    chat.session.handle("find_tools", {"query": f"select:{LONG}"})
    wire = next(d["function"]["name"] for d in chat.tools() if d["function"]["name"].startswith("acme_"))
    assert wire != LONG and len(wire) <= 64
    message = {"tool_calls": [{"id": "c1", "function": {"name": wire, "arguments": "{}"}}]}
    assert chat.tool_messages(message)[0]["content"] == "updated"

    claude = MessagesAdapter(Session(gateway, threshold=1))
    claude.session.handle("find_tools", {"query": f"select:{ODD}"})
    wire = next(d["name"] for d in claude.tools() if d["name"].startswith("PDF"))
    answer = claude.tool_results({"content": [{"type": "tool_use", "id": "t1", "name": wire, "input": {}}]})
    assert answer is not None and answer["content"][0]["content"][0]["text"] == "pdf text"


def test_library_calls_by_wire_name_and_unprefixed_name() -> None:
    cat = _catalog()
    cat.add(Tool("create_issue", "Create an issue.", {"type": "object"}).replace(name="github_create_issue", original_name="create_issue"), handler=lambda a: "made")
    gw = Gateway(cat)
    assert gw.call(wire_name(LONG, "openai"), {}).ok
    assert gw.call(f"`{DOTTED}`", {}).ok
    assert gw.call("Get-Weather", {"city": "Oslo"}).text() == "sunny in Oslo"
    assert gw.call("create_issue", {}).text() == "made"  # the upstream's own name, unique


@pytest.mark.parametrize("mode", MODES)
async def test_renamed_tools_are_callable_over_mcp(gateway: Gateway, mode: str) -> None:
    async with Client(_server(gateway).lowlevel, mode=mode) as client:
        for name in (wire_name(LONG, "openai"), DOTTED, ODD):
            out = await client.call_tool("call_tool", {"name": name, "arguments": {}})
            assert not out.is_error, (name, out.content)


_NAME = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Cf", "Zl", "Zp")), min_size=1, max_size=90
).filter(lambda s: s.strip() == s and s.strip())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(_NAME, min_size=1, max_size=6, unique=True), st.integers(min_value=0, max_value=3))
def test_any_rendered_name_is_callable_everywhere(names: list[str], twins: int) -> None:
    """For any catalog (long, unicode, or names that collide once shortened), the name in
    every rendered definition is callable through the session and the gateway."""
    base = "x" * 70
    names = [*names, *(f"{base}{i}" for i in range(twins))]  # identical first 55 characters
    cat = Catalog()
    for i, name in enumerate(dict.fromkeys(names)):
        try:
            cat.add(Tool(name, f"tool number {i}", {"type": "object"}), handler=lambda a, i=i: f"ran {i}")
        except Exception:
            continue  # a name the model refuses is not this property's concern
    gw = Gateway(cat)
    session = Session(gw, threshold=1)
    session.reveal(*cat.names())
    for fmt in ("openai", "openai-responses", "anthropic", "gemini", "mcp", "generic"):
        for tool, rendered in zip([cat.get(n) for n in session.revealed], session.tools(fmt, meta=False), strict=True):
            assert tool is not None
            shown = rendered.get("name") or rendered["function"]["name"]
            expected = f"ran {list(cat.names()).index(tool.name)}"
            assert session.handle(shown, {}).text() == expected, (fmt, shown)
            assert gw.call(shown, {}).text() == expected, (fmt, shown)


# -- 2. use_tool is offered where asked ------------------------------------------------------
def test_use_tool_through_the_session(gateway: Gateway) -> None:
    session = Session(gateway, threshold=1, use_tool=True)
    assert "use_tool" in [d["name"] for d in session.tools("anthropic")]
    out = session.handle("use_tool", {"query": "get_weather", "params": {"city": "Rome"}})
    assert out.ok and out.text() == "sunny in Rome"
    plain = Session(gateway, threshold=1)
    assert "use_tool" not in [d["name"] for d in plain.tools("anthropic")]
    assert plain.handle("use_tool", {"query": "x", "params": {}}).error.code == "unknown_tool"


@pytest.mark.parametrize("mode", MODES)
async def test_use_tool_over_mcp(gateway: Gateway, mode: str) -> None:
    async with Client(_server(gateway, use_tool=True).lowlevel, mode=mode) as client:
        assert "use_tool" in [t.name for t in (await client.list_tools()).tools]
        out = await client.call_tool("use_tool", {"query": "get_weather", "params": {"city": "Oslo"}})
        assert not out.is_error and out.content[0].text == "sunny in Oslo"
    async with Client(_server(gateway).lowlevel, mode=mode) as client:
        assert "use_tool" not in [t.name for t in (await client.list_tools()).tools]


# -- 3. seed 001's argument names --------------------------------------------------------------
SEED = {"query": "look up warehouse inventory record", "max_results": 2, "category_filter": "stock", "searchType": "KEYWORD"}


def _check_seed(refs: list[str], search_type: str, warnings: list[str]) -> None:
    assert len(refs) == 2 and all(r.startswith("inventory_item_") for r in refs)
    assert search_type == "keyword"
    assert any("max_results read as limit" in w for w in warnings)


def test_seed_001_names_in_the_library_and_session(gateway: Gateway) -> None:
    found = gateway.find(dict(SEED))
    _check_seed([r.tool_name for r in found.tool_references], found.search_type, found.warnings)
    kw = gateway.find_tools("look up warehouse inventory record", max_results=2, category_filter="stock")
    assert len(kw.tool_references) == 2
    outcome = Session(gateway, threshold=1).handle("find_tools", json.dumps(SEED))
    assert outcome.find is not None
    _check_seed([r.tool_name for r in outcome.references], outcome.find.search_type, outcome.find.warnings)


@pytest.mark.parametrize("mode", MODES)
async def test_seed_001_names_over_mcp(gateway: Gateway, mode: str) -> None:
    async with Client(_server(gateway).lowlevel, mode=mode) as client:
        found = await _mcp_find(client, dict(SEED))
        meta = found["search_metadata"]
        _check_seed(_refs(found), meta["search_type"], meta.get("warnings", []))


# -- 4. limits that are not numbers --------------------------------------------------------------
BAD_LIMITS = [math.inf, -math.inf, math.nan, 2.5, True, "many", [3]]


@pytest.mark.parametrize("limit", BAD_LIMITS, ids=repr)
def test_bad_limits_are_invalid_requests_in_the_library_and_session(gateway: Gateway, limit: Any) -> None:
    assert gateway.find({"query": "weather", "limit": limit}).error.code == "invalid_request"
    outcome = Session(gateway, threshold=1).handle("find_tools", {"query": "weather", "limit": limit})
    assert outcome.error is not None and outcome.error.code == "invalid_request"
    # 1e400 is valid JSON; Python reads it as infinity.
    raw = Session(gateway, threshold=1).handle("find_tools", '{"query": "weather", "limit": 1e400}')
    assert raw.error is not None and raw.error.code == "invalid_request"


def test_out_of_range_limits_are_clamped_with_a_note(gateway: Gateway) -> None:
    huge = gateway.find({"query": "inventory", "limit": 10**400})
    assert huge.ok and any("outside" in w for w in huge.warnings)
    assert gateway.find({"query": "inventory", "limit": 0}).ok


@pytest.mark.parametrize("mode", MODES)
async def test_bad_limits_over_mcp(gateway: Gateway, mode: str) -> None:
    async with Client(_server(gateway).lowlevel, mode=mode) as client:
        for limit in ("many", 2.5, [3], 10**400):
            out = await client.call_tool("find_tools", {"query": "weather", "limit": limit})
            code = (out.structured_content or {}).get("error", {}).get("code")
            assert (out.is_error and code == "invalid_request") or (limit == 10**400 and not out.is_error), limit
        assert not (await client.call_tool("find_tools", {"query": "weather"})).is_error  # still serving


# -- 5. one query length, the same for find_tools and eval -----------------------------------------
def test_long_queries_are_truncated_the_same_way_everywhere(gateway: Gateway) -> None:
    long = "weather forecast for a city " * 200
    found = gateway.find({"query": long})
    assert found.ok and len(found.query) <= MAX_QUERY_CHARS and any("truncated" in w for w in found.warnings)
    session = Session(gateway, threshold=1).handle("find_tools", {"query": long})
    assert session.ok and session.find is not None and session.find.query == found.query
    assert index_ranker(gateway.index, "keyword")(long)[:1] == ["get_weather"]  # eval: same entry, not an error


# -- 6. the meta-tool advertises every search type, from one place -----------------------------------
@pytest.mark.parametrize("fmt", ["openai", "anthropic", "mcp", "generic"])
def test_the_advertised_enum_is_the_parsed_one(gateway: Gateway, fmt: str) -> None:
    find = gateway.meta_tools(fmt)[0]
    params = find.get("parameters") or find.get("input_schema") or find.get("inputSchema") or find["function"]["parameters"]
    assert params["properties"]["search_type"]["enum"] == list(SEARCH_TYPES)
    assert "hybrid" in SEARCH_TYPES and "exclude" in params["properties"]


# -- 7. tools the caller already has are named, not re-sent ------------------------------------------
def test_session_names_already_loaded_tools_instead_of_resending(gateway: Gateway) -> None:
    session = Session(gateway, threshold=1)
    first = session.handle("find_tools", {"query": "weather forecast city"})
    assert first.find is not None and "get_weather" in [t.name for t in first.find.to_send()]
    again = session.handle("find_tools", {"query": "weather forecast city"})
    assert again.find is not None
    loaded = again.find.loaded
    assert "get_weather" in loaded and "get_weather" not in [t.name for t in again.find.to_send()]
    assert "[already loaded]" in again.text()
    pinned = session.handle("find_tools", {"query": "read saved notes"}).find
    assert pinned is not None and "read_notes" in pinned.loaded  # pinned: the model has it
    by_name = session.handle("find_tools", {"query": "select:get_weather"}).find
    assert by_name is not None and [t.name for t in by_name.to_send()] == ["get_weather"]  # asked again by name


async def test_mcp_stateful_session_does_not_resend_revealed_schemas(gateway: Gateway) -> None:
    async with Client(_server(gateway).lowlevel, mode="legacy") as client:
        first = await _mcp_find(client, {"query": "weather forecast city", "limit": 1})
        assert [t["name"] for t in first["tools"]] == ["get_weather"]
        again = await _mcp_find(client, {"query": "weather forecast city", "limit": 1})
        assert again["tools"] == [] and again["tool_references"][0]["already_loaded"] is True
    async with Client(_server(gateway).lowlevel, mode="auto") as client:  # stateless: nothing is kept
        again = await _mcp_find(client, {"query": "weather forecast city", "limit": 1})
        second = await _mcp_find(client, {"query": "weather forecast city", "limit": 1})
        assert [t["name"] for t in again["tools"]] == [t["name"] for t in second["tools"]] == ["get_weather"]


# -- 8. exclude is in the meta-tool and works on every surface -----------------------------------------
def test_exclude_in_the_library_and_session(gateway: Gateway) -> None:
    top = gateway.find({"query": "city weather air"}).tool_references[0].tool_name
    assert top not in [r.tool_name for r in gateway.find({"query": "city weather air", "exclude": [top]}).tool_references]
    assert top not in [r.tool_name for r in gateway.find_tools("city weather air", exclude=[top]).tool_references]
    outcome = Session(gateway, threshold=1).handle("find_tools", {"query": "city weather air", "exclude": [top]})
    assert outcome.ok and top not in [r.tool_name for r in outcome.references]
    bad = gateway.find({"query": "city", "exclude": 7})
    assert bad.error is not None and bad.error.code == "invalid_request"


@pytest.mark.parametrize("mode", MODES)
async def test_exclude_over_mcp(gateway: Gateway, mode: str) -> None:
    async with Client(_server(gateway).lowlevel, mode=mode) as client:
        listed = {t.name: t for t in (await client.list_tools()).tools}
        assert "exclude" in listed["find_tools"].input_schema["properties"]
        found = await _mcp_find(client, {"query": "city weather air", "exclude": ["get_weather"]})
        assert "get_weather" not in _refs(found) and _refs(found)


# -- one visibility rule: what cannot be found cannot be run ----------------------------------------------
def test_one_visibility_rule_masks_search_and_admits_calls() -> None:
    cat = _catalog()
    cat.add(Tool("legacy_tool", "Get the weather the old way.", CITY, available=False), handler=lambda a: "old")
    gw = Gateway(cat)

    def no_air(t: Tool) -> bool:
        return t.name != "get_air_quality"

    session = Session(gw, threshold=1, allow=no_air)
    names = [r.tool_name for r in session.handle("find_tools", {"query": "city air quality weather", "limit": 10}).references]
    assert "get_air_quality" not in names and "legacy_tool" not in names
    for name in ("get_air_quality", "legacy_tool"):
        refused = Session(gw, threshold=1, allow=no_air, call_tool=True).handle("call_tool", {"name": name, "arguments": {"city": "x"}})
        # hidden (another rule, or unavailable here): answered exactly as a tool that does not exist
        assert refused.error is not None and refused.error.code == "unknown_tool", name
        assert refused.error.message == f"no tool named {name!r}", name
    assert "get_air_quality" not in gw.suggest("get_air_qualty", allow=no_air)  # no leak through did-you-mean
