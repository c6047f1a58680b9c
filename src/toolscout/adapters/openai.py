"""OpenAI adapters: Chat Completions, and Responses (portable or native ``tool_search``).

Portable mode sends ``find_tools`` as a function; found tools join the ``tools`` list on
the next request, appended after the ones already there. Native mode (Responses only)
declares a client-executed ``tool_search`` tool: the model emits ``tool_search_call``
items, and the adapter answers with ``tool_search_output`` items carrying the found
tools' definitions, which the API then keeps loaded for the rest of the conversation.

Hosted mode (``native="hosted"``, and what ``native="auto"`` picks for models that have it)
declares OpenAI's own server-executed ``tool_search`` over the same ``defer_loading``
definitions, optionally grouped into ``namespace`` tools (``namespaces="server"`` or
``"category"``, each namespace deferred or not): OpenAI searches, toolscout still runs
every call.

Every name the model reads is the wire name of the format sent (``openai`` or
``openai-responses``), and every such name is callable. Native mode needs an SDK whose
request types know ``tool_search`` (``openai>=2.25``); an older one is refused up front.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from .._sync import run_sync
from ..errors import ConfigError
from ..namespaces import BY, group
from ..session import Session, ToolOutcome
from ._common import (
    Call,
    NativeChoice,
    answer,
    as_dict,
    code_execute,
    field,
    mark_called_loaded,
    model_version,
    record_holding,
    rendered,
    require,
)
from ._common import preselect as preselect_for

__all__ = ["ChatCompletionsAdapter", "ResponsesAdapter"]

NATIVE_MIN_SDK = (2, 25)
"""The first ``openai`` release whose types carry ``tool_search``, ``tool_search_call``,
``tool_search_output`` and ``defer_loading``."""


def native_model(model: str) -> bool:
    """Whether ``native="auto"`` uses ``tool_search`` with this model: GPT-5.4 and later
    (seed 003: "for GPT-5.4+ you may prefer OpenAI Tool Search"). Pass ``native_models=``
    to decide otherwise."""
    version = model_version(model, r"(?:^|/)gpt-(\d+)(?:\.(\d+))?")
    return version is not None and version >= (5, 4)


def _require_sdk() -> Any:
    return require("openai", "The OpenAI adapter", "openai")


class ChatCompletionsAdapter:
    """``client.chat.completions.create(..., tools=adapter.tools())`` then
    ``messages += adapter.tool_messages(message)``."""

    format = "openai"

    def __init__(self, session: Session) -> None:
        self.session = session

    def tools(self) -> list[dict[str, Any]]:
        return self.session.tools(self.format)

    async def atool_messages(self, message: Any) -> list[dict[str, Any]]:
        """One ``role: tool`` message per tool call in the assistant ``message``."""
        calls = []
        for i, tc in enumerate(field(message, "tool_calls") or []):
            fn = field(tc, "function")
            if fn is None:  # a custom (free-text) tool call: still answer it
                custom = field(tc, "custom")
                calls.append(Call(field(tc, "id") or f"call_{i}", field(custom, "name", ""), field(custom, "input")))
            else:
                calls.append(Call(field(tc, "id") or f"call_{i}", field(fn, "name", ""), field(fn, "arguments")))
        return [
            {"role": "tool", "tool_call_id": call.id, "content": outcome.text()}
            for call, outcome in await answer(self.session, calls, self.format)
        ]

    def tool_messages(self, message: Any) -> list[dict[str, Any]]:
        return run_sync(self.atool_messages(message))

    def run(
        self, client: Any, *, model: str, messages: list[Any], max_turns: int = 10, preselect: int = 0, **create: Any
    ) -> Any:
        """A complete loop: request, answer tool calls, repeat until the model stops calling
        tools (or ``max_turns``). ``messages`` is extended in place; returns the last
        completion."""
        _require_sdk()
        preselect_for(self.session, messages, preselect)
        response = None
        for _ in range(max_turns):
            tools = self.tools()
            extra = {"tools": tools} if tools else {}
            response = client.chat.completions.create(model=model, messages=messages, **extra, **create)
            message = response.choices[0].message
            messages.append(as_dict(message))
            if not field(message, "tool_calls"):
                break
            messages.extend(self.tool_messages(message))
        return response


class ResponsesAdapter:
    """``client.responses.create(input=items, tools=adapter.tools())`` then
    ``items += adapter.output_items(response)``.

    ``native=True`` uses the API's client-executed ``tool_search`` (deferred tools are
    loaded through ``tool_search_output`` items instead of the ``tools`` list).
    ``native="hosted"`` uses OpenAI's own server-executed ``tool_search`` instead (OpenAI
    ranks; toolscout runs the calls). ``native="auto"`` uses hosted search when the SDK and
    the model support it (see :func:`native_model`; ``native_models`` replaces that rule),
    ``find_tools`` otherwise. ``namespaces="server"`` (or ``"category"``) groups the
    deferred tools into ``namespace`` tools in hosted mode; ``namespace_defer`` maps a
    namespace to ``False`` to send its tools loaded from the first turn.
    """

    format = "openai-responses"

    def __init__(
        self,
        session: Session,
        *,
        native: bool | str = False,
        model: str | None = None,
        native_models: Callable[[str], bool] | None = None,
        namespaces: str | None = None,
        namespace_defer: Mapping[str, bool] | None = None,
    ) -> None:
        self._native = NativeChoice(
            native, "openai", NATIVE_MIN_SDK, "ResponsesAdapter(native=True)", "openai",
            native_models or native_model, model,
        )
        if namespaces is not None and namespaces not in BY:
            raise ConfigError(f"namespaces must be one of {', '.join(BY)} or None, not {namespaces!r}")
        self.namespaces = namespaces
        self.namespace_defer = dict(namespace_defer or {})
        self.session = session

    @property
    def native(self) -> bool:
        """Native ``tool_search`` (decided at the first use for ``native="auto"``)."""
        return self._native.decide()

    @property
    def mode(self) -> str:
        """``portable``, ``client`` (toolscout searches) or ``hosted`` (OpenAI searches)."""
        return self._native.mode

    def _search_tool(self) -> dict[str, Any]:
        find = self.session.meta_tools(self.format)[0]
        return {
            "type": "tool_search",
            "execution": "client",
            "description": find["description"],
            "parameters": find["parameters"],
        }

    def tools(self) -> list[dict[str, Any]]:
        session = self.session
        if not self.native or not session.deferring:
            return session.tools(self.format)
        if self.mode == "hosted":
            return self._hosted_tools()
        search = self._search_tool()
        code = code_execute(session, self.format)
        sent = [search, *code, *rendered(session, session.pinned, self.format)]
        # What the model holds in context: the search tool, pinned tools, and every tool a
        # tool_search_output loaded earlier in the conversation.
        held = dict.fromkeys([*session.loaded, *session.revealed])
        record_holding(session, self.format, sent, ["tool_search", *(["execute"] if code else []), *session.pinned], held)
        return sent

    def _hosted_tools(self) -> list[dict[str, Any]]:
        """OpenAI's search tool, the pinned tools, then every deferred tool (flat, or in
        namespaces). A namespace set not to defer is sent loaded, and its tools run."""
        session = self.session
        search: dict[str, Any] = {"type": "tool_search"}
        code = code_execute(session, self.format)
        pinned = [*code, *rendered(session, session.pinned, self.format)]
        deferred = session.deferred()
        body: list[dict[str, Any]] = []
        upfront: list[str] = []
        if self.namespaces is None:
            body = [{**session.render(t.name, self.format), "defer_loading": True} for t in deferred]  # type: ignore[dict-item]
        else:
            for ns in group(deferred, self.namespaces):
                defer = self.namespace_defer.get(ns.name, True)
                members = [{**session.render(t.name, self.format), "defer_loading": defer} for t in ns.tools]  # type: ignore[dict-item]
                body.append({"type": "namespace", "name": ns.name, "description": ns.description, "tools": members})
                if not defer:
                    upfront.extend(t.name for t in ns.tools)
        if upfront:
            session.mark_loaded(*upfront)
        names = ["tool_search", *(["execute"] if code else []), *session.pinned]
        record_holding(session, self.format, [search, *pinned], names, session.loaded)
        return [search, *pinned, *body]

    async def aoutput_items(self, response: Any) -> list[dict[str, Any]]:
        """The input items answering every call in ``response.output``."""
        calls: list[Call] = []
        kinds: dict[str, str] = {}
        for i, item in enumerate(field(response, "output") or []):
            kind = field(item, "type")
            call_id = field(item, "call_id") or field(item, "id") or f"call_{i}"
            if kind == "function_call":
                calls.append(Call(call_id, field(item, "name", ""), field(item, "arguments")))
            elif kind == "custom_tool_call":
                calls.append(Call(call_id, field(item, "name", ""), field(item, "input")))
            elif kind == "tool_search_call" and field(item, "execution") == "client":
                calls.append(Call(call_id, self.session.gateway.find_name, field(item, "arguments")))
            else:
                continue
            kinds.setdefault(call_id, kind)
        if self.mode == "hosted":  # the provider's search loaded what the model calls
            mark_called_loaded(self.session, [c.name for c in calls if kinds.get(c.id) != "tool_search_call"])
        out: list[dict[str, Any]] = []
        for call, outcome in await answer(self.session, calls, self.format):
            kind = kinds[call.id]
            if kind == "tool_search_call":
                out.append(self._search_output(call.id, outcome))
            else:
                out_type = "custom_tool_call_output" if kind == "custom_tool_call" else "function_call_output"
                out.append({"type": out_type, "call_id": call.id, "output": outcome.text()})
        return out

    def output_items(self, response: Any) -> list[dict[str, Any]]:
        return run_sync(self.aoutput_items(response))

    def _search_output(self, call_id: str, outcome: ToolOutcome) -> dict[str, Any]:
        """Load the found tools the session will run (not pinned ones: they are in
        ``tools`` already). Each keeps ``defer_loading: true``, as the provider's own
        client-executed example does: a loaded tool is still a deferred one."""
        session = self.session
        pinned = set(session.pinned)
        names = [r.tool_name for r in outcome.references if session.is_callable(r.tool_name) and r.tool_name not in pinned]
        session.mark_loaded(*names)
        defs = [session.render(n, self.format) for n in names]
        return {
            "type": "tool_search_output",
            "call_id": call_id,
            "execution": "client",
            "status": "completed",
            "tools": [{**d, "defer_loading": True} for d in defs if d is not None],
        }

    def run(
        self, client: Any, *, model: str, input: list[Any], max_turns: int = 10, preselect: int = 0, **create: Any
    ) -> Any:
        """A complete stateless loop (the whole ``input`` is sent each turn); ``input`` is
        extended in place with the output items and their answers."""
        _require_sdk()
        self._native.decide(model)
        preselect_for(self.session, input, preselect)
        response = None
        for _ in range(max_turns):
            tools = self.tools()
            extra = {"tools": tools} if tools else {}
            response = client.responses.create(model=model, input=input, **extra, **create)
            input.extend(as_dict(item) for item in response.output)
            answers = self.output_items(response)
            if not answers:
                break
            input.extend(answers)
        return response

