"""Issue 14: what the model is told is exactly what it can call, for every provider and mode.

Every test drives the real SDK (openai, anthropic, google-genai; a scripted chat model for
LangChain) over a scripted HTTP transport, and every request body is validated against the
SDK's own request types with unknown keys refused (``_sdk_requests``). Scripted model turns
that call tools read the names and parameters from the request the SDK just sent, as a
model would: they never use catalog names the model was not given.

1. renamed tools: wire names everywhere the model reads, and callable (all adapters);
2. Anthropic native: ``tool_reference`` names the ``defer_loading`` definitions, only
   tools the session will run;
3. native eviction: a tool the provider loaded stays callable;
4. Gemini parameter names renamed out, arguments mapped back;
5. Gemini blocked candidate: ``run()`` stops cleanly and says why;
6. LangChain keeps ``strict``;
7. SDK floors: ``native=True`` refuses an SDK whose types lack what it sends.
Then a property test over all adapters with catalogs the providers would reject.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.metadata
import json
import re
import tomllib
from collections.abc import Callable
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _paths import ROOT

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
from toolscout import Catalog, DeferPolicy, Tool
from toolscout.adapters import anthropic as anthropic_adapter
from toolscout.adapters import openai as openai_adapter
from toolscout.adapters.anthropic import MessagesAdapter
from toolscout.adapters.gemini import GeminiAdapter
from toolscout.adapters.langchain import LangChainAdapter
from toolscout.adapters.openai import ChatCompletionsAdapter, ResponsesAdapter
from toolscout.errors import ConfigError
from toolscout.formats import wire_name
from toolscout.gateway import Gateway
from toolscout.session import Session

LONG = "acme_enterprise_crm_" + "customer_relationship_management_" * 2 + "update_contact_record"
DOTTED = "files.read_text"
ODD = "PDF&URLTool"
RENAMED = (DOTTED, ODD, LONG)
HEADERS = {
    "type": "object",
    "properties": {
        "X-Request-Id": {"type": "string"},
        "path": {"type": "string"},
        "opts": {"type": "object", "properties": {"max.bytes": {"type": "integer"}}, "required": ["max.bytes"]},
    },
    "required": ["X-Request-Id", "path", "opts"],
}
CITY = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"], "additionalProperties": False}

# Documented name rules: OpenAI and Anthropic tool names ^[a-zA-Z0-9_-]{1,64}$; Gemini
# function names start with a letter or _, then letters, digits, _ . : -, at most 64; Gemini
# parameter names (the issue's rule) [A-Za-z_][A-Za-z0-9_]{0,63}. OpenAI and Anthropic
# document no rule for parameter names.
TOOL_NAME = {
    "openai": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "anthropic": re.compile(r"[a-zA-Z0-9_-]{1,64}"),
    "gemini": re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}"),
}
GEMINI_PARAM = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")


def build(filler: int = 20, **options: Any) -> tuple[Session, list[tuple[str, Any]]]:
    """Renamed tools (one with parameters Gemini rejects), a strict-ready tool, a pinned one
    and filler; the list records every call a handler received."""
    ran: list[tuple[str, Any]] = []

    def record(name: str) -> Callable[[dict[str, Any]], str]:
        return lambda args: ran.append((name, args)) or f"ran {name}"

    cat = Catalog()
    cat.add(Tool(DOTTED, "Read a text file from disk.", HEADERS), handler=record(DOTTED))
    cat.add(Tool(ODD, "Convert a PDF at a URL to text.", {"type": "object"}), handler=record(ODD))
    cat.add(Tool(LONG, "Update a contact record in the CRM.", {"type": "object"}), handler=record(LONG))
    cat.add(Tool("get_weather", "Get the current weather forecast for a city.", CITY), handler=record("get_weather"))
    cat.add(Tool("send_email", "Send an email message.", {"type": "object"}), handler=record("send_email"))
    cat.add(Tool("mail.send", "Send mail through the relay.", {"type": "object"}), handler=record("mail.send"))
    cat.add(Tool("read_notes", "Read the saved notes.", {"type": "object"}, defer=DeferPolicy.NEVER), handler=record("read_notes"))
    for i in range(filler):
        cat.add(Tool(f"inventory_item_{i}", f"Warehouse inventory record {i}.", {"type": "object"}), handler=record(f"inventory_item_{i}"))
    return Session(Gateway(cat), **options), ran


def value_for(schema: dict[str, Any]) -> Any:
    kind = str(schema.get("type", "string")).lower()
    if kind == "object":
        return args_for(schema)
    if kind == "array":
        return [value_for(schema.get("items") or {})]
    return {"integer": 1, "number": 1.5, "boolean": True}.get(kind, "v")


def args_for(schema: dict[str, Any] | None) -> dict[str, Any]:
    """What a model sends for ``schema`` as it was sent to it: every property filled."""
    return {name: value_for(sub) for name, sub in ((schema or {}).get("properties") or {}).items()}


def select(*names: str) -> str:
    return "select:" + ",".join(names)


def assert_wire_text(text: str, fmt: str, names: tuple[str, ...] = RENAMED) -> None:
    """The text names each tool by its wire name, never by a catalog name it differs from."""
    for name in names:
        wire = wire_name(name, fmt)
        assert wire in text, (wire, text)
        assert wire == name or name not in text, (name, text)


# -- OpenAI Chat -----------------------------------------------------------------------------
def chat_client(script: Script) -> Any:
    return openai.OpenAI(api_key="test", base_url="http://test/v1", http_client=script.client())


def chat_answers(messages: list[Any]) -> dict[str, str]:
    return {m["tool_call_id"]: m["content"] for m in messages if isinstance(m, dict) and m.get("role") == "tool"}


def new_chat_tools(sent: dict[str, Any], known: int) -> list[dict[str, Any]]:
    return [t["function"] for t in sent["tools"][known:]]


def test_chat_names_the_model_reads_are_wire_names_and_callable() -> None:
    session, ran = build()
    wires = [wire_name(n, "openai") for n in RENAMED]

    def call_each(sent: dict[str, Any]) -> dict[str, Any]:
        fns = new_chat_tools(sent, 2)  # after find_tools and the pinned read_notes
        assert sorted(f["name"] for f in fns) == sorted(wires)
        return chat_turn(*[(f"c{i}", f["name"], args_for(f["parameters"])) for i, f in enumerate(fns)])

    script = Script(
        chat_turn(("f1", "find_tools", {"query": select(*wires)})),
        call_each,
        chat_turn(("e1", "files.read_txt", {}), ("e2", "mail_send", {}), ("e3", wires[0], {"path": "a"})),
        chat_turn(text="done"),
        validate=sdk.chat_request,
    )
    messages: list[Any] = [{"role": "user", "content": "read the file"}]
    ChatCompletionsAdapter(session).run(chat_client(script), model="gpt-test", messages=messages)

    answers = chat_answers(messages)
    assert_wire_text(answers["f1"], "openai")
    assert {answers[f"c{i}"] for i in range(3)} == {f"ran {n}" for n in RENAMED}
    assert {n for n, _ in ran} == set(RENAMED)
    assert dict(ran)[DOTTED] == {"X-Request-Id": "v", "path": "v", "opts": {"max.bytes": 1}}
    # Did-you-mean names and not_revealed hints use wire names too.
    assert wire_name(DOTTED, "openai") in answers["e1"] and DOTTED not in answers["e1"]
    assert answers["e2"].startswith("not_revealed") and f"select:{wire_name('mail.send', 'openai')}" in answers["e2"]
    assert "mail.send" not in answers["e2"]
    assert answers["e3"].startswith(f"invalid_arguments: invalid arguments for {wires[0]}:") and DOTTED not in answers["e3"]


def test_use_tool_candidates_are_wire_names() -> None:
    session, _ = build(use_tool=True)
    adapter = ChatCompletionsAdapter(session)
    adapter.tools()
    message = chat_turn(("u1", "use_tool", {"query": "read text file convert pdf url", "params": {}}))["choices"][0]["message"]
    (answer,) = adapter.tool_messages(message)
    assert answer["content"].startswith("ambiguous")
    assert_wire_text(answer["content"], "openai", (DOTTED, ODD))


# -- OpenAI Responses ------------------------------------------------------------------------
def fcall(call_id: str, name: str, arguments: Any) -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {"type": "function_call", "id": f"fc_{call_id}", "call_id": call_id, "name": name, "arguments": args, "status": "completed"}


def search_call(call_id: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_search_call", "id": f"ts_{call_id}", "call_id": call_id, "arguments": arguments, "execution": "client", "status": "completed"}


def items_of(items: list[Any], kind: str) -> list[dict[str, Any]]:
    return [i for i in items if isinstance(i, dict) and i.get("type") == kind]


def test_responses_portable_names_are_wire_names_and_callable() -> None:
    session, ran = build()
    wires = [wire_name(n, "openai-responses") for n in RENAMED]

    def call_each(sent: dict[str, Any]) -> dict[str, Any]:
        fns = sent["tools"][2:]
        assert sorted(f["name"] for f in fns) == sorted(wires)
        return responses_turn(*[fcall(f"c{i}", f["name"], args_for(f["parameters"])) for i, f in enumerate(fns)])

    script = Script(
        responses_turn(fcall("f1", "find_tools", {"query": select(*wires)})),
        call_each,
        responses_turn(text="done"),
        validate=sdk.responses_request,
    )
    items: list[Any] = [{"role": "user", "content": "read the file"}]
    ResponsesAdapter(session).run(chat_client(script), model="gpt-test", input=items)

    outputs = {i["call_id"]: i["output"] for i in items_of(items, "function_call_output")}
    assert_wire_text(outputs["f1"], "openai-responses")
    assert {outputs[f"c{i}"] for i in range(3)} == {f"ran {n}" for n in RENAMED}
    assert dict(ran)[DOTTED] == {"X-Request-Id": "v", "path": "v", "opts": {"max.bytes": 1}}


def test_responses_native_loads_wire_names_with_defer_loading() -> None:
    session, ran = build()
    wires = [wire_name(n, "openai-responses") for n in RENAMED]

    def call_loaded(sent: dict[str, Any]) -> dict[str, Any]:
        (loaded,) = items_of(sent["input"], "tool_search_output")
        assert sorted(t["name"] for t in loaded["tools"]) == sorted(wires)
        # The provider's client-executed example keeps defer_loading on loaded tools.
        assert all(t["defer_loading"] is True for t in loaded["tools"])
        return responses_turn(*[fcall(f"c{i}", t["name"], args_for(t["parameters"])) for i, t in enumerate(loaded["tools"])])

    script = Script(
        responses_turn(search_call("s1", {"query": select(*wires)})),
        call_loaded,
        responses_turn(text="done"),
        validate=sdk.responses_request,
    )
    items: list[Any] = [{"role": "user", "content": "read the file"}]
    ResponsesAdapter(session, native=True).run(chat_client(script), model="gpt-test", input=items)

    outputs = {i["call_id"]: i["output"] for i in items_of(items, "function_call_output")}
    assert {outputs[f"c{i}"] for i in range(3)} == {f"ran {n}" for n in RENAMED}
    assert dict(ran)[DOTTED] == {"X-Request-Id": "v", "path": "v", "opts": {"max.bytes": 1}}
    assert set(session.loaded) == set(RENAMED)
    assert all(json.dumps(r["tools"]) == json.dumps(script.requests[0]["tools"]) for r in script.requests)


# -- Anthropic -------------------------------------------------------------------------------
def claude_client(script: Script) -> Any:
    try:
        import httpx2 as http  # newer SDKs run on the httpx2 fork and reject httpx clients
    except ImportError:
        http = httpx
    return anthropic.Anthropic(api_key="test", base_url="http://test", http_client=script.client(http))



def text_of(block: dict[str, Any]) -> str:
    return "".join(c.get("text", "") for c in block["content"])


def test_anthropic_portable_names_are_wire_names_and_callable() -> None:
    session, ran = build()
    wires = [wire_name(n, "anthropic") for n in RENAMED]

    def call_each(sent: dict[str, Any]) -> dict[str, Any]:
        defs = sent["tools"][2:]
        assert sorted(d["name"] for d in defs) == sorted(wires)
        return claude_turn(*[(f"c{i}", d["name"], args_for(d["input_schema"])) for i, d in enumerate(defs)])

    script = Script(
        claude_turn(("f1", "find_tools", {"query": select(*wires)})),
        call_each,
        claude_turn(text="done"),
        validate=sdk.anthropic_request,
    )
    messages: list[Any] = [{"role": "user", "content": "read the file"}]
    MessagesAdapter(session).run(claude_client(script), model="claude-test", messages=messages)

    results = claude_results(messages)
    assert_wire_text(text_of(results["f1"]), "anthropic")
    assert {text_of(results[f"c{i}"]) for i in range(3)} == {f"ran {n}" for n in RENAMED}
    assert dict(ran)[DOTTED] == {"X-Request-Id": "v", "path": "v", "opts": {"max.bytes": 1}}


def test_anthropic_native_references_name_the_deferred_definitions() -> None:
    session, ran = build()
    wires = [wire_name(n, "anthropic") for n in RENAMED]

    def call_referenced(sent: dict[str, Any]) -> dict[str, Any]:
        deferred = {t["name"]: t for t in sent["tools"] if t.get("defer_loading")}
        (result,) = [b for b in sent["messages"][-1]["content"] if b["type"] == "tool_result"]
        refs = [c["tool_name"] for c in result["content"]]
        assert sorted(refs) == sorted(wires) and set(refs) <= set(deferred)
        return claude_turn(*[(f"c{i}", n, args_for(deferred[n]["input_schema"])) for i, n in enumerate(refs)])

    script = Script(
        claude_turn(("f1", "find_tools", {"query": select(*wires)})),
        call_referenced,
        claude_turn(text="done"),
        validate=sdk.anthropic_request,
    )
    messages: list[Any] = [{"role": "user", "content": "read the file"}]
    MessagesAdapter(session, native=True).run(claude_client(script), model="claude-test", messages=messages)

    results = claude_results(messages)
    assert {text_of(results[f"c{i}"]) for i in range(3)} == {f"ran {n}" for n in RENAMED}
    assert dict(ran)[DOTTED] == {"X-Request-Id": "v", "path": "v", "opts": {"max.bytes": 1}}


@pytest.mark.parametrize("native", [False, True])
def test_anthropic_references_only_tools_the_session_will_run(native: bool) -> None:
    """max_revealed=2 and a search for five: only the two loaded tools are referenced
    (portable: listed), and each of them runs."""
    session, _ = build(max_revealed=2)
    asked = [wire_name(ODD, "anthropic"), wire_name(DOTTED, "anthropic"), "inventory_item_1", "inventory_item_2", "inventory_item_3"]

    def call_given(sent: dict[str, Any]) -> dict[str, Any]:
        defs = {t["name"]: t for t in sent["tools"]}
        if native:
            (result,) = [b for b in sent["messages"][-1]["content"] if b["type"] == "tool_result"]
            given = [c["tool_name"] for c in result["content"]]
            assert all(c["type"] == "tool_reference" for c in result["content"])
            assert all(defs[n].get("defer_loading") for n in given)
        else:
            given = [t["name"] for t in sent["tools"][2:]]
        assert len(given) == 2
        return claude_turn(*[(f"c{i}", n, args_for(defs[n]["input_schema"])) for i, n in enumerate(given)])

    script = Script(
        claude_turn(("f1", "find_tools", {"query": select(*asked)})),
        call_given,
        claude_turn(text="done"),
        validate=sdk.anthropic_request,
    )
    messages: list[Any] = [{"role": "user", "content": "go"}]
    MessagesAdapter(session, native=native).run(claude_client(script), model="claude-test", messages=messages)
    results = claude_results(messages)
    assert all(not results[f"c{i}"].get("is_error") for i in range(2)), results


# -- native eviction --------------------------------------------------------------------------
def test_responses_native_runs_a_loaded_tool_after_eviction() -> None:
    session, ran = build(max_revealed=1)
    script = Script(
        responses_turn(search_call("s1", {"query": "select:get_weather"})),
        responses_turn(search_call("s2", {"query": "select:send_email"})),
        responses_turn(fcall("c3", "get_weather", {"city": "Rome"})),
        responses_turn(text="done"),
        validate=sdk.responses_request,
    )
    items: list[Any] = [{"role": "user", "content": "weather"}]
    ResponsesAdapter(session, native=True).run(chat_client(script), model="gpt-test", input=items)

    assert session.revealed == ("send_email",)  # the reveal set evicted get_weather...
    outputs = {i["call_id"]: i["output"] for i in items_of(items, "function_call_output")}
    assert outputs["c3"] == "ran get_weather"  # ...but the provider still holds it
    assert ("get_weather", {"city": "Rome"}) in ran
    # The provider-loaded set survives a shared store's state()/restore().
    other = Session(session.gateway, max_revealed=1).restore(json.loads(json.dumps(session.state())))
    assert other.is_callable("get_weather") and other.loaded == session.loaded


def test_anthropic_native_runs_a_loaded_tool_after_eviction() -> None:
    session, _ = build(max_revealed=1)
    script = Script(
        claude_turn(("f1", "find_tools", {"query": "select:get_weather"})),
        claude_turn(("f2", "find_tools", {"query": "select:send_email"})),
        claude_turn(("c3", "get_weather", {"city": "Rome"})),
        claude_turn(text="done"),
        validate=sdk.anthropic_request,
    )
    messages: list[Any] = [{"role": "user", "content": "weather"}]
    MessagesAdapter(session, native=True).run(claude_client(script), model="claude-test", messages=messages)

    assert session.revealed == ("send_email",)
    results = claude_results(messages)
    assert text_of(results["c3"]) == "ran get_weather" and not results["c3"].get("is_error")
    assert session.ledger.turns[-1].names == ("find_tools", "read_notes", "get_weather", "send_email")


class _RecordingStore:
    """A ``SessionStore`` (its attach/refresh/save half) that keeps the states it was asked to save."""

    def __init__(self) -> None:
        self.saved: list[dict[str, Any]] = []

    def attach(self, session: Session) -> None: ...
    def refresh(self, session: Session) -> None: ...
    async def arefresh(self, session: Session) -> None: ...

    def save(self, session: Session) -> bool:
        self.saved.append(json.loads(json.dumps(session.state())))
        return True

    async def asave(self, session: Session) -> bool:
        return self.save(session)


def test_provider_loaded_tools_are_saved_to_a_shared_store_at_once() -> None:
    """A replica that continues the conversation must know what the provider holds, even
    if the adapter marked it after the call was handled and saved."""
    store = _RecordingStore()
    session, _ = build(max_revealed=1, store=store)
    adapter = ResponsesAdapter(session, native=True)
    adapter.tools()
    adapter.output_items(responses_turn(search_call("s1", {"query": "select:get_weather"})))
    adapter.output_items(responses_turn(search_call("s2", {"query": "select:send_email"})))
    assert store.saved[-1]["revealed"] == ["send_email"]  # get_weather left the reveal set
    assert store.saved[-1]["loaded"] == ["get_weather", "send_email"]
    replica = Session(session.gateway, max_revealed=1).restore(store.saved[-1])
    (answer,) = ResponsesAdapter(replica, native=True).output_items(responses_turn(fcall("c1", "get_weather", {"city": "Oslo"})))
    assert answer["output"] == "ran get_weather"


def test_portable_mode_still_refuses_an_evicted_tool() -> None:
    """Portable lists drop an evicted tool, so the model no longer has it: not_revealed
    is then the truth (the contrast to native mode)."""
    session, _ = build(max_revealed=1)
    script = Script(
        chat_turn(("f1", "find_tools", {"query": "select:get_weather"})),
        chat_turn(("f2", "find_tools", {"query": "select:send_email"})),
        chat_turn(("c3", "get_weather", {"city": "Rome"})),
        chat_turn(text="done"),
        validate=sdk.chat_request,
    )
    messages: list[Any] = [{"role": "user", "content": "weather"}]
    ChatCompletionsAdapter(session).run(chat_client(script), model="gpt-test", messages=messages)
    assert "get_weather" not in [t["function"]["name"] for t in script.requests[-1]["tools"]]
    assert chat_answers(messages)["c3"].startswith("not_revealed")
    assert session.loaded == ()


# -- Gemini ------------------------------------------------------------------------------------
def gemini_turn(*calls: tuple[str, str, dict[str, Any]], text: str | None = None) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"text": text}] if text else []
    parts += [{"functionCall": {"id": cid, "name": name, "args": args}} for cid, name, args in calls]
    return {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP"}]}


def gemini_response(*calls: tuple[str, str, dict[str, Any]]) -> Any:
    """The SDK's response object for a scripted turn (for calls made without HTTP)."""
    return gtypes.GenerateContentResponse.model_validate(gemini_turn(*calls))


def gemini_client(script: Script) -> Any:
    options = gtypes.HttpOptions(base_url="http://test", httpx_client=script.client(httpx))
    return genai.Client(api_key="test", http_options=options)


def gemini_answers(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {
        p["functionResponse"]["id"]: p["functionResponse"]["response"]
        for c in body["contents"]
        if c.get("role") == "user"
        for p in c["parts"]
        if "functionResponse" in p
    }


def param_names(schema: dict[str, Any]) -> list[str]:
    """Every property name at every depth of a sent Gemini schema."""
    out = []
    for name, sub in (schema.get("properties") or {}).items():
        out += [name, *param_names(sub)]
    for sub in [schema.get("items"), *(schema.get("anyOf") or [])]:
        if isinstance(sub, dict):
            out += param_names(sub)
    return out


def test_gemini_names_and_parameters_are_renamed_and_mapped_back() -> None:
    session, ran = build(call_tool=True)
    wires = [wire_name(n, "gemini") for n in RENAMED]

    def call_each(sent: dict[str, Any]) -> dict[str, Any]:
        decls = sent["tools"][0]["functionDeclarations"][3:]  # find_tools, call_tool, read_notes
        assert sorted(d["name"] for d in decls) == sorted(wires)
        dotted = next(d for d in decls if d["name"] == wire_name(DOTTED, "gemini"))
        names = param_names(dotted["parameters"])
        assert all(GEMINI_PARAM.fullmatch(n) for n in names) and "X-Request-Id" not in names
        assert set(dotted["parameters"]["required"]) <= set(dotted["parameters"]["properties"])
        calls = [(f"c{i}", d["name"], args_for(d.get("parameters"))) for i, d in enumerate(decls)]
        # The same arguments through call_tool are mapped back as well.
        calls.append(("ct", "call_tool", {"name": dotted["name"], "arguments": args_for(dotted["parameters"])}))
        # An argument error names the parameters as they were sent.
        calls.append(("bad", dotted["name"], {"path": "v", next(k for k in dotted["parameters"]["properties"] if k.startswith("opts")): {}}))
        return gemini_turn(*calls)

    script = Script(
        gemini_turn(("f1", "find_tools", {"query": select(*wires)})),
        call_each,
        gemini_turn(text="done"),
        validate=sdk.gemini_request,
    )
    contents: list[Any] = ["read the file"]
    adapter = GeminiAdapter(session)
    adapter.run(gemini_client(script), model="gemini-test", contents=contents)

    answers = gemini_answers(script.requests[-1])
    assert_wire_text(answers["f1"]["result"], "gemini")
    assert {answers[f"c{i}"]["result"] for i in range(3)} == {f"ran {n}" for n in RENAMED}
    assert answers["ct"] == {"result": f"ran {DOTTED}"}
    error = answers["bad"]["error"]
    sent_id, sent_max = "X_Request_Id_" + hashlib.sha1(b"X-Request-Id").hexdigest()[:8], "max_bytes_" + hashlib.sha1(b"max.bytes").hexdigest()[:8]
    assert error["code"] == "invalid_arguments" and "X-Request-Id" not in json.dumps(error) and "max.bytes" not in json.dumps(error)
    assert [e["pointer"] for e in error["details"]["errors"]] == [f"/{sent_id}", f"/opts/{sent_max}"]
    assert f"'{sent_id}' is a required property" in error["message"]
    expected = {"X-Request-Id": "v", "path": "v", "opts": {"max.bytes": 1}}
    assert [args for name, args in ran if name == DOTTED] == [expected, expected]
    assert adapter.stop_reason is None


def test_gemini_maps_arguments_back_through_refs_arrays_and_variants() -> None:
    schema = {
        "type": "object",
        "properties": {
            "Content-Type": {"type": "string"},
            "rows": {"type": "array", "items": {"$ref": "#/$defs/Row"}},
            "filter": {"anyOf": [{"$ref": "#/$defs/Row"}, {"type": "null"}]},
        },
        "required": ["Content-Type", "rows"],
        "$defs": {"Row": {"type": "object", "properties": {"row-id": {"type": "integer"}, "über": {"type": "string"}}}},
    }
    cat = Catalog()
    got: list[Any] = []
    cat.add(Tool("upload.rows", "Upload rows.", schema), handler=lambda a: got.append(a) or "ok")
    session = Session(Gateway(cat), threshold=100)
    (decl,) = session.tools("gemini")
    sent = decl["parameters"]
    assert all(GEMINI_PARAM.fullmatch(n) for n in param_names(sent))
    gtypes.FunctionDeclaration.model_validate(decl)  # the SDK accepts the renamed declaration
    row = args_for(sent["properties"][next(k for k in sent["properties"] if k.startswith("rows"))]["items"])
    args = {
        next(k for k in sent["properties"] if k.startswith("Content_Type")): "text/csv",
        "rows": [row, row],
        "filter": row,
    }
    answer = GeminiAdapter(session).function_responses(gemini_response(("u1", decl["name"], args)))
    assert answer.parts[0].function_response.response == {"result": "ok"}
    assert got == [{"Content-Type": "text/csv", "rows": [{"row-id": 1, "über": "v"}] * 2, "filter": {"row-id": 1, "über": "v"}}]


def test_gemini_blocked_candidate_stops_cleanly() -> None:
    session, _ = build()
    blocked = {"candidates": [{"finishReason": "SAFETY", "safetyRatings": [{"category": "HARM_CATEGORY_DANGEROUS_CONTENT", "probability": "HIGH", "blocked": True}]}]}
    script = Script(gemini_turn(("f1", "find_tools", {"query": "weather forecast"})), blocked, validate=sdk.gemini_request)
    contents: list[Any] = ["weather?"]
    adapter = GeminiAdapter(session)
    final = adapter.run(gemini_client(script), model="gemini-test", contents=contents)

    assert final.candidates[0].finish_reason == gtypes.FinishReason.SAFETY
    assert len(contents) == 3 and None not in contents  # question, model turn, answers: nothing appended after
    assert adapter.stop_reason is not None and "SAFETY" in adapter.stop_reason


def test_gemini_blocked_prompt_stops_cleanly() -> None:
    script = Script({"promptFeedback": {"blockReason": "SAFETY"}}, validate=sdk.gemini_request)
    contents: list[Any] = ["weather?"]
    adapter = GeminiAdapter(build()[0])
    adapter.run(gemini_client(script), model="gemini-test", contents=contents)
    assert contents == ["weather?"]
    assert adapter.stop_reason == "no candidate (prompt blocked: SAFETY)"


# -- LangChain ---------------------------------------------------------------------------------
class OpenAIStyleModel(BaseChatModel):
    """Binds tools the way ``ChatOpenAI.bind_tools`` does (``convert_to_openai_tool(t,
    strict=strict)`` per tool) and replies with the next scripted turn, which may read the
    bound tools."""

    script: list[Any]
    bound: list[list[dict[str, Any]]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-openai-style"

    def bind_tools(self, tools: Any, *, strict: bool | None = None, **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t, strict=strict) for t in tools], **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        tools = kwargs.get("tools", [])
        for tool in tools:
            sdk.chat_tool(tool)  # what ChatOpenAI would send, as the OpenAI SDK types it
        self.bound.append(tools)
        turn = self.script.pop(0)
        return ChatResult(generations=[ChatGeneration(message=turn(tools) if callable(turn) else turn)])


def lc_call(cid: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": cid, "name": name, "args": args, "type": "tool_call"}


def test_langchain_keeps_strict_and_wire_names() -> None:
    session, ran = build()
    wires = [wire_name(n, "openai") for n in (*RENAMED, "get_weather")]

    def call_each(tools: list[dict[str, Any]]) -> AIMessage:
        fns = [t["function"] for t in tools[2:]]
        assert sorted(f["name"] for f in fns) == sorted(wires)
        return AIMessage(content="", tool_calls=[lc_call(f"c{i}", f["name"], args_for(f["parameters"])) for i, f in enumerate(fns)])

    model = OpenAIStyleModel(
        script=[AIMessage(content="", tool_calls=[lc_call("f1", "find_tools", {"query": select(*wires)})]), call_each, AIMessage(content="done")],
    )
    messages: list[Any] = [HumanMessage("read the file and the weather")]
    adapter = LangChainAdapter(session)
    adapter.run(model, messages)

    weather = next(t["function"] for t in model.bound[-1] if t["function"]["name"] == "get_weather")
    assert weather["strict"] is True  # toolscout marked it strict; bind_tools kept it
    assert all("strict" not in t["function"] for t in model.bound[-1] if t["function"]["name"] in wires[:3])
    # Why dicts are bound: the same tool as a StructuredTool reaches the model without strict.
    structured = next(t for t in adapter.tools(record=False) if t.name == "get_weather")
    assert "strict" not in convert_to_openai_tool(structured)["function"]

    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    assert_wire_text(results["f1"].content, "openai")
    assert {results[f"c{i}"].content for i in range(4)} == {f"ran {n}" for n in (*RENAMED, "get_weather")}
    assert all(results[f"c{i}"].status == "success" for i in range(4))
    assert dict(ran)[DOTTED] == {"X-Request-Id": "v", "path": "v", "opts": {"max.bytes": 1}}


# -- SDK floors --------------------------------------------------------------------------------
def _floor(extra: str, dist: str) -> tuple[int, ...]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (spec,) = [s for s in project["project"]["optional-dependencies"][extra] if s.startswith(dist)]
    return tuple(int(p) for p in spec.split(">=")[1].split("."))


def test_extras_floors_are_the_native_minimums() -> None:
    assert _floor("openai", "openai") == openai_adapter.NATIVE_MIN_SDK
    assert _floor("anthropic", "anthropic") == anthropic_adapter.NATIVE_MIN_SDK
    assert _floor("gemini", "google-genai") >= (1, 4)  # the first with Schema.anyOf


def test_installed_sdks_type_what_native_mode_sends() -> None:
    from anthropic.types import ToolParam, ToolReferenceBlockParam
    from openai.types.responses import (
        FunctionToolParam,
        ResponseToolSearchOutputItemParam,
        ToolSearchToolParam,
    )

    assert "defer_loading" in ToolParam.__annotations__ and "tool_name" in ToolReferenceBlockParam.__annotations__
    assert "defer_loading" in FunctionToolParam.__annotations__ and "execution" in ToolSearchToolParam.__annotations__
    assert "tools" in ResponseToolSearchOutputItemParam.__annotations__


@pytest.mark.parametrize(
    ("make", "dist", "old"),
    [
        (lambda s: MessagesAdapter(s, native=True), "anthropic", "0.79.1"),
        (lambda s: ResponsesAdapter(s, native=True), "openai", "2.24.0"),
    ],
)
def test_native_mode_refuses_an_sdk_too_old(monkeypatch: pytest.MonkeyPatch, make: Any, dist: str, old: str) -> None:
    real = importlib.metadata.version
    monkeypatch.setattr(importlib.metadata, "version", lambda name: old if name == dist else real(name))
    session = build()[0]
    with pytest.raises(ConfigError) as info:
        make(session)
    assert f"{dist}>=" in info.value.message and old in info.value.message
    assert "native=False" in info.value.hint
    # Portable mode does not need the newer types.
    MessagesAdapter(session) if dist == "anthropic" else ResponsesAdapter(session)


# -- property: every name given is valid for the provider, and callable --------------------------
_TEXT = st.characters(blacklist_categories=("Cs", "Cc", "Cf", "Zl", "Zp"))
_TOOL = st.text(alphabet=_TEXT, min_size=1, max_size=90).filter(
    lambda s: s.strip() == s and "," not in s and s[0] not in "`'\"" and s[-1] not in "`'\""
)
_CLASH = "a_b_" + hashlib.sha1(b"a-b").hexdigest()[:8]  # what "a-b" would become
_PARAM = st.one_of(
    st.text(alphabet=_TEXT, min_size=0, max_size=80),
    st.sampled_from(["X-Request-Id", "a-b", "a_b", _CLASH, "über", "1st", "p" * 70 + "1", "p" * 70 + "2", "$ref", ""]),
)
_SPEC = st.tuples(_TOOL, st.lists(_PARAM, max_size=4, unique=True), st.lists(_PARAM, max_size=3, unique=True))


def _catalog(specs: list[tuple[str, list[str], list[str]]], twins: int) -> tuple[Catalog, list[tuple[str, Any]]]:
    ran: list[tuple[str, Any]] = []
    cat = Catalog()
    specs = [*specs, *((f"{'x' * 70}{i}", ["a-b"], []) for i in range(twins))]  # same first 55 characters
    for name, params, inner in specs:
        props: dict[str, Any] = {p: {"type": "string"} for p in params}
        if inner:
            props["nested-obj"] = {"type": "object", "properties": {p: {"type": "integer"} for p in inner}, "required": list(inner)}
        schema = {"type": "object", "properties": props, "required": list(props)}
        try:
            cat.add(Tool(name, f"tool {name!r}", schema), handler=lambda a, n=name: ran.append((n, a)) or "ok")
        except Exception:
            continue  # a name the catalog refuses is not this property's concern
    return cat, ran


def _expected(tool: Tool) -> dict[str, Any]:
    return args_for(tool.input_schema)


def _check_portable(kind: str, session: Session, ran: list[tuple[str, Any]]) -> None:
    cat = session.gateway.catalog
    select_all = select(*cat.names())
    if kind == "langchain":
        adapter: Any = LangChainAdapter(session)
        adapter.tool_messages({"tool_calls": [{"id": "f", "name": "find_tools", "args": {"query": select_all}}]})
        defs = [(d["function"]["name"], d["function"].get("parameters")) for d in adapter.definitions()]
        for d in adapter.definitions():
            sdk.chat_tool(convert_to_openai_tool(d))
        fmt = "openai"

        def run(name: str, args: dict[str, Any]) -> tuple[bool, str]:
            (m,) = adapter.tool_messages({"tool_calls": [{"id": "x", "name": name, "args": args}]})
            return m.content == "ok", m.content
    elif kind == "chat":
        adapter = ChatCompletionsAdapter(session)
        adapter.tool_messages(chat_turn(("f", "find_tools", {"query": select_all}))["choices"][0]["message"])
        tools = adapter.tools()
        for t in tools:
            sdk.chat_tool(t)
        defs = [(t["function"]["name"], t["function"].get("parameters")) for t in tools]
        fmt = "openai"

        def run(name: str, args: dict[str, Any]) -> tuple[bool, str]:
            (m,) = adapter.tool_messages(chat_turn(("x", name, args))["choices"][0]["message"])
            return m["content"] == "ok", m["content"]
    elif kind == "responses":
        adapter = ResponsesAdapter(session)
        adapter.output_items(responses_turn(fcall("f", "find_tools", {"query": select_all})))
        tools = adapter.tools()
        for t in tools:
            sdk.responses_tool(t)
        defs = [(t["name"], t.get("parameters")) for t in tools]
        fmt = "openai"

        def run(name: str, args: dict[str, Any]) -> tuple[bool, str]:
            (item,) = adapter.output_items(responses_turn(fcall("x", name, args)))
            return item["output"] == "ok", item["output"]
    elif kind == "anthropic":
        adapter = MessagesAdapter(session)
        adapter.tool_results(claude_turn(("f", "find_tools", {"query": select_all})))
        tools = adapter.tools()
        for t in tools:
            sdk.anthropic_tool(t)
        defs = [(t["name"], t.get("input_schema")) for t in tools]
        fmt = "anthropic"

        def run(name: str, args: dict[str, Any]) -> tuple[bool, str]:
            block = adapter.tool_results(claude_turn(("x", name, args)))["content"][0]
            return text_of(block) == "ok", text_of(block)
    else:  # gemini
        adapter = GeminiAdapter(session)
        adapter.function_responses(gemini_response(("f", "find_tools", {"query": select_all})))
        adapter.config()  # the SDK validates every declaration (unknown keys forbidden)
        defs = [(d["name"], d.get("parameters")) for d in session.tools("gemini", record=False)]
        fmt = "gemini"
        for _, params in defs:
            assert all(GEMINI_PARAM.fullmatch(n) for n in param_names(params or {})), params

        def run(name: str, args: dict[str, Any]) -> tuple[bool, str]:
            parts = adapter.function_responses(gemini_response(("x", name, args))).parts
            response = parts[0].function_response.response
            return response == {"result": "ok"}, json.dumps(response)

    for name, params in defs:
        assert TOOL_NAME[fmt].fullmatch(name), (kind, name)
        if name in session.meta_names:
            continue
        ran.clear()
        ok, text = run(name, args_for(params))
        assert ok, (kind, name, text)
        tool = session.gateway.lookup(name)
        assert tool is not None and ran == [(tool.name, _expected(tool))], (kind, name, ran)


def _check_native(kind: str, session: Session, ran: list[tuple[str, Any]]) -> None:
    select_all = select(*session.gateway.catalog.names())
    if kind == "responses-native":
        adapter: Any = ResponsesAdapter(session, native=True)
        for t in adapter.tools():
            sdk.responses_tool(t)
        (out,) = adapter.output_items(responses_turn(search_call("f", {"query": select_all})))
        sdk.responses_item(out)
        given = [(t["name"], t["parameters"]) for t in out["tools"]]

        def run(name: str, args: dict[str, Any]) -> tuple[bool, str]:
            (item,) = adapter.output_items(responses_turn(fcall("x", name, args)))
            return item["output"] == "ok", item["output"]
    else:
        adapter = MessagesAdapter(session, native=True)
        tools = adapter.tools()
        for t in tools:
            sdk.anthropic_tool(t)
        deferred = {t["name"]: t for t in tools if t.get("defer_loading")}
        answer = adapter.tool_results(claude_turn(("f", "find_tools", {"query": select_all})))
        sdk.anthropic_message(answer)
        refs = [c["tool_name"] for c in answer["content"][0]["content"] if c["type"] == "tool_reference"]
        assert set(refs) <= set(deferred), (refs, list(deferred))
        given = [(n, deferred[n]["input_schema"]) for n in refs]

        def run(name: str, args: dict[str, Any]) -> tuple[bool, str]:
            block = adapter.tool_results(claude_turn(("x", name, args)))["content"][0]
            return text_of(block) == "ok", text_of(block)

    fmt = "anthropic" if kind == "anthropic-native" else "openai"
    for name, params in given:
        assert TOOL_NAME[fmt].fullmatch(name), (kind, name)
        ran.clear()
        ok, text = run(name, args_for(params))
        assert ok, (kind, name, text)
        tool = session.gateway.lookup(name)
        assert tool is not None and ran == [(tool.name, _expected(tool))], (kind, name, ran)


ADAPTERS = ("chat", "responses", "responses-native", "anthropic", "anthropic-native", "gemini", "langchain")


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(_SPEC, min_size=1, max_size=5, unique_by=lambda s: s[0]), st.integers(min_value=0, max_value=2))
def test_every_name_given_is_valid_and_callable_in_every_adapter(specs: list[Any], twins: int) -> None:
    """For any catalog (names and parameter names a provider rejects, unicode, names that
    collide once shortened), in every adapter: each tool and parameter name in what is
    sent matches the provider's documented rule, the SDK's request types accept it, and
    each tool the model is given runs with the arguments it would build from what it was
    given, reaching the handler under the schema's own names."""
    cat, ran = _catalog(specs, twins)
    if not len(cat):
        return
    for kind in ADAPTERS:
        session = Session(Gateway(cat), threshold=1)
        if kind.endswith("native"):
            _check_native(kind, session, ran)
        else:
            _check_portable(kind, session, ran)
