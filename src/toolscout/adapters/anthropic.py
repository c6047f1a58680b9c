"""Anthropic Messages adapter: portable mode, or native deferral with ``tool_reference``.

Portable mode sends ``find_tools`` plus pinned tools; found tools join ``tools`` on the
next request, appended. Native mode declares every deferred tool with
``defer_loading: true`` (the API keeps them out of the model's context) and answers a
``find_tools`` call with ``tool_reference`` blocks, which the API expands into the full
definitions. The ``tools`` list is then identical on every request.
"""

from __future__ import annotations

from typing import Any

from .._sync import run_sync
from ..session import Session, ToolOutcome
from ._common import Call, answer, as_dict, field, require

__all__ = ["MessagesAdapter"]


class MessagesAdapter:
    """``client.messages.create(..., tools=adapter.tools())`` then
    ``messages.append(adapter.tool_results(response))``."""

    format = "anthropic"

    def __init__(self, session: Session, *, native: bool = False) -> None:
        self.session = session
        self.native = native
        self._deferred_key: tuple[int, int] | None = None
        self._deferred: list[dict[str, Any]] = []

    def tools(self) -> list[dict[str, Any]]:
        session = self.session
        if not self.native or not session.deferring:
            return session.tools(self.format)
        head = session.tools(self.format, record=False, meta=True)
        visible = len(session.meta_tools(self.format)) + len(session.pinned)
        sent = head[:visible]
        loaded = head[visible:]
        session.record_turn(
            self.format,
            sent + loaded,
            [*session.tool_names()],
        )
        return sent + self._deferred_defs()

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
        calls = [
            Call(field(b, "id") or f"toolu_{i}", field(b, "name", ""), field(b, "input"))
            for i, b in enumerate(field(message, "content") or [])
            if field(b, "type") == "tool_use"
        ]
        if not calls:
            return None
        blocks = [self._result(call, outcome) for call, outcome in await answer(self.session, calls)]
        return {"role": "user", "content": blocks}

    def tool_results(self, message: Any) -> dict[str, Any] | None:
        return run_sync(self.atool_results(message))

    def _result(self, call: Call, outcome: ToolOutcome) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call.id}
        refs = [r.tool_name for r in outcome.references if r.tool_name not in self.session.pinned]
        if self.native and outcome.is_find and outcome.ok and refs and self.session.deferring:
            block["content"] = [{"type": "tool_reference", "tool_name": n} for n in refs]
            return block
        block["content"] = [{"type": "text", "text": outcome.text() or "(no output)"}]
        if not outcome.ok:
            block["is_error"] = True
        return block

    def run(
        self, client: Any, *, model: str, messages: list[Any], max_tokens: int = 1024, max_turns: int = 10, **create: Any
    ) -> Any:
        """A complete loop; ``messages`` is extended in place; returns the last message."""
        require("anthropic", "The Anthropic adapter", "anthropic")
        response = None
        for _ in range(max_turns):
            tools = self.tools()
            extra = {"tools": tools} if tools else {}
            response = client.messages.create(model=model, max_tokens=max_tokens, messages=messages, **extra, **create)
            messages.append({"role": "assistant", "content": [as_dict(b) for b in response.content]})
            results = self.tool_results(response)
            if results is None:
                break
            messages.append(results)
        return response
