"""The real langchain-core with a scripted chat model: tools bound per step, ToolMessages."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import Field

from _session_fixtures import build_session, prefix_stable

pytest.importorskip("langchain_core")
pytest.importorskip("openai")

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool

import _sdk_requests as sdk
from toolscout.adapters.langchain import LangChainAdapter


class ScriptedModel(BaseChatModel):
    """Replies with the next scripted AIMessage; records the tools bound for each call."""

    script: list[AIMessage]
    bound: list[list[dict[str, Any]]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        for tool in kwargs.get("tools", []):
            sdk.chat_tool(tool)  # the OpenAI SDK's own tool type, unknown keys refused
        self.bound.append(kwargs.get("tools", []))
        return ChatResult(generations=[ChatGeneration(message=self.script.pop(0))])


def call(cid: str, name: str, **args: Any) -> dict[str, Any]:
    return {"id": cid, "name": name, "args": args, "type": "tool_call"}


def test_langchain_multi_turn() -> None:
    model = ScriptedModel(
        script=[
            AIMessage(content="", tool_calls=[call("l1", "find_tools", query="weather forecast")]),
            AIMessage(content="", tool_calls=[call("l2", "get_weather", city="Baku"), call("l3", "format_disk")]),
            AIMessage(content="", tool_calls=[call("l4", "find_tools", query="select:format_disk,send_email")]),
            AIMessage(
                content="",
                tool_calls=[call("l5", "format_disk"), call("l6", "weather_now")],
                invalid_tool_calls=[{"id": "l7", "name": "send_email", "args": '{"to": ', "error": "bad json", "type": "invalid_tool_call"}],
            ),
            AIMessage(content="done"),
        ],
        bound=[],
    )
    session = build_session()
    messages: list[Any] = [HumanMessage("weather in Baku")]
    final = LangChainAdapter(session).run(model, messages)

    assert final.content == "done"
    names = [[t["function"]["name"] for t in tools] for tools in model.bound]
    assert names[0] == ["find_tools", "read_notes"]
    assert names[2] == ["find_tools", "read_notes", "get_weather"]
    assert names[-1] == ["find_tools", "read_notes", "get_weather", "format_disk", "send_email"]
    assert prefix_stable(model.bound)

    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    assert set(results) == {f"l{i}" for i in range(1, 8)}
    assert json.loads(results["l2"].content) == {"city": "Baku", "temp_c": 21}
    assert results["l2"].status == "success"
    assert results["l3"].status == "error" and results["l3"].content.startswith("not_revealed")
    assert results["l5"].status == "error" and "disk on fire" in results["l5"].content
    assert results["l6"].content.startswith("unknown_tool")
    assert results["l7"].status == "error" and "not valid JSON" in results["l7"].content


def test_structured_tool_runs_through_the_session() -> None:
    session = build_session()
    adapter = LangChainAdapter(session)
    session.handle("find_tools", {"query": "select:get_weather"})
    tool = next(t for t in adapter.tools() if t.name == "get_weather")
    assert tool.args_schema["required"] == ["city"]
    message = tool.invoke({"type": "tool_call", "id": "x1", "name": "get_weather", "args": {"city": "Riga"}})
    assert isinstance(message, ToolMessage) and message.tool_call_id == "x1"
    assert json.loads(message.content) == {"city": "Riga", "temp_c": 21}
    # Tools are cached: the same object while the definition is unchanged.
    assert next(t for t in adapter.tools() if t.name == "get_weather") is tool
