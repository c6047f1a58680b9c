"""Google Gemini adapter (``google-genai``): function declarations and function responses.

Gemini has no native deferral, so this is the portable path: ``find_tools`` plus pinned
tools are declared, found tools are appended to the declarations on the next request.
Automatic function calling is switched off: the session executes, not the SDK.
"""

from __future__ import annotations

from typing import Any

from .._sync import run_sync
from ..session import Session, ToolOutcome
from ._common import Call, answer, field, require

__all__ = ["GeminiAdapter"]


def _types() -> Any:
    return require("google.genai.types", "The Gemini adapter", "gemini")


class GeminiAdapter:
    """``client.models.generate_content(..., config=adapter.config())`` then
    ``contents += [response.candidates[0].content, adapter.function_responses(response)]``."""

    format = "gemini"

    def __init__(self, session: Session) -> None:
        self.session = session
        self._declarations: dict[int, Any] = {}

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
            Call(field(fc, "id") or f"{field(fc, 'name', '')}#{i}", field(fc, "name", ""), field(fc, "args"))
            for i, fc in enumerate(field(p, "function_call") for p in parts)
            if fc is not None
        ]
        if not calls:
            return None
        out = [self._part(types, call, outcome) for call, outcome in await answer(self.session, calls)]
        return types.Content(role="user", parts=out)

    def function_responses(self, response: Any) -> Any:
        return run_sync(self.afunction_responses(response))

    @staticmethod
    def _part(types: Any, call: Call, outcome: ToolOutcome) -> Any:
        if outcome.ok:
            value = outcome.result.structured if outcome.result and outcome.result.structured is not None else None
            payload: dict[str, Any] = {"result": value if value is not None else outcome.text()}
        else:
            payload = {"error": outcome.error.to_dict() if outcome.error else outcome.text()}
        call_id = None if call.id.startswith(f"{call.name}#") else call.id
        return types.Part(function_response=types.FunctionResponse(id=call_id, name=call.name, response=payload))

    def run(self, client: Any, *, model: str, contents: list[Any], max_turns: int = 10, **options: Any) -> Any:
        """A complete loop; ``contents`` is extended in place; returns the last response."""
        response = None
        for _ in range(max_turns):
            response = client.models.generate_content(model=model, contents=contents, config=self.config(**options))
            if not response.candidates:
                break
            contents.append(response.candidates[0].content)
            answers = self.function_responses(response)
            if answers is None:
                break
            contents.append(answers)
        return response
