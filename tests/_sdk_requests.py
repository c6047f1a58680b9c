"""Validate what an adapter sends against the provider SDK's own request types.

The SDKs describe request bodies as ``TypedDict``s (OpenAI, Anthropic) or pydantic models
(google-genai). A ``TypedDict`` ignores unknown keys under pydantic by default, so
:func:`forbidding` builds a ``TypeAdapter`` with every reachable ``TypedDict`` set to
``extra="forbid"`` (except those the SDK itself opens up, such as a tool's JSON Schema),
then restores the classes. ``Iterable`` fields validate lazily (pydantic returns an
iterator), so :func:`check` drains every iterator in the result, which validates each item
and raises on the first bad one. No expectation here is written by hand.
"""

from __future__ import annotations

import typing
from collections.abc import Iterator
from functools import cache
from typing import Any, get_args, get_origin, get_type_hints

from pydantic import ConfigDict, TypeAdapter
from typing_extensions import is_typeddict


def _typeddicts(root: Any) -> set[Any]:
    found: set[Any] = set()
    stack = [root]
    while stack:
        tp = stack.pop()
        if tp is None or isinstance(tp, typing.ForwardRef | str):
            continue
        if is_typeddict(tp):
            if tp in found:
                continue
            found.add(tp)
            stack.extend(get_type_hints(tp, include_extras=True).values())
            continue
        stack.extend(get_args(tp))
        origin = get_origin(tp)
        if origin is not None and is_typeddict(origin):
            stack.append(origin)
    return found


@cache
def forbidding(root: Any) -> TypeAdapter[Any]:
    """A ``TypeAdapter`` over ``root`` that rejects keys its ``TypedDict``s do not declare."""
    opened = [t for t in _typeddicts(root) if "__pydantic_config__" not in t.__dict__]
    for t in opened:
        t.__pydantic_config__ = ConfigDict(extra="forbid")
    try:
        return TypeAdapter(root)
    finally:
        for t in opened:
            del t.__pydantic_config__


def check(root: Any, value: Any) -> None:
    """Raise ``pydantic.ValidationError`` unless ``value`` is a valid ``root``."""
    _drain(forbidding(root).validate_python(value))


def _drain(value: Any) -> None:
    if isinstance(value, dict):
        for item in value.values():
            _drain(item)
    elif isinstance(value, list | tuple | Iterator):  # pydantic's lazy iterables validate when drawn
        for item in value:
            _drain(item)


def chat_request(body: dict[str, Any]) -> None:
    from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

    check(CompletionCreateParamsNonStreaming, body)


def chat_tool(tool: dict[str, Any]) -> None:
    from openai.types.chat import ChatCompletionToolUnionParam

    check(ChatCompletionToolUnionParam, tool)


def responses_request(body: dict[str, Any]) -> None:
    from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming

    check(ResponseCreateParamsNonStreaming, body)


def responses_tool(tool: dict[str, Any]) -> None:
    from openai.types.responses import ToolParam

    check(ToolParam, tool)


def responses_item(item: dict[str, Any]) -> None:
    from openai.types.responses import ResponseInputItemParam

    check(ResponseInputItemParam, item)


def anthropic_request(body: dict[str, Any]) -> None:
    from anthropic.types.message_create_params import MessageCreateParamsNonStreaming

    check(MessageCreateParamsNonStreaming, body)


def anthropic_tool(tool: dict[str, Any]) -> None:
    from anthropic.types import ToolUnionParam

    check(ToolUnionParam, tool)


def anthropic_message(message: dict[str, Any]) -> None:
    from anthropic.types import MessageParam

    check(MessageParam, message)


_GEMINI_BODY = {
    "contents": "Content",
    "tools": "Tool",
    "toolConfig": "ToolConfig",
    "systemInstruction": "Content",
    "generationConfig": "GenerationConfig",
    "safetySettings": "SafetySetting",
}


def gemini_request(body: dict[str, Any]) -> None:
    """A ``generateContent`` body: each top-level field validated as the google-genai model
    the SDK builds it from (those models forbid unknown keys themselves)."""
    from google.genai import types

    unknown = set(body) - set(_GEMINI_BODY)
    assert not unknown, f"unexpected request fields: {sorted(unknown)}"
    for key, value in body.items():
        model = getattr(types, _GEMINI_BODY[key])
        for item in value if isinstance(value, list) else [value]:
            model.model_validate(item)
