"""LangChain / LangGraph adapter: the session's tools bound per step, as definitions or tools.

Bind the tools at every step with ``adapter.bind(model)``: the list grows as
``find_tools`` reveals tools, in append-only order. It binds the OpenAI-format definition
dicts, not tool objects, because ``bind_tools`` passes a dict through unchanged but
rebuilds a ``BaseTool`` from its schema alone, dropping the ``strict: true`` toolscout set
on schemas that qualify. ``adapter.tools()`` gives the same tools as ``StructuredTool``s
for a LangGraph ``ToolNode``. Answer an ``AIMessage`` with ``adapter.tool_messages(ai)``,
which handles every tool call (also unknown names and ``invalid_tool_calls`` with broken
JSON) and returns one ``ToolMessage`` per call id.
"""

from __future__ import annotations

from typing import Any

from .._sync import run_sync
from ..session import Session, ToolOutcome
from ._common import Call, answer, field, require
from ._common import preselect as preselect_for

__all__ = ["LangChainAdapter"]


def _lc(module: str) -> Any:
    return require(module, "The LangChain adapter", "langchain")


class LangChainAdapter:
    format = "openai"
    """Definitions are built (and counted by the ledger) in OpenAI's function shape,
    which is what LangChain's ``bind_tools`` sends to most chat models."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._cache: dict[str, tuple[int, Any]] = {}

    def definitions(self) -> list[dict[str, Any]]:
        """This step's tools as OpenAI-format dicts for ``model.bind_tools``: names are
        OpenAI wire names and ``strict`` is kept (cached dicts: do not mutate)."""
        return self.session.tools(self.format)

    def bind(self, model: Any, **kwargs: Any) -> Any:
        """``model`` with this step's :meth:`definitions` bound (``model`` itself when the
        list is empty); ``kwargs`` go to ``bind_tools``."""
        definitions = self.definitions()
        return model.bind_tools(definitions, **kwargs) if definitions else model

    def tools(self, *, record: bool = True) -> list[Any]:
        """This step's tools as ``StructuredTool`` objects (cached while unchanged), for a
        ``ToolNode``; bind with :meth:`bind` (a ``BaseTool`` loses ``strict`` in
        ``bind_tools``). ``record=False`` when :meth:`bind` already recorded this step."""
        structured = _lc("langchain_core.tools").StructuredTool
        out = []
        for definition in self.session.tools(self.format, record=record):
            fn = definition["function"]
            name = fn["name"]
            cached = self._cache.get(name)
            if cached is None or cached[0] != id(definition):
                tool = structured.from_function(
                    func=self._sync_runner(name),
                    coroutine=self._async_runner(name),
                    name=name,
                    description=fn.get("description") or name,
                    args_schema=fn.get("parameters") or {"type": "object", "properties": {}},
                    infer_schema=False,
                )
                cached = (id(definition), tool)
                self._cache[name] = cached
            out.append(cached[1])
        return out

    def _sync_runner(self, name: str) -> Any:
        def run(**kwargs: Any) -> str:
            return self.session.handle(name, kwargs).text()

        return run

    def _async_runner(self, name: str) -> Any:
        async def arun(**kwargs: Any) -> str:
            return (await self.session.ahandle(name, kwargs)).text()

        return arun

    async def atool_messages(self, message: Any) -> list[Any]:
        """One ``ToolMessage`` per tool call (valid or not) of the ``AIMessage``."""
        tool_message = _lc("langchain_core.messages").ToolMessage
        calls = [
            Call(field(tc, "id") or f"call_{i}", field(tc, "name") or "", field(tc, "args"))
            for i, tc in enumerate(field(message, "tool_calls") or [])
        ]
        calls += [
            Call(field(tc, "id") or f"invalid_{i}", field(tc, "name") or "", field(tc, "args"))
            for i, tc in enumerate(field(message, "invalid_tool_calls") or [])
        ]
        return [
            tool_message(
                content=_content(outcome),
                tool_call_id=call.id,
                name=call.name or None,
                status="success" if outcome.ok else "error",
            )
            for call, outcome in await answer(self.session, calls, self.format)
        ]

    def tool_messages(self, message: Any) -> list[Any]:
        return run_sync(self.atool_messages(message))

    def run(self, model: Any, messages: list[Any], *, max_turns: int = 10, preselect: int = 0) -> Any:
        """A complete loop: bind this step's tools, invoke, answer; ``messages`` grows in
        place; returns the last ``AIMessage``."""
        ai = None
        preselect_for(self.session, messages, preselect)
        for _ in range(max_turns):
            ai = self.bind(model).invoke(messages)
            messages.append(ai)
            if not (field(ai, "tool_calls") or field(ai, "invalid_tool_calls")):
                break
            messages.extend(self.tool_messages(ai))
        return ai


def _content(outcome: ToolOutcome) -> str:
    return outcome.text() or "(no output)"
