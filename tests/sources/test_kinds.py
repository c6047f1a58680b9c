"""Skills and agents in the same index as tools (issue 11, item 1).

Through the library (records, store, search filters, calls), a provider adapter's session
(OpenAI and Anthropic formats) and the MCP server with the official SDK client.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from _paths import FIXTURES
from toolscout import Catalog, Tool
from toolscout.errors import DeclarationError, InvalidRequest
from toolscout.gateway import Gateway
from toolscout.request import FindRequest
from toolscout.session import Session
from toolscout.storage import SQLiteStore as Store

FIX = FIXTURES


def build() -> Catalog:
    cat = Catalog()
    cat.add(Tool("read_pdf_text", "Read the text of a PDF file.", {"type": "object"}), handler=lambda a: "text")
    cat.add(Tool("convert_units", "Convert lengths and weights between units.", {"type": "object"}), handler=lambda a: 1)
    cat.load_skills(FIX / "skills")
    cat.load_agents(FIX / "agents")
    return cat


# -- records ---------------------------------------------------------------------------
def test_skill_and_agent_records() -> None:
    cat = build()
    skill = cat.get("pdf-form-filling")
    assert skill is not None and skill.kind == "skill" and skill.source == "skill"
    assert skill.description.startswith("Fill in PDF forms") and "call it to read its instructions" in skill.description
    assert "Write the filled form" not in json.dumps(skill.to_dict())  # the body is not in the record
    assert skill.meta["skill"]["files"] == ["reference.md", "scripts/fields.py"]
    assert skill.meta["license"] == "Apache-2.0"
    assert cat.get("release-notes").tags == ("changelog", "writing")

    agent = cat.get("recipe_agent")
    assert agent is not None and agent.kind == "agent" and agent.annotations.title == "Recipe Agent"
    assert "Weekly menu: Plan a week of dinners" in agent.description  # its skills are searchable
    assert agent.meta["agent"]["url"] == "http://127.0.0.1:9999/a2a/recipes"
    assert [s["id"] for s in agent.meta["agent"]["skills"]] == ["find-recipe", "weekly-menu"]


def test_kind_round_trips_and_versions() -> None:
    tool = Tool("x", "Same text.")
    assert tool.kind == "tool" and Tool.from_dict(tool.to_dict()) == tool
    skill = Tool("x", "Same text.", kind="skill")
    assert Tool.from_dict(skill.to_dict()).kind == "skill"
    assert skill.version != tool.version  # announced differently, so a different version
    assert tool.replace(kind="agent").kind == "agent"
    with pytest.raises(DeclarationError, match="kind must be one of"):
        Tool("x", kind="plugin")


def test_store_restores_kind(tmp_path: Path) -> None:
    cat = build()
    cat.save(tmp_path / "t.db")
    with Store(tmp_path / "t.db") as store:
        loaded = store.load_tools()
    assert [t.to_dict() for t in loaded] == [t.to_dict() for t in cat]
    assert {t.name: t.kind for t in loaded}["recipe_agent"] == "agent"


def test_declaration_files_take_kind(tmp_path: Path) -> None:
    (tmp_path / "d.yaml").write_text("team_wiki:\n  desc: How the team works.\n  kind: skill\nplain:\n  desc: A tool.\n")
    cat = Catalog()
    cat.load(tmp_path / "d.yaml")
    assert (cat.get("team_wiki").kind, cat.get("plain").kind) == ("skill", "tool")
    (tmp_path / "bad.yaml").write_text("x:\n  desc: y\n  kind: widget\n")
    with pytest.raises(DeclarationError) as err:
        Catalog().load(tmp_path / "bad.yaml")
    assert err.value.field == "kind" and err.value.line == 3


def test_bad_skill_and_card_name_the_field(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "SKILL.md").write_text("---\nname: s\n---\nbody\n")
    with pytest.raises(DeclarationError) as err:
        Catalog().load_skills(tmp_path)
    assert err.value.field == "description"
    cat = Catalog()
    assert cat.load_skills(tmp_path, skip_invalid=True) == [] and len(cat.last_skipped) == 1
    (tmp_path / "card.json").write_text('{"name": "A", "description": "B"}')
    with pytest.raises(DeclarationError) as err:
        Catalog().load_agents(tmp_path / "card.json")
    assert err.value.field == "url"


# -- requests ----------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("value", "kinds"),
    [(None, None), ([], None), (["skill"], ("skill",)), ("Skills, agents", ("skill", "agent")), ("all", ("tool", "skill", "agent", "resource", "prompt"))],
)
def test_kinds_parsed_at_the_edge(value: object, kinds: object) -> None:
    assert FindRequest.parse({"query": "q", "kinds": value}).kinds == kinds


@pytest.mark.parametrize("value", [["plugin"], 3, [1]])
def test_bad_kinds_are_request_errors(value: object) -> None:
    with pytest.raises(InvalidRequest):
        FindRequest.parse({"query": "q", "kinds": value})


# -- search and calls through the library ----------------------------------------------------
def test_default_is_tools_only() -> None:
    gw = Gateway(build())
    found = gw.find_tools("fill in a pdf form")
    assert [r.tool_name for r in found.tool_references] == ["read_pdf_text"]
    assert "kind" not in found.tool_references[0].to_dict()  # tools keep their shape


def test_kinds_filter_before_ranking() -> None:
    gw = Gateway(build())
    found = gw.find_tools("fill in a pdf form", kinds=["skill"], format="openai")
    ref = found.tool_references[0].to_dict()
    assert ref["tool_name"] == "pdf-form-filling" and ref["kind"] == "skill"
    assert ref["load"] == {"call": "pdf-form-filling", "resource": "toolscout://skills/pdf-form-filling"}
    assert ref["files"] == ["reference.md", "scripts/fields.py"]
    assert all(r.kind == "skill" for r in found.tool_references)
    assert "Write the filled form" not in json.dumps(found.to_dict())  # body only when asked
    assert found.tools[0]["function"]["name"] == "pdf-form-filling"

    both = gw.find(FindRequest.parse({"query": "pdf form", "kinds": "tool,skill"}), autocut=False)
    assert {r.kind for r in both.tool_references} == {"tool", "skill"}


def test_agent_found_by_one_of_its_skills() -> None:
    gw = Gateway(build())
    found = gw.find_tools("what can I cook with leftover eggs", kinds=["agent"], format="anthropic")
    ref = found.tool_references[0].to_dict()
    assert ref["tool_name"] == "recipe_agent" and ref["kind"] == "agent"
    assert ref["agent"]["url"] == "http://127.0.0.1:9999/a2a/recipes"
    assert [s["name"] for s in ref["agent"]["skills"]] == ["Find recipe", "Weekly menu"]
    assert "[agent at http://127.0.0.1:9999/a2a/recipes" in found.text()
    card = gw.call("recipe_agent")
    assert card.ok and card.structured["preferredTransport"] == "JSONRPC"


def test_calling_a_skill_loads_it_and_its_files() -> None:
    gw = Gateway(build())
    body = gw.call("pdf-form-filling")
    assert body.ok and body.text().startswith("# Filling PDF forms")
    assert "reference.md, scripts/fields.py" in body.text() and "name:" not in body.text()
    assert "`/Yes`" in gw.call("pdf-form-filling", {"file": "reference.md"}).text()
    for bad in ("../agents/recipe_agent.json", "/etc/passwd", "missing.md"):
        out = gw.call("pdf-form-filling", {"file": bad})
        assert not out.ok and out.error.code == "invalid_arguments"


def test_exact_name_and_select_find_any_kind() -> None:
    gw = Gateway(build())
    assert gw.find_tools("release-notes").tool_references[0].tool_name == "release-notes"
    picked = gw.find_tools("select:recipe_agent,convert_units")
    assert [r.kind for r in picked.tool_references] == ["agent", "tool"]


def test_gateway_or_catalog_can_widen_the_default() -> None:
    cat = build()
    assert Gateway(cat, default_kinds=["tool", "skill"]).find_tools("changelog").tool_references[0].tool_name == "release-notes"
    cat.default_kinds = ("tool", "skill", "agent")
    assert Gateway(cat).find_tools("currency exchange rate").tool_references[0].tool_name == "currency_agent"
    with pytest.raises(ValueError, match="default_kinds"):
        Gateway(cat, default_kinds=["robots"])


def test_find_tools_schema_offers_kinds_only_when_the_catalog_has_them() -> None:
    plain = Catalog([Tool("a", "A tool.")])
    props = Gateway(plain).meta_tools()[0]["inputSchema"]["properties"]
    assert "kinds" not in props
    props = Gateway(build()).meta_tools()[0]["inputSchema"]["properties"]
    assert props["kinds"]["items"]["enum"] == ["tool", "skill", "agent"]


# -- a provider adapter's session ------------------------------------------------------------
@pytest.mark.parametrize("fmt", ["openai", "anthropic", "gemini"])
def test_session_finds_loads_and_calls_a_skill(fmt: str) -> None:
    session = Session(Gateway(build()), threshold=0)
    out = session.handle("find_tools", {"query": "write a changelog", "kinds": ["skill"]})
    assert out.ok and out.references[0].tool_name == "release-notes"
    assert "[skill: call it to load its instructions]" in out.text()
    assert "Lead with breaking changes" not in out.text()
    names = [t.get("name") or t.get("function", {}).get("name") for t in session.tools(fmt)]
    assert any(n and n.replace("_", "-") == "release-notes" for n in names)
    loaded = session.handle("release-notes", {})
    assert loaded.ok and "Lead with breaking changes" in loaded.text()


# -- the MCP server, with the official SDK client -----------------------------------------------
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_mcp_server_finds_skills_and_serves_them_as_resources(mode: str) -> None:
    from mcp import Client

    from toolscout.server.mcp import GatewayServer

    server = GatewayServer(Gateway(build(), call_timeout=None))
    async with Client(server.lowlevel, mode=mode) as client:
        listed = {str(r.uri): r for r in (await client.list_resources()).resources}
        assert {"toolscout://skills/pdf-form-filling", "toolscout://skills/release-notes"} <= set(listed)
        assert listed["toolscout://skills/release-notes"].description.startswith("Write release notes")
        text = (await client.read_resource("toolscout://skills/pdf-form-filling")).contents[0].text
        assert text.startswith("# Filling PDF forms")

        tools = (await client.list_tools()).tools
        assert tools[0].input_schema["properties"]["kinds"]["items"]["enum"] == ["tool", "skill", "agent"]
        found = await client.call_tool("find_tools", {"query": "plan dinners for the week", "kinds": ["agent"]})
        ref = found.structured_content["tool_references"][0]
        assert (ref["tool_name"], ref["kind"]) == ("recipe_agent", "agent")
        assert ref["agent"]["skills"][1]["description"] == "Plan a week of dinners with a shopping list."
        plain = await client.call_tool("find_tools", {"query": "plan dinners for the week"})
        assert all(r.get("kind", "tool") == "tool" for r in (plain.structured_content or {}).get("tool_references", []))

        skill = await client.call_tool("find_tools", {"query": "fill a pdf form", "kinds": "skill"})
        assert "Write the filled form" not in json.dumps(skill.structured_content)
        loaded = await client.call_tool("call_tool", {"name": "pdf-form-filling", "arguments": {}})
        assert not loaded.is_error and "Write the filled form" in loaded.content[0].text


# -- the gateway config ---------------------------------------------------------------------------
async def test_gateway_config_takes_skills_and_agents(tmp_path: Path) -> None:
    from toolscout.errors import ConfigError
    from toolscout.sources.mcp.aggregator import Aggregator
    from toolscout.sources.mcp.config import load_config, parse_config

    config = tmp_path / "gateway.json"
    config.write_text(json.dumps({
        "skills": {"team": {"path": str(FIX / "skills"), "prefix": "", "deny": ["release-*"]}},
        "agents": {"a2a": {"path": str(FIX / "agents")}},
    }))
    agg = Aggregator(load_config(config), Catalog())
    agg.sources.load(strict=True)
    cat = agg.catalog
    assert sorted((t.name, t.kind) for t in cat) == [
        ("a2a_currency_agent", "agent"), ("a2a_recipe_agent", "agent"), ("pdf-form-filling", "skill")
    ]
    rows = agg.status()
    assert rows["team"]["kind"] == "skills" and rows["a2a"]["tools"] == 2
    gw = Gateway(cat)
    assert gw.call("pdf-form-filling").text().startswith("# Filling PDF forms")
    assert gw.find_tools("convert money", kinds=["agent"]).tool_references[0].tool_name == "a2a_currency_agent"
    await agg.aclose()

    with pytest.raises(ConfigError, match="skills"):
        parse_config({"skills": {"bad": {"folder": "x"}}})


# -- the demo --------------------------------------------------------------------------------------
def test_demo_finds_a_skill_and_an_agent() -> None:
    from toolscout.demo.runner import run_demo

    run = run_demo()
    assert (run["catalog"]["tools"], run["catalog"]["skills"], run["catalog"]["agents"]) == (316, 2, 2)
    by_label = {s["label"]: s for s in run["searches"]}
    skill = by_label["a skill"]["tool_references"][0]
    assert (skill["tool_name"], skill["kind"]) == ("incident-postmortem", "skill")
    agent = by_label["an agent"]["tool_references"][0]
    assert (agent["tool_name"], agent["kind"]) == ("travel_planner", "agent")
    assert all(r.get("kind", "tool") == "tool" for s in run["searches"][:6] for r in s["tool_references"])
    loaded = {c["label"]: c for c in run["calls"]}["a skill's instructions"]
    assert loaded["ok"] and loaded["content"][0]["text"].startswith("# Incident postmortem")


def test_index_masks_kinds_and_tools_only_catalogs_pay_nothing() -> None:
    from toolscout.search.index import ToolIndex

    index = ToolIndex(build())
    assert index.kinds() == {"tool", "skill", "agent"}
    assert sum(index.mask(kinds=["agent"])) == 2 and sum(index.mask(kinds=["nothing"])) == 0
    assert [h.tool.kind for h in index.search("recipes", limit=5, kinds=("agent",)).hits] == ["agent"]
    plain = ToolIndex(Catalog([Tool("a", "A tool.")]))
    plain.refresh()
    assert plain._kind_mask(("tool",)) is None  # the fast path: nothing to mask
    cat = build()
    cat.default_kinds = "skill"  # a bare string is one kind, not letters
    assert Gateway(cat).find_tools("changelog").tool_references[0].tool_name == "release-notes"


def test_the_same_words_for_another_kind_are_not_a_repeated_search() -> None:
    session = Session(Gateway(build()), threshold=0, repeat_limit=2)
    session.handle("find_tools", {"query": "pdf form"})
    out = session.handle("find_tools", {"query": "pdf form", "kinds": ["skill"]})
    assert "same search" not in out.text()
