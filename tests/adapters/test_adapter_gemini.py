"""The real google-genai SDK against a scripted transport."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

import _sdk_requests as sdk
from _session_fixtures import Script, build_session, prefix_stable

genai = pytest.importorskip("google.genai")

from google.genai import types  # noqa: E402

from toolscout.adapters.gemini import GeminiAdapter  # noqa: E402


def turn(*calls: tuple[str | None, str, dict[str, Any]], text: str | None = None) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    for cid, name, args in calls:
        call: dict[str, Any] = {"name": name, "args": args}
        if cid:
            call["id"] = cid
        parts.append({"functionCall": call})
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]}


def client_for(script: Script) -> Any:
    options = types.HttpOptions(base_url="http://test", httpx_client=script.client(httpx))
    return genai.Client(api_key="test", http_options=options)


def test_gemini_multi_turn() -> None:
    script = Script(
        turn(("g1", "find_tools", {"query": "weather forecast"})),
        turn(("g2", "get_weather", {"city": "Quito"}), (None, "get_wether", {})),
        turn(("g3", "find_tools", {"query": "select:format_disk"}), ("g4", "send_email", {"to": "x"})),
        turn(("g5", "format_disk", {})),
        turn(("g6", "get_weather", {"town": "Quito"})),
        turn(text="Sunny."),
        validate=sdk.gemini_request,
    )
    session = build_session()
    contents: list[Any] = ["weather in Quito?"]
    final = GeminiAdapter(session).run(client_for(script), model="gemini-test", contents=contents)

    assert final.text == "Sunny."
    decls = [[d["name"] for d in r["tools"][0]["functionDeclarations"]] for r in script.requests]
    assert decls[0] == ["find_tools", "read_notes"]
    assert decls[-1] == ["find_tools", "read_notes", "get_weather", "format_disk"]
    assert prefix_stable([r["tools"][0]["functionDeclarations"] for r in script.requests])
    # Automatic function calling is off: the SDK made exactly one HTTP call per turn.
    assert len(script.requests) == 6

    answers = [
        p["functionResponse"]
        for c in script.requests[-1]["contents"]
        if c.get("role") == "user"
        for p in c["parts"]
        if "functionResponse" in p
    ]
    by_name = [(a.get("id"), a["name"]) for a in answers]
    assert by_name == [
        ("g1", "find_tools"),
        ("g2", "get_weather"),
        (None, "get_wether"),
        ("g3", "find_tools"),
        ("g4", "send_email"),
        ("g5", "format_disk"),
        ("g6", "get_weather"),
    ]
    responses = [a["response"] for a in answers]
    assert responses[1] == {"result": {"city": "Quito", "temp_c": 21}}
    assert responses[2]["error"]["code"] == "unknown_tool"
    assert "get_weather" in responses[2]["error"]["details"]["suggestions"]
    assert responses[4]["error"]["code"] == "not_revealed"
    assert responses[5]["error"]["code"] == "tool_error"
    assert responses[6]["error"]["code"] == "invalid_arguments"


def test_config_disables_automatic_calling() -> None:
    config = GeminiAdapter(build_session()).config(temperature=0)
    assert config.automatic_function_calling.disable is True
    assert [d.name for d in config.tools[0].function_declarations] == ["find_tools", "read_notes"]
