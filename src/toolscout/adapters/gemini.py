"""Google Gemini adapter (``google-genai``): function declarations and function responses.

Gemini has no native deferral, so this is the portable path: ``find_tools`` plus pinned
tools are declared, found tools are appended to the declarations on the next request.
Automatic function calling is switched off: the session executes, not the SDK.

Names Gemini rejects are renamed on the way out, tools and parameters alike (see
:mod:`toolscout.naming`); a call's arguments are mapped back to the schema's own names
before the session validates them. ``run()`` stops cleanly when a turn brings no content
(a blocked candidate, finish reason ``SAFETY``): :attr:`GeminiAdapter.stop_reason` says why.
"""

from __future__ import annotations

import logging
from typing import Any

from .._sync import run_sync
from ..formats.gemini import gemini_arguments, gemini_pointer
from ..session import Session, ToolOutcome
from ._common import Call, answer, field, require
from ._common import preselect as preselect_for

__all__ = ["GeminiAdapter"]

log = logging.getLogger("toolscout.adapters.gemini")


def _types() -> Any:
    return require("google.genai.types", "The Gemini adapter", "gemini")


class GeminiAdapter:
    """``client.models.generate_content(..., config=adapter.config())`` then
    ``contents += [response.candidates[0].content, adapter.function_responses(response)]``."""

    format = "gemini"

    def __init__(self, session: Session) -> None:
        self.session = session
        self._declarations: dict[int, Any] = {}
        self.stop_reason: str | None = None
        """Why the last :meth:`run` stopped early (a turn without content, ``max_turns``);
        None when the model simply answered."""

    def tools(self) -> list[Any]:
        """One ``types.Tool`` holding every declaration for the next request (or none)."""
        types = _types()
        decls = []
        for d in self.session.tools(self.format):
            decl = self._declarations.get(id(d))
            if decl is None or decl[0] is not d:
                decl = (d, types.FunctionDeclaration.model_validate(d))
                self._declarations[id(d)] = decl
            decls.append(decl[1])
        return [types.Tool(function_declarations=decls)] if decls else []

    def config(self, **options: Any) -> Any:
        """A ``GenerateContentConfig`` with this turn's tools and automatic calling off."""
        types = _types()
        return types.GenerateContentConfig(
            tools=self.tools(),
            automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
            **options,
        )

    async def afunction_responses(self, response: Any) -> Any:
        """A ``user`` ``Content`` answering every function call (``None`` if there is none)."""
        types = _types()
        parts = []
        for candidate in (field(response, "candidates") or [])[:1]:
            parts = field(field(candidate, "content"), "parts") or []
        calls = [
            Call(
                field(fc, "id") or f"{field(fc, 'name', '')}#{i}",
                field(fc, "name", ""),
                self._arguments(field(fc, "name", ""), field(fc, "args")),
            )
            for i, fc in enumerate(field(p, "function_call") for p in parts)
            if fc is not None
        ]
        if not calls:
            return None
        answered = await answer(self.session, calls, self.format)
        out = [self._part(types, call, self._as_sent(call, outcome)) for call, outcome in answered]
        return types.Content(role="user", parts=out)

    def function_responses(self, response: Any) -> Any:
        return run_sync(self.afunction_responses(response))

    def _arguments(self, name: Any, args: Any) -> Any:
        """``args`` under the schema's own property names (Gemini was sent renamed ones)."""
        if not isinstance(name, str) or not isinstance(args, dict):
            return args
        session = self.session
        if name in session.meta_names:
            inner = args.get("arguments")
            if name == "call_tool" and isinstance(args.get("name"), str) and isinstance(inner, dict):
                tool = session.gateway.lookup(args["name"])
                if tool is not None:
                    return {**args, "arguments": gemini_arguments(tool.input_schema, inner)}
            return args
        tool = session.gateway.lookup(name)
        return gemini_arguments(tool.input_schema, args) if tool is not None else args

    def _as_sent(self, call: Call, outcome: ToolOutcome) -> ToolOutcome:
        """An ``invalid_arguments`` error pointing at the parameter names Gemini was sent
        (the session validated against the schema's own names)."""
        info = outcome.error
        errors = info.details.get("errors") if info is not None and info.code == "invalid_arguments" else None
        target = call.arguments.get("name") if call.name == "call_tool" and isinstance(call.arguments, dict) else call.name
        tool = self.session.gateway.lookup(target) if isinstance(target, str) and errors else None
        if info is None or tool is None or not isinstance(errors, list):
            return outcome
        message, sent_errors = info.message, []
        for error in errors:
            pointer, text = (error.get("pointer"), error.get("message")) if isinstance(error, dict) else (None, None)
            if not isinstance(pointer, str) or not isinstance(text, str):
                sent_errors.append(error)
                continue
            sent = gemini_pointer(tool.input_schema, pointer)
            if sent != pointer:
                own, as_sent = (p.rsplit("/", 1)[-1].replace("~1", "/").replace("~0", "~") for p in (pointer, sent))
                renamed = text.replace(f"'{own}'", f"'{as_sent}'")
                message = message.replace(f"{pointer}: {text}", f"{sent}: {renamed}")
                error = {**error, "pointer": sent, "message": renamed}
            sent_errors.append(error)
        outcome.error = info.model_copy(update={"message": message, "details": {**info.details, "errors": sent_errors}})
        return outcome

    @staticmethod
    def _part(types: Any, call: Call, outcome: ToolOutcome) -> Any:
        if outcome.ok:
            value = outcome.result.structured if outcome.result and outcome.result.structured is not None else None
            payload: dict[str, Any] = {"result": value if value is not None else outcome.text()}
        else:
            payload = {"error": outcome.error.to_dict() if outcome.error else outcome.text()}
        call_id = None if call.id.startswith(f"{call.name}#") else call.id
        return types.Part(function_response=types.FunctionResponse(id=call_id, name=call.name, response=payload))

    def run(
        self, client: Any, *, model: str, contents: list[Any], max_turns: int = 10, preselect: int = 0, **options: Any
    ) -> Any:
        """A complete loop; ``contents`` is extended in place; returns the last response.

        A turn without content (no candidate, or one blocked for safety) ends the loop
        without touching ``contents``; :attr:`stop_reason` says why.
        """
        response = None
        self.stop_reason = None
        preselect_for(self.session, contents, preselect)
        for _ in range(max_turns):
            response = client.models.generate_content(model=model, contents=contents, config=self.config(**options))
            candidates = field(response, "candidates") or []
            content = field(candidates[0], "content") if candidates else None
            if content is None or not field(content, "parts"):
                self.stop_reason = _why_empty(response, candidates[0] if candidates else None)
                log.warning("Gemini turn without content, stopping: %s", self.stop_reason)
                break
            contents.append(content)
            answers = self.function_responses(response)
            if answers is None:
                break
            contents.append(answers)
        else:
            self.stop_reason = f"max_turns ({max_turns}) reached while the model was still calling tools"
        return response


def _why_empty(response: Any, candidate: Any) -> str:
    """A readable reason for a turn that brought no content."""
    if candidate is None:
        block = field(field(response, "prompt_feedback"), "block_reason")
        return f"no candidate (prompt blocked: {_label(block)})" if block else "no candidate"
    reason = _label(field(candidate, "finish_reason")) or "unknown"
    message = field(candidate, "finish_message")
    return f"candidate has no content (finish reason {reason}{': ' + message if message else ''})"


def _label(value: Any) -> str:
    return str(getattr(value, "value", value) or "")
