"""Anthropic Messages adapter: portable mode, or native deferral with ``tool_reference``.

Portable mode sends ``find_tools`` plus pinned tools; found tools join ``tools`` on the
next request, appended. Native mode declares every deferred tool with
``defer_loading: true`` (the API keeps them out of the model's context) and answers a
``find_tools`` call with ``tool_reference`` blocks, which the API expands into the full
definitions. The ``tools`` list is then identical on every request.

A ``tool_reference`` names the wire name its ``defer_loading`` definition carries, and
only tools the session will run (a tool the reveal cap left out is not referenced). Native
mode needs ``anthropic>=0.80``, the first release whose ``messages.create`` types carry
``defer_loading`` and ``tool_reference`` outside the beta namespace (before it they were
beta-only, behind the ``advanced-tool-use-2025-11-20`` header); an older SDK is refused up
front.

Hosted mode (``native="hosted"``, and what ``native="auto"`` picks for models with tool
search) sends the same ``defer_loading`` definitions with Anthropic's own search tool
(``tool_search_tool_bm25_20251119``, or ``..._regex_...`` with ``hosted_search="regex"``)
instead of ``find_tools``: the API searches and loads, the model then calls a tool by name,
and toolscout still runs that call (visibility, approval, audit). Only visible tools are
ever sent, so a hidden tool cannot be found by the provider either.

Programmatic tool calling (``programmatic=True``) lets Claude's own code-execution tool call
the session's tools from the program it writes, so intermediate results stay in Anthropic's
container instead of the model's context: the list starts with the code-execution tool,
catalog tools carry ``allowed_callers`` naming it (``find_tools`` also stays callable
directly, so the model can load schemas), and a ``tool_use`` the program made (its
``caller`` names the code-execution tool) is answered with a ``tool_result`` like any
other; :meth:`MessagesAdapter.run` sends the response's ``container`` back on the next
request so the program continues where it waited.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._sync import run_sync
from ..errors import ConfigError
from ..naming import wire_name
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

__all__ = ["MessagesAdapter"]

HOSTED_SEARCH = {
    "bm25": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    "regex": {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
}
"""Anthropic's server-side tool search tools (``hosted_search=``)."""

CODE_EXECUTION = "code_execution_20260120"
"""The code-execution tool version programmatic calls name in ``allowed_callers``."""

NATIVE_MIN_SDK = (0, 80)
"""The first ``anthropic`` release typing ``defer_loading`` and ``tool_reference`` in
``messages.create`` (they were beta-only before)."""


def native_model(model: str) -> bool:
    """Whether ``native="auto"`` uses tool search with this model: Claude 4.5 and later
    (``claude-sonnet-4-5``, ``claude-opus-4-6``, ``claude-sonnet-5``...). Conservative;
    pass ``native_models=`` to decide otherwise."""
    version = model_version(model, r"claude-(?:opus|sonnet|haiku)-(\d+)(?:-(\d{1,2})(?!\d))?")
    return version is not None and version >= (4, 5)


class MessagesAdapter:
    """``client.messages.create(..., tools=adapter.tools())`` then
    ``messages.append(adapter.tool_results(response))``.

    ``native=True``: deferral with ``tool_reference``, searched by toolscout.
    ``native="hosted"``: deferral searched by Anthropic's own tool search
    (``hosted_search``: ``"bm25"`` or ``"regex"``). ``native="auto"`` picks hosted when
    the SDK and the model support it (see :func:`native_model`; ``native_models`` replaces
    that rule) and ``find_tools`` otherwise.
    """

    format = "anthropic"

    def __init__(
        self,
        session: Session,
        *,
        native: bool | str = False,
        model: str | None = None,
        native_models: Callable[[str], bool] | None = None,
        hosted_search: str = "bm25",
        programmatic: bool = False,
    ) -> None:
        self._native = NativeChoice(
            native, "anthropic", NATIVE_MIN_SDK, "MessagesAdapter(native=True)", "anthropic",
            native_models or native_model, model,
        )
        if hosted_search not in HOSTED_SEARCH:
            raise ConfigError(f"hosted_search must be one of {', '.join(HOSTED_SEARCH)}, not {hosted_search!r}")
        self.hosted_search = hosted_search
        self.session = session
        self.programmatic = programmatic
        """Anthropic's programmatic tool calling: tools are called from Claude's code."""
        self._deferred_key: tuple[int, int] | None = None
        self._deferred: list[dict[str, Any]] = []

    @property
    def native(self) -> bool:
        """Native deferral (decided at the first use for ``native="auto"``)."""
        return self._native.decide()

    @property
    def mode(self) -> str:
        """``portable``, ``client`` (``tool_reference``, toolscout searches) or ``hosted``."""
        return self._native.mode

    def tools(self) -> list[dict[str, Any]]:
        listed = self._tools()
        if not self.programmatic:
            return listed
        return [{"type": CODE_EXECUTION, "name": "code_execution"}, *(self._callable_from_code(d) for d in listed)]

    def _callable_from_code(self, definition: dict[str, Any]) -> dict[str, Any]:
        """``definition`` callable from Claude's code (a copy: the session's cached
        definitions are shared between turns). Meta-tools stay callable directly too."""
        direct = definition.get("name") in self.session.meta_names or "type" in definition  # a server tool
        return {**definition, "allowed_callers": ["direct", CODE_EXECUTION] if direct else [CODE_EXECUTION]}

    def _tools(self) -> list[dict[str, Any]]:
        session = self.session
        if not self.native or not session.deferring:
            return session.tools(self.format)
        if self.mode == "hosted":
            return self._hosted_tools()
        head = session.tools(self.format, record=False, meta=True)
        visible = len(session.meta_tools(self.format)) + len(session.pinned)
        sent = head[:visible]
        # What the model holds: meta-tools, pinned tools, and every tool a tool_reference
        # loaded earlier in the conversation (evicted from the reveal set or not).
        held = dict.fromkeys([*session.loaded, *session.revealed])
        record_holding(session, self.format, sent, session.tool_names()[:visible], held)
        return sent + self._deferred_defs()

    def _hosted_tools(self) -> list[dict[str, Any]]:
        """Anthropic's search tool, the pinned tools, then every deferred tool (the API keeps
        those out of the model's context until its search loads them)."""
        session = self.session
        search = dict(HOSTED_SEARCH[self.hosted_search])
        code = code_execute(session, self.format)
        pinned = [*code, *rendered(session, session.pinned, self.format)]
        names = [search["name"], *(["execute"] if code else []), *session.pinned]
        record_holding(session, self.format, [search, *pinned], names, session.loaded)
        return [search, *pinned, *self._deferred_defs()]

    def _deferred_defs(self) -> list[dict[str, Any]]:
        """Every deferred tool, flagged ``defer_loading`` (cached per catalog generation)."""
        key = (self.session.gateway.catalog.generation, len(self.session.pinned))
        if key != self._deferred_key:
            self._deferred = [
                {**self.session.render(t.name, self.format), "defer_loading": True}  # type: ignore[dict-item]
                for t in self.session.deferred()
            ]
            self._deferred_key = key
        return self._deferred

    async def atool_results(self, message: Any) -> dict[str, Any] | None:
        """The ``user`` message answering every ``tool_use`` block of ``message``
        (``None`` when it called no tool)."""
        content = field(message, "content") or []
        calls = [
            Call(field(b, "id") or f"toolu_{i}", field(b, "name", ""), field(b, "input"))
            for i, b in enumerate(content)
            if field(b, "type") == "tool_use"
        ]
        if not calls:
            return None
        if self.mode == "hosted":  # what the provider's search loaded is what the model may call
            mark_called_loaded(self.session, [*_referenced(content), *(c.name for c in calls)])
        blocks = [self._result(call, outcome) for call, outcome in await answer(self.session, calls, self.format)]
        return {"role": "user", "content": blocks}

    def tool_results(self, message: Any) -> dict[str, Any] | None:
        return run_sync(self.atool_results(message))

    def _result(self, call: Call, outcome: ToolOutcome) -> dict[str, Any]:
        if self.mode == "hosted":  # no find_tools to answer with tool_reference blocks
            return _text_result(call, outcome)
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call.id}
        session = self.session
        if self.native and outcome.is_find and outcome.ok and session.deferring:
            # Only tools the session will run, each by the wire name its defer_loading
            # definition carries (pinned ones are loaded already).
            pinned = set(session.pinned)
            refs = [r.tool_name for r in outcome.references if session.is_callable(r.tool_name) and r.tool_name not in pinned]
            if refs:
                session.mark_loaded(*refs)
                block["content"] = [{"type": "tool_reference", "tool_name": wire_name(n, self.format)} for n in refs]
                return block
        return _text_result(call, outcome)

    def run(
        self,
        client: Any,
        *,
        model: str,
        messages: list[Any],
        max_tokens: int = 1024,
        max_turns: int = 10,
        preselect: int = 0,
        **create: Any,
    ) -> Any:
        """A complete loop; ``messages`` is extended in place; returns the last message."""
        require("anthropic", "The Anthropic adapter", "anthropic")
        self._native.decide(model)
        preselect_for(self.session, messages, preselect)
        response = None
        for _ in range(max_turns):
            tools = self.tools()
            extra = {"tools": tools} if tools else {}
            container = field(field(response, "container"), "id") if self.programmatic and response is not None else None
            if container:  # the program that made the calls waits in this container
                extra["container"] = container
            response = client.messages.create(model=model, max_tokens=max_tokens, messages=messages, **extra, **create)
            messages.append({"role": "assistant", "content": [as_dict(b) for b in response.content]})
            results = self.tool_results(response)
            if results is None:
                break
            messages.append(results)
        return response


def _text_result(call: Call, outcome: ToolOutcome) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call.id}
    block["content"] = [{"type": "text", "text": outcome.text() or "(no output)"}]
    if not outcome.ok:
        block["is_error"] = True
    return block


def _referenced(content: list[Any]) -> list[str]:
    """Tool names in the ``tool_reference`` blocks of the provider's own search results."""
    names: list[str] = []
    for block in content:
        if field(block, "type") != "tool_search_tool_result":
            continue
        inner = field(block, "content")
        for ref in field(inner, "tool_references") or []:
            name = field(ref, "tool_name")
            if isinstance(name, str):
                names.append(name)
    return names
