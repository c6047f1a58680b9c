"""The real OpenAI SDK against a scripted transport: Chat Completions and Responses."""

from __future__ import annotations

import json
from typing import Any

import pytest

import _sdk_requests as sdk
from _session_fixtures import Script, build_session, chat_turn, prefix_stable, responses_turn

openai = pytest.importorskip("openai")

from toolscout.adapters.openai import ChatCompletionsAdapter, ResponsesAdapter  # noqa: E402


def q(**args: Any) -> str:
    return json.dumps(args)


def test_chat_multi_turn_find_call_errors() -> None:
    script = Script(
        chat_turn(("c1", "find_tools", q(query="weather forecast"))),
        chat_turn(
            ("c2", "get_weather", q(city="Paris")),
            ("c3", "teleport", q(to="Mars")),
            ("c4", "format_disk", "{}"),
        ),
        chat_turn(("c5", "find_tools", q(query="select:format_disk,send_email"))),
        chat_turn(("c6", "format_disk", "{}"), ("c7", "send_email", '{"to": ')),
        chat_turn(("c8", "send_email", q(to="ann@example.com"))),
        chat_turn(text="done"),
        validate=sdk.chat_request,
    )
    client = openai.OpenAI(api_key="test", base_url="http://test/v1", http_client=script.client())
    session = build_session()
    adapter = ChatCompletionsAdapter(session)
    messages: list[Any] = [{"role": "user", "content": "weather in Paris, then mail Ann"}]
    final = adapter.run(client, model="gpt-test", messages=messages)

    assert final.choices[0].message.content == "done"
    sent = [[t["function"]["name"] for t in r["tools"]] for r in script.requests]
    assert sent[0] == ["find_tools", "read_notes"]
    assert sent[1] == ["find_tools", "read_notes", "get_weather"]
    assert sent[3] == ["find_tools", "read_notes", "get_weather", "format_disk", "send_email"]
    assert prefix_stable([r["tools"] for r in script.requests])

    # Every tool call is answered, by id, right after its assistant message.
    results = {m["tool_call_id"]: m["content"] for m in messages if isinstance(m, dict) and m.get("role") == "tool"}
    assert set(results) == {f"c{i}" for i in range(1, 9)}
    assert "get_weather" in results["c1"]
    assert json.loads(results["c2"]) == {"city": "Paris", "temp_c": 21}
    assert results["c3"].startswith("unknown_tool")
    assert results["c4"].startswith("not_revealed") and "select:format_disk" in results["c4"]
    assert results["c6"].startswith("tool_error") and "disk on fire" in results["c6"]
    assert results["c7"].startswith("invalid_arguments") and "not valid JSON" in results["c7"]
    assert results["c8"].startswith("invalid_arguments") and "/body" in results["c8"]
    # The SDK accepted the transcript: the request after each tool turn carries every answer.
    last = script.requests[-1]["messages"]
    answered = [m["tool_call_id"] for m in last if m["role"] == "tool"]
    asked = [tc["id"] for m in last if m["role"] == "assistant" for tc in m.get("tool_calls", [])]
    assert answered == asked


def test_chat_duplicate_call_id_answered_once() -> None:
    adapter = ChatCompletionsAdapter(build_session())
    message = chat_turn(("same", "read_notes", "{}"), ("same", "read_notes", "{}"))["choices"][0]["message"]
    out = adapter.tool_messages(message)
    assert [m["tool_call_id"] for m in out] == ["same"]
    assert out[0]["content"] == "no notes"


def fcall(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": name, "arguments": arguments, "status": "completed"}


def search_call(call_id: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_search_call", "id": f"ts_{call_id}", "call_id": call_id, "arguments": arguments, "execution": "client", "status": "completed"}


def test_responses_portable_loop() -> None:
    script = Script(
        responses_turn(fcall("c1", "find_tools", q(query="weather forecast"))),
        responses_turn(fcall("c2", "get_weather", q(city="Oslo")), fcall("c3", "gett_weather", "{}")),
        responses_turn(text="It is 21 C."),
        validate=sdk.responses_request,
    )
    client = openai.OpenAI(api_key="test", base_url="http://test/v1", http_client=script.client())
    session = build_session()
    items: list[Any] = [{"role": "user", "content": "weather in Oslo?"}]
    final = ResponsesAdapter(session).run(client, model="gpt-test", input=items)

    assert final.output_text == "It is 21 C."
    names = [[t["name"] for t in r["tools"]] for r in script.requests]
    assert names[:2] == [["find_tools", "read_notes"], ["find_tools", "read_notes", "get_weather"]]
    assert names[2] == names[1]
    assert prefix_stable([r["tools"] for r in script.requests])
    outputs = {i["call_id"]: i["output"] for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"}
    assert set(outputs) == {"c1", "c2", "c3"}
    assert "did you mean: get_weather" in outputs["c3"].lower()


def test_responses_native_tool_search() -> None:
    script = Script(
        responses_turn(search_call("s1", {"query": "weather forecast"})),
        responses_turn(fcall("c2", "get_weather", q(city="Rome"))),
        responses_turn(search_call("s3", {"query": ""})),
        responses_turn(text="ok"),
        validate=sdk.responses_request,
    )
    client = openai.OpenAI(api_key="test", base_url="http://test/v1", http_client=script.client())
    session = build_session()
    items: list[Any] = [{"role": "user", "content": "weather in Rome?"}]
    ResponsesAdapter(session, native=True).run(client, model="gpt-test", input=items)

    first = script.requests[0]["tools"]
    assert first[0]["type"] == "tool_search" and first[0]["execution"] == "client"
    assert [t.get("name") for t in first[1:]] == ["read_notes"]
    # The tools list stays constant; found tools arrive through tool_search_output.
    assert all(json.dumps(r["tools"]) == json.dumps(first) for r in script.requests)
    outputs = [i for i in items if isinstance(i, dict) and i.get("type") == "tool_search_output"]
    assert outputs[0]["call_id"] == "s1" and outputs[0]["execution"] == "client"
    assert [t["name"] for t in outputs[0]["tools"]] == ["get_weather"]
    assert outputs[1]["tools"] == []  # an empty query finds nothing and loads nothing
    result = next(i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output")
    assert json.loads(result["output"]) == {"city": "Rome", "temp_c": 21}
    sent_search = script.requests[1]["input"]
    assert any(i.get("type") == "tool_search_output" for i in sent_search)
    # The ledger counts what the model holds: search tool + pinned + loaded tools.
    assert session.ledger.turns[-1].names == ("tool_search", "read_notes", "get_weather")
