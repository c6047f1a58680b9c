"""Code mode in every adapter, through the real SDKs over a scripted transport (every
request validated against the SDK's own request types): the model's first turn writes a
program with ``execute``, the program calls a renamed tool and a plain one, and only its
output comes back. Then Anthropic's programmatic tool calling: definitions carry
``allowed_callers``, a call made from Claude's code is answered, and the container goes
back with the next request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

pytest.importorskip("pydantic_monty")
pytest.importorskip("openai")
pytest.importorskip("anthropic")
pytest.importorskip("google.genai")
pytest.importorskip("langchain_core")

import anthropic
import openai
from google import genai
from google.genai import types as gtypes
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

import _sdk_requests as sdk
from _session_fixtures import Script, chat_turn, claude_results, claude_turn, responses_turn
from toolscout import Catalog, Tool
from toolscout.adapters.anthropic import CODE_EXECUTION, MessagesAdapter
from toolscout.adapters.gemini import GeminiAdapter
from toolscout.adapters.langchain import LangChainAdapter
from toolscout.adapters.openai import ChatCompletionsAdapter, ResponsesAdapter
from toolscout.codemode.runner import code_runner
from toolscout.gateway import Gateway
from toolscout.session import Session

CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
PROGRAM = (
    "w = await get_weather(city='Lima')\n"
    "text = await files_read_text(path='notes.txt')\n"
    "print(w['temp_c'], text)"
)
EXPECTED = "21 ran files.read_text"
GATEWAY: Gateway | None = None


def _gateway() -> Gateway:
    global GATEWAY
    if GATEWAY is None:
        cat = Catalog()
        cat.add(Tool("files.read_text", "Read a text file.", {"type": "object"}), handler=lambda a: "ran files.read_text")
        cat.add(Tool("get_weather", "Current weather for a city.", CITY), handler=lambda a: {"city": a["city"], "temp_c": 21})
        for i in range(20):
            cat.add(Tool(f"inventory_item_{i}", f"Warehouse inventory record {i}.", {"type": "object"}), handler=lambda a: "x")
        GATEWAY = Gateway(cat)
    return GATEWAY


@pytest.fixture(scope="module", autouse=True)
def _pool() -> Iterator[None]:
    yield
    if GATEWAY is not None:
        import asyncio

        asyncio.run(code_runner(GATEWAY).aclose())


def session(**options: Any) -> Session:
    return Session(_gateway(), code_mode=True, **options)


def chat_client(script: Script) -> Any:
    return openai.OpenAI(api_key="test", base_url="http://test/v1", http_client=script.client())


def claude_client(script: Script) -> Any:
    try:
        import httpx2 as http  # newer SDKs run on the httpx2 fork and reject httpx clients
    except ImportError:
        http = httpx
    return anthropic.Anthropic(api_key="test", base_url="http://test", http_client=script.client(http))


def test_chat_completions() -> None:
    script = Script(chat_turn(("x1", "execute", {"code": PROGRAM})), chat_turn(text="done"), validate=sdk.chat_request)
    messages: list[Any] = [{"role": "user", "content": "weather in Lima and my notes"}]
    ChatCompletionsAdapter(session()).run(chat_client(script), model="gpt-test", messages=messages)
    names = [t["function"]["name"] for t in script.requests[0]["tools"]]
    assert names[:2] == ["find_tools", "execute"]
    (answer,) = [m["content"] for m in messages if isinstance(m, dict) and m.get("role") == "tool"]
    assert answer == EXPECTED


@pytest.mark.parametrize("native", [False, True])
def test_responses(native: bool) -> None:
    call = {"type": "function_call", "id": "fc_x1", "call_id": "x1", "name": "execute", "arguments": json.dumps({"code": PROGRAM}), "status": "completed"}
    script = Script(responses_turn(call), responses_turn(text="done"), validate=sdk.responses_request)
    items: list[Any] = [{"role": "user", "content": "weather in Lima and my notes"}]
    ResponsesAdapter(session(), native=native).run(chat_client(script), model="gpt-test", input=items)
    sent = script.requests[0]["tools"]
    assert "execute" in [t.get("name") for t in sent]
    (output,) = [i["output"] for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
    assert output == EXPECTED


@pytest.mark.parametrize("native", [False, True])
def test_anthropic(native: bool) -> None:
    script = Script(claude_turn(("x1", "execute", {"code": PROGRAM})), claude_turn(text="done"), validate=sdk.anthropic_request)
    messages: list[Any] = [{"role": "user", "content": "weather in Lima and my notes"}]
    MessagesAdapter(session(), native=native).run(claude_client(script), model="claude-test", messages=messages)
    assert [t["name"] for t in script.requests[0]["tools"]][:2] == ["find_tools", "execute"]
    result = claude_results(messages)["x1"]
    assert result["content"] == [{"type": "text", "text": EXPECTED}] and "is_error" not in result


def test_gemini() -> None:
    turn = {"candidates": [{"content": {"role": "model", "parts": [{"functionCall": {"id": "x1", "name": "execute", "args": {"code": PROGRAM}}}]}, "finishReason": "STOP"}]}
    done = {"candidates": [{"content": {"role": "model", "parts": [{"text": "done"}]}, "finishReason": "STOP"}]}
    script = Script(turn, done, validate=sdk.gemini_request)
    client = genai.Client(api_key="test", http_options=gtypes.HttpOptions(base_url="http://test", httpx_client=script.client(httpx)))
    GeminiAdapter(session()).run(client, model="gemini-test", contents=["weather in Lima and my notes"])
    declared = [d["name"] for t in script.requests[0]["tools"] for d in t["functionDeclarations"]]
    assert declared[:2] == ["find_tools", "execute"]
    answers = [p["functionResponse"] for c in script.requests[1]["contents"] if c.get("role") == "user" for p in c["parts"] if "functionResponse" in p]
    assert answers[0]["name"] == "execute" and EXPECTED in json.dumps(answers[0]["response"])


class ScriptedModel(BaseChatModel):
    """Binds tools as ``ChatOpenAI.bind_tools`` does and replies with the next scripted turn."""

    script: list[Any]
    bound: list[list[dict[str, Any]]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        tools = kwargs.get("tools", [])
        for tool in tools:
            sdk.chat_tool(tool)
        self.bound.append(tools)
        return ChatResult(generations=[ChatGeneration(message=self.script.pop(0))])


def test_langchain() -> None:
    model = ScriptedModel(
        script=[
            AIMessage(content="", tool_calls=[{"id": "x1", "name": "execute", "args": {"code": PROGRAM}, "type": "tool_call"}]),
            AIMessage(content="done"),
        ]
    )
    messages: list[Any] = [HumanMessage("weather in Lima and my notes")]
    LangChainAdapter(session()).run(model, messages)
    assert [t["function"]["name"] for t in model.bound[0]][:2] == ["find_tools", "execute"]
    (result,) = [m for m in messages if isinstance(m, ToolMessage)]
    assert result.content == EXPECTED and result.status == "success"


# -- Anthropic programmatic tool calling -----------------------------------------------------
def programmatic_turn(*uses: tuple[str, str, Any]) -> dict[str, Any]:
    """Claude's code-execution tool running a program that calls tools: a server_tool_use
    block, then each tool_use the program made (its caller names the code-execution tool)."""
    caller = {"type": CODE_EXECUTION, "tool_id": "srvtoolu_1"}
    content: list[dict[str, Any]] = [
        {"type": "server_tool_use", "id": "srvtoolu_1", "name": "code_execution", "input": {"code": "..."}, "caller": {"type": "direct"}}
    ]
    content += [{"type": "tool_use", "id": uid, "name": name, "input": args, "caller": caller} for uid, name, args in uses]
    body = claude_turn()
    body.update(content=content, stop_reason="tool_use", container={"id": "container_1", "expires_at": "2026-11-27T06:00:00Z"})
    return body


def test_anthropic_programmatic_tool_calling() -> None:
    script = Script(
        claude_turn(("f1", "find_tools", {"query": "select:get_weather"})),
        programmatic_turn(("p1", "get_weather", {"city": "Lima"}), ("p2", "get_weather", {})),
        claude_turn(text="It is 21 C in Lima."),
        validate=sdk.anthropic_request,
    )
    messages: list[Any] = [{"role": "user", "content": "weather in Lima"}]
    adapter = MessagesAdapter(Session(_gateway()), programmatic=True)
    adapter.run(claude_client(script), model="claude-test", messages=messages)

    first, _, last = script.requests
    assert first["tools"][0] == {"type": CODE_EXECUTION, "name": "code_execution"}
    assert first["tools"][1]["name"] == "find_tools" and first["tools"][1]["allowed_callers"] == ["direct", CODE_EXECUTION]
    weather = next(t for t in last["tools"] if t.get("name") == "get_weather")
    assert weather["allowed_callers"] == [CODE_EXECUTION]
    assert "container" not in first and last["container"] == "container_1"
    results = claude_results(messages)
    assert json.loads(results["p1"]["content"][0]["text"]) == {"city": "Lima", "temp_c": 21}
    assert results["p2"]["is_error"] and results["p2"]["content"][0]["text"].startswith("invalid_arguments")
    # The answer to the program's calls holds tool results only, as the API requires.
    answer = messages[4]
    assert {b["type"] for b in answer["content"]} == {"tool_result"}
    assert adapter.session.ledger.turns  # the turns were recorded as usual


# -- pre-selection: run(..., preselect=k) ------------------------------------------------------
def test_every_adapter_preselects_from_the_users_message() -> None:
    ask = "what is the weather in Lima"
    chat = Script(chat_turn(text="ok"), validate=sdk.chat_request)
    ChatCompletionsAdapter(Session(_gateway())).run(chat_client(chat), model="gpt-test", preselect=3,
                                                    messages=[{"role": "user", "content": [{"type": "text", "text": ask}]}])
    assert "get_weather" in [t["function"]["name"] for t in chat.requests[0]["tools"]]

    responses = Script(responses_turn(text="ok"), validate=sdk.responses_request)
    ResponsesAdapter(Session(_gateway())).run(chat_client(responses), model="gpt-test", input=[{"role": "user", "content": ask}], preselect=3)
    assert "get_weather" in [t.get("name") for t in responses.requests[0]["tools"]]

    claude = Script(claude_turn(text="ok"), validate=sdk.anthropic_request)
    MessagesAdapter(Session(_gateway())).run(claude_client(claude), model="claude-test", messages=[{"role": "user", "content": ask}], preselect=3)
    assert "get_weather" in [t["name"] for t in claude.requests[0]["tools"]]

    gem = Script({"candidates": [{"content": {"role": "model", "parts": [{"text": "ok"}]}, "finishReason": "STOP"}]}, validate=sdk.gemini_request)
    client = genai.Client(api_key="test", http_options=gtypes.HttpOptions(base_url="http://test", httpx_client=gem.client(httpx)))
    GeminiAdapter(Session(_gateway())).run(client, model="gemini-test", contents=[ask], preselect=3)
    assert "get_weather" in [d["name"] for t in gem.requests[0]["tools"] for d in t["functionDeclarations"]]

    model = ScriptedModel(script=[AIMessage(content="ok")])
    session = Session(_gateway())
    LangChainAdapter(session).run(model, [HumanMessage(ask)], preselect=3)
    assert "get_weather" in [t["function"]["name"] for t in model.bound[0]]
    # without the option nothing is revealed before the first turn
    plain = Script(chat_turn(text="ok"), validate=sdk.chat_request)
    ChatCompletionsAdapter(Session(_gateway())).run(chat_client(plain), model="gpt-test", messages=[{"role": "user", "content": ask}])
    assert [t["function"]["name"] for t in plain.requests[0]["tools"]] == ["find_tools"]
