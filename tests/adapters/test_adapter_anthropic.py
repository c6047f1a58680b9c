"""The real Anthropic SDK against a scripted transport: portable and native deferral."""

from __future__ import annotations

import json
from typing import Any

import pytest

import _sdk_requests as sdk
from _session_fixtures import Script, build_session, claude_results, prefix_stable
from _session_fixtures import claude_turn as turn

anthropic = pytest.importorskip("anthropic")

from toolscout.adapters.anthropic import MessagesAdapter  # noqa: E402


def client_for(script: Script) -> Any:
    try:
        import httpx2 as http  # newer SDKs run on the httpx2 fork and reject httpx clients
    except ImportError:
        import httpx as http
    return anthropic.Anthropic(api_key="test", base_url="http://test", http_client=script.client(http))



def text_of(block: dict[str, Any]) -> str:
    return "".join(c["text"] for c in block["content"] if c["type"] == "text")


def test_portable_multi_turn() -> None:
    script = Script(
        turn(("t1", "find_tools", {"query": "weather forecast"})),
        turn(("t2", "get_weather", {"city": "Lima"}), ("t3", "send_email", {"to": "x"})),
        turn(("t4", "find_tools", {"query": "select:send_email,format_disk"})),
        turn(("t5", "format_disk", {}), ("t6", "send_email", {"to": "a@b.c", "body": "hi"}), ("t7", "nope_tool", {})),
        turn(text="All done."),
        validate=sdk.anthropic_request,
    )
    session = build_session()
    messages: list[Any] = [{"role": "user", "content": "weather in Lima, mail it"}]
    final = MessagesAdapter(session).run(client_for(script), model="claude-test", messages=messages)

    assert final.content[0].text == "All done."
    names = [[t["name"] for t in r["tools"]] for r in script.requests]
    assert names[0] == ["find_tools", "read_notes"]
    assert names[-1] == ["find_tools", "read_notes", "get_weather", "send_email", "format_disk"]
    assert prefix_stable([r["tools"] for r in script.requests])

    results = claude_results(messages)
    assert set(results) == {f"t{i}" for i in range(1, 8)}
    assert json.loads(text_of(results["t2"])) == {"city": "Lima", "temp_c": 21}
    assert results["t3"]["is_error"] and text_of(results["t3"]).startswith("not_revealed")
    assert results["t5"]["is_error"] and "disk on fire" in text_of(results["t5"])
    assert text_of(results["t6"]) == "sent to a@b.c" and "is_error" not in results["t6"]
    assert results["t7"]["is_error"] and text_of(results["t7"]).startswith("unknown_tool")
    # Tool results come first in the user turn that follows each tool_use turn.
    for asked, answered in zip(messages[1::2], messages[2::2], strict=False):
        ids = [b["id"] for b in asked["content"] if b["type"] == "tool_use"]
        assert [b["tool_use_id"] for b in answered["content"]] == ids


def test_native_defer_loading_and_tool_reference() -> None:
    script = Script(
        turn(("t1", "find_tools", {"query": "weather forecast"})),
        turn(("t2", "get_weather", {"city": "Kyiv"})),
        turn(("t3", "find_tools", {"query": "zzzz qqqq"})),
        turn(text="ok"),
        validate=sdk.anthropic_request,
    )
    session = build_session()
    messages: list[Any] = [{"role": "user", "content": "weather in Kyiv"}]
    MessagesAdapter(session, native=True).run(client_for(script), model="claude-test", messages=messages)

    first = script.requests[0]["tools"]
    assert [t["name"] for t in first[:2]] == ["find_tools", "read_notes"]
    assert all("defer_loading" not in t for t in first[:2])
    deferred = first[2:]
    assert len(deferred) == len(session.gateway.catalog) - 1 and all(t["defer_loading"] for t in deferred)
    assert all(json.dumps(r["tools"]) == json.dumps(first) for r in script.requests)

    results = claude_results(messages)
    assert results["t1"]["content"] == [{"type": "tool_reference", "tool_name": "get_weather"}]
    assert json.loads(text_of(results["t2"])) == {"city": "Kyiv", "temp_c": 21}
    assert results["t3"]["is_error"] and text_of(results["t3"]).startswith("no_match")
    # The ledger counts only what the model sees, not the deferred declarations.
    assert session.ledger.turns[-1].names == ("find_tools", "read_notes", "get_weather")


def test_no_tool_use_means_no_results() -> None:
    adapter = MessagesAdapter(build_session())
    assert adapter.tool_results(turn(text="hi")) is None
