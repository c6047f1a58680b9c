"""Render a :class:`~toolscout.model.Tool` in each host API's tool dialect.

Each format is a pure function ``Tool -> dict`` in its own module, looked up by name::

    from toolscout.formats import render, render_many
    render(tool, "anthropic")   # {"name", "description", "input_schema"}

Built in: ``openai`` (Chat Completions), ``openai-responses``, ``anthropic``, ``gemini``,
``mcp`` and ``generic`` (seed 001). Add your own with :func:`register`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from ..errors import InvalidRequest
from ..model import Tool
from ..naming import param_names, wire_name, wire_names
from .anthropic import render_anthropic
from .gemini import gemini_arguments, gemini_schema, render_gemini
from .generic import render_generic
from .mcp import render_mcp
from .openai import render_openai_chat, render_openai_responses
from .prompt import system_prompt
from .strict import openai_strict, openai_strict_reason, strict_refusal

__all__ = [
    "FORMATS",
    "Renderer",
    "gemini_arguments",
    "gemini_schema",
    "openai_strict",
    "openai_strict_reason",
    "param_names",
    "register",
    "render",
    "render_many",
    "strict_refusal",
    "system_prompt",
    "wire_name",
    "wire_names",
]

Renderer = Callable[[Tool], dict[str, Any]]

_REGISTRY: dict[str, Renderer] = {
    "openai": render_openai_chat,
    "openai-responses": render_openai_responses,
    "anthropic": render_anthropic,
    "gemini": render_gemini,
    "mcp": render_mcp,
    "generic": render_generic,
}
_ALIASES = {"openai-chat": "openai", "responses": "openai-responses", "claude": "anthropic"}

FORMATS: tuple[str, ...] = tuple(_REGISTRY)
"""The registered format names (rebound by :func:`register`; read it as ``formats.FORMATS``)."""


def register(name: str, fn: Renderer) -> None:
    """Add (or replace) a format; ``fn`` must not mutate the tool."""
    global FORMATS
    if not name or not callable(fn):
        raise ValueError("register(name, fn) needs a name and a callable")
    _REGISTRY[name] = fn
    FORMATS = tuple(_REGISTRY)


def formats() -> list[str]:
    return list(_REGISTRY)


def renderer(format: str) -> Renderer:
    """The function for ``format``; raises :class:`InvalidRequest` for an unknown name."""
    fn = _REGISTRY.get(_ALIASES.get(format, format))
    if fn is None:
        raise InvalidRequest(
            f"unknown tool format '{format}'",
            hint=f"Use one of: {', '.join(_REGISTRY)}.",
            format=format,
        )
    return fn


def render(tool: Tool, format: str = "generic") -> dict[str, Any]:
    return renderer(format)(tool)


def render_many(tools: Iterable[Tool], format: str = "generic") -> list[dict[str, Any]]:
    fn = renderer(format)
    return [fn(t) for t in tools]
