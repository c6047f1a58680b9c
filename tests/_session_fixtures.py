"""A small catalog and a scripted HTTP transport shared by the session and adapter tests."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from types import ModuleType
from typing import Any

import httpx

from toolscout import Catalog, DeferPolicy, Tool
from toolscout.gateway import Gateway
from toolscout.session import Session

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "City name"}},
    "required": ["city"],
}
EMAIL = {
    "type": "object",
    "properties": {"to": {"type": "string"}, "body": {"type": "string"}},
    "required": ["to", "body"],
}


def build_catalog(filler: int = 30) -> Catalog:
    """Weather, email, a tool that raises, one pinned tool, and ``filler`` unrelated tools."""
    cat = Catalog()
    cat.add(
        Tool("get_weather", "Get the current weather forecast for a city.", WEATHER),
        handler=lambda a: {"city": a["city"], "temp_c": 21},
    )
    cat.add(
        Tool("send_email", "Send an email message to a recipient address.", EMAIL),
        handler=lambda a: f"sent to {a['to']}",
    )

    def explode(args: dict[str, Any]) -> None:
        raise RuntimeError("disk on fire")

    cat.add(Tool("format_disk", "Format a storage disk partition.", {"type": "object"}), handler=explode)
    cat.add(
        Tool("read_notes", "Read the user's saved notes.", {"type": "object"}, defer=DeferPolicy.NEVER),
        handler=lambda a: "no notes",
    )
    for i in range(filler):
        cat.add(
            Tool(
                f"inventory_item_{i}",
                f"Look up warehouse inventory record number {i} by SKU.",
                {"type": "object", "properties": {"sku": {"type": "string"}}},
            ),
            handler=lambda a: "ok",
        )
    return cat


def build_session(filler: int = 30, **options: Any) -> Session:
    return Session(Gateway(build_catalog(filler)), **options)


class Script:
    """An ``httpx.MockTransport`` handler that answers each request with the next scripted
    JSON body and keeps every request body it saw. ``validate`` checks each body as it
    arrives (see ``_sdk_requests``: the SDK's own request types, unknown keys refused)."""

    def __init__(
        self,
        *bodies: dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]],
        validate: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.bodies = list(bodies)
        self.requests: list[dict[str, Any]] = []
        self.http: ModuleType = httpx
        self.validate = validate

    def __call__(self, request: Any) -> Any:
        sent = json.loads(request.content or b"{}")
        self.requests.append(sent)
        if self.validate is not None:
            try:
                self.validate(sent)
            except Exception as exc:  # a 400 is not retried: the test fails on this request
                return self.http.Response(400, json={"error": {"message": f"invalid request: {exc}"}})
        if not self.bodies:
            return self.http.Response(500, json={"error": {"message": "script exhausted"}})
        body = self.bodies.pop(0)
        return self.http.Response(200, json=body(sent) if callable(body) else body)

    def client(self, http: ModuleType = httpx) -> Any:
        """An ``http.Client`` over this script (``http`` is httpx, or the httpx2 fork some
        SDKs use)."""
        self.http = http
        return http.Client(transport=http.MockTransport(self))


def prefix_stable(lists: list[list[Any]]) -> bool:
    """Each list starts with the previous one, byte for byte (append-only)."""
    for before, after in itertools.pairwise(lists):
        if json.dumps(after[: len(before)]) != json.dumps(before):
            return False
    return True


# -- what a provider answers: one assistant turn with tool calls, or text ---------------------
def chat_turn(*calls: tuple[str, str, Any], text: str | None = None) -> dict[str, Any]:
    """An OpenAI Chat Completions reply; ``args`` given as a dict are JSON-encoded."""
    tool_calls = [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
        for cid, name, args in calls
    ]
    message: dict[str, Any] = {"role": "assistant", "content": text}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "gpt-test",
        "choices": [{"index": 0, "finish_reason": "tool_calls" if calls else "stop", "message": message}],
    }


def responses_turn(*items: dict[str, Any], text: str | None = None) -> dict[str, Any]:
    """An OpenAI Responses reply holding ``items`` (and a message with ``text``)."""
    output = list(items)
    if text is not None:
        output.append(
            {
                "type": "message",
                "id": "msg_1",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": text, "annotations": []}],
            }
        )
    return {
        "id": "resp_1",
        "object": "response",
        "created_at": 0,
        "model": "gpt-test",
        "status": "completed",
        "output": output,
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": [],
    }


def claude_turn(*uses: tuple[str, str, Any], text: str | None = None) -> dict[str, Any]:
    """An Anthropic Messages reply: ``text`` first, then each tool use."""
    content: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    content += [{"type": "tool_use", "id": uid, "name": name, "input": args} for uid, name, args in uses]
    return {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "content": content,
        "stop_reason": "tool_use" if uses else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def claude_results(messages: list[Any]) -> dict[str, dict[str, Any]]:
    """The ``tool_result`` blocks an Anthropic conversation sent back, by ``tool_use_id``."""
    return {
        b["tool_use_id"]: b
        for m in messages
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    }
