"""Hosted search: the provider's own tool search over ``defer_loading`` tools (Anthropic's
BM25/regex tool, OpenAI's server-executed ``tool_search``, with namespaces), scripted
conversations through the real SDKs with every request checked against the SDK's own
request types (unknown keys forbidden). toolscout still runs every call."""

from __future__ import annotations

import json
from typing import Any

import pytest

import _sdk_requests as sdk
from _session_fixtures import Script, build_session, claude_results, responses_turn
from _session_fixtures import claude_turn as turn

anthropic = pytest.importorskip("anthropic")
openai = pytest.importorskip("openai")

from toolscout import Catalog, Tool  # noqa: E402
from toolscout.adapters.anthropic import MessagesAdapter  # noqa: E402
from toolscout.adapters.openai import ResponsesAdapter  # noqa: E402
from toolscout.errors import ConfigError  # noqa: E402
from toolscout.gateway import Gateway  # noqa: E402
from toolscout.session import Session  # noqa: E402


def anthropic_client(script: Script) -> Any:
    try:
        import httpx2 as http
    except ImportError:
        import httpx as http
    return anthropic.Anthropic(api_key="test", base_url="http://test", http_client=script.client(http))


def searched_turn(query: str, found: list[str], use: tuple[str, str, Any]) -> dict[str, Any]:
    """A Claude turn in which the API ran its own search (server_tool_use + result) and the
    model then called a found tool."""
    message = turn(use)
    message["content"][:0] = [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "tool_search_tool_bm25", "input": {"query": query}},
        {
            "type": "tool_search_tool_result",
            "tool_use_id": "srvtoolu_1",
            "content": {
                "type": "tool_search_tool_search_result",
                "tool_references": [{"type": "tool_reference", "tool_name": n} for n in found],
            },
        },
    ]
    return message


def test_anthropic_hosted_search_sends_the_bm25_tool_and_runs_what_it_found() -> None:
    script = Script(
        searched_turn("weather", ["get_weather"], ("t1", "get_weather", {"city": "Lima"})),
        turn(text="21 C in Lima."),
        validate=sdk.anthropic_request,
    )
    session = build_session()
    adapter = MessagesAdapter(session, native="hosted")
    messages: list[Any] = [{"role": "user", "content": "weather in Lima"}]
    adapter.run(anthropic_client(script), model="claude-opus-4-6", messages=messages)

    first = script.requests[0]["tools"]
    assert first[0] == {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}
    assert [t["name"] for t in first[1:2]] == ["read_notes"] and "defer_loading" not in first[1]
    assert "find_tools" not in [t.get("name") for t in first]
    deferred = first[2:]
    assert len(deferred) == len(session.gateway.catalog) - 1 and all(t["defer_loading"] for t in deferred)
    assert json.dumps(script.requests[1]["tools"]) == json.dumps(first)  # cache-stable
    results = claude_results(messages)
    assert json.loads(results["t1"]["content"][0]["text"]) == {"city": "Lima", "temp_c": 21}
    assert adapter.mode == "hosted"
    assert "get_weather" in session.loaded
    # the ledger counts what the model holds: the search tool, pinned and loaded tools
    assert session.ledger.turns[-1].names == ("tool_search_tool_bm25", "read_notes", "get_weather")


def test_anthropic_hosted_regex_and_auto_picks_hosted_for_models_with_search() -> None:
    regex = MessagesAdapter(build_session(), native="hosted", hosted_search="regex").tools()
    assert regex[0]["type"] == "tool_search_tool_regex_20251119"
    for tool in regex:
        sdk.anthropic_tool(tool)
    assert MessagesAdapter(build_session(), native="auto", model="claude-opus-4-6").mode == "hosted"
    assert MessagesAdapter(build_session(), native="auto", model="claude-3-5-haiku").mode == "portable"
    assert MessagesAdapter(build_session(), native=True).mode == "client"
    with pytest.raises(ConfigError):
        MessagesAdapter(build_session(), native="hosted", hosted_search="vector")


def test_anthropic_hosted_still_applies_visibility_and_errors() -> None:
    hidden = Session(Gateway(build_session().gateway.catalog), allow=lambda t: t.name != "send_email")
    adapter = MessagesAdapter(hidden, native="hosted")
    names = [t.get("name") for t in adapter.tools()]
    assert "send_email" not in names  # a hidden tool is never offered to the provider's search
    answer = adapter.tool_results(turn(("t1", "send_email", {"to": "x"})))
    assert answer is not None and answer["content"][0]["is_error"]


def fcall(call_id: str, name: str, arguments: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
    item = {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": name,
            "arguments": json.dumps(arguments), "status": "completed"}
    if namespace is not None:
        item["namespace"] = namespace
    return item


def hosted_search_call() -> dict[str, Any]:
    return {"type": "tool_search_call", "id": "ts_1", "call_id": None, "arguments": {"query": "weather"},
            "execution": "server", "status": "completed"}


def test_openai_hosted_tool_search_is_server_executed_and_toolscout_runs_the_call() -> None:
    script = Script(
        responses_turn(hosted_search_call(), fcall("c1", "get_weather", {"city": "Rome"})),
        responses_turn(text="ok"),
        validate=sdk.responses_request,
    )
    session = build_session()
    adapter = ResponsesAdapter(session, native="hosted")
    items: list[Any] = [{"role": "user", "content": "weather in Rome?"}]
    adapter.run(openai.OpenAI(api_key="test", base_url="http://test/v1", http_client=script.client()), model="gpt-5.4", input=items)

    first = script.requests[0]["tools"]
    assert first[0] == {"type": "tool_search"}  # server execution is the API's default
    assert [t.get("name") for t in first[1:2]] == ["read_notes"]
    assert all(t["defer_loading"] for t in first[2:])
    result = next(i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output")
    assert json.loads(result["output"]) == {"city": "Rome", "temp_c": 21}
    assert not any(isinstance(i, dict) and i.get("type") == "tool_search_output" for i in items)


def mcp_catalog() -> Catalog:
    cat = Catalog()
    for server, verbs in (("github", ("create_issue", "list_issues", "merge_pr")), ("slack", ("post_message", "list_channels"))):
        for verb in verbs:
            cat.add(Tool(f"{server}_{verb}", f"{verb.replace('_', ' ')} in {server}.", source="mcp", source_id=server), handler=lambda a: "ok")
    for i in range(20):
        cat.add(Tool(f"misc_{i}", f"Miscellaneous helper {i}.", category="misc"), handler=lambda a: "ok")
    return cat


def test_openai_namespaces_group_by_server_with_per_namespace_defer() -> None:
    session = Session(Gateway(mcp_catalog()))
    adapter = ResponsesAdapter(session, native="hosted", namespaces="server", namespace_defer={"slack": False})
    tools = adapter.tools()
    sdk.responses_request({"model": "gpt-5.4", "input": "hi", "tools": tools})
    spaces = {t["name"]: t for t in tools if t.get("type") == "namespace"}
    assert set(spaces) == {"github", "slack", "misc"}
    assert [f["name"] for f in spaces["github"]["tools"]] == ["github_create_issue", "github_list_issues", "github_merge_pr"]
    assert all(f["defer_loading"] for f in spaces["github"]["tools"])
    assert not any(f["defer_loading"] for f in spaces["slack"]["tools"])
    assert session.is_callable("slack_post_message") and not session.is_callable("github_merge_pr")
    out = adapter.output_items(responses_turn(fcall("c1", "github_merge_pr", {}, namespace="github")))
    assert out[0]["output"] == "ok"
    with pytest.raises(ConfigError):
        ResponsesAdapter(session, native="hosted", namespaces="colour")


def test_find_tools_returns_a_whole_namespace() -> None:
    gateway = Gateway(mcp_catalog())
    found = gateway.find({"query": "namespace:github", "limit": 10})
    assert found.error is None
    assert sorted(t.name for t in found.found) == ["github_create_issue", "github_list_issues", "github_merge_pr"]
    unknown = gateway.find({"query": "namespace:jira"})
    assert unknown.error is not None and unknown.error.code == "no_match"
    assert "github" in unknown.error.details.get("namespaces", [])


def test_a_query_that_names_an_upstream_server_returns_its_tools() -> None:
    gateway = Gateway(mcp_catalog())
    found = gateway.find({"query": "Slack"})
    assert found.search_type == "namespace"
    assert sorted(t.name for t in found.found) == ["slack_list_channels", "slack_post_message"]
    no_slack = gateway.find({"query": "slack"}, _ctx(lambda t: not t.name.startswith("slack_")))
    assert no_slack.search_type != "namespace"  # a hidden server is not a namespace to this caller


def _ctx(allow: Any) -> Any:
    from toolscout.context import CallContext

    return CallContext(allow=allow)
