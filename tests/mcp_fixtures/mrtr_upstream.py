"""An upstream speaking both 2025-11-25 and 2026-07-28 over HTTP, for multi-round-trip tests.

``python mrtr_upstream.py PORT``. On 2026-07-28 (stateless) it offers, besides ``count``:

- ``ask_name``: answers ``input_required`` with one elicitation (key ``name``) and a
  ``requestState``; the retry with the answer and that exact state says hello;
- ``needs_sampling``: -32021 (``data.requiredCapabilities``) unless the request's
  ``_meta`` declares the sampling capability;
- the prompt ``ask_prompt``, which asks the same way on ``prompts/get``.

``count`` (both revisions) counts its calls: ``count`` with ``{"peek": true}`` reports the
total without adding to it, so a test can tell how often a program's calls really ran.
The ``ask_*`` entries are listed only on 2026-07-28, as the conformance fixture's are.
While :data:`hold_listing` holds an unset event (a test in the same process sets one),
``tools/list`` waits for it: a server still listing its tools, for as long as a test needs.
"""

from __future__ import annotations

import sys
from typing import Any

import mcp_types as types
from mcp.server.lowlevel.server import Server
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

OBJ: dict[str, Any] = {"type": "object", "properties": {}}
ASK = {
    "name": {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": "What is your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]},
        },
    }
}
STATE = "upstream-state-42"
calls = {"count": 0}
hold_listing: list[Any] = []  # asyncio.Event objects tools/list waits for


def _modern(ctx: Any) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


def _text(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def _answer(params: Any) -> str | None:
    """The name the client gave, when this request is the retry (right state, an answer)."""
    answers = params.input_responses or {}
    answer = answers.get("name")
    if params.request_state != STATE or answer is None:
        return None
    content = answer.content if hasattr(answer, "content") else (answer or {}).get("content")
    return (content or {}).get("name")


async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
    for gate in hold_listing:
        await gate.wait()
    tools = [types.Tool(name="count", description="Count this call (peek: only report).", input_schema=OBJ)]
    if _modern(ctx):
        tools += [
            types.Tool(name="ask_name", description="Ask the user's name, then greet.", input_schema=OBJ),
            types.Tool(name="needs_sampling", description="Needs the sampling capability.", input_schema=OBJ),
        ]
    return types.ListToolsResult(tools=tools)


async def call_tool(ctx: Any, params: Any) -> Any:
    if params.name == "count":
        if not (params.arguments or {}).get("peek"):
            calls["count"] += 1
        return _text(str(calls["count"]))
    if params.name == "ask_name" and _modern(ctx):
        name = _answer(params)
        if name is None:
            return types.InputRequiredResult(input_requests=ASK, request_state=STATE)
        return _text(f"hello {name}")
    if params.name == "needs_sampling" and _modern(ctx):
        caps = ctx.session._connection.client_capabilities
        if caps is None or caps.sampling is None:
            raise MCPError(code=-32021, message="this tool needs sampling", data={"requiredCapabilities": {"sampling": {}}})
        return _text("sampled")
    raise MCPError(code=-32602, message=f"unknown tool {params.name}")


async def list_prompts(ctx: Any, params: Any) -> types.ListPromptsResult:
    prompts = [types.Prompt(name="ask_prompt", description="Asks first.")] if _modern(ctx) else []
    return types.ListPromptsResult(prompts=prompts)


async def get_prompt(ctx: Any, params: Any) -> Any:
    if params.name != "ask_prompt" or not _modern(ctx):
        raise MCPError(code=-32602, message=f"unknown prompt {params.name}")
    name = _answer(params)
    if name is None:
        return types.InputRequiredResult(input_requests=ASK, request_state=STATE)
    message = types.PromptMessage(role="user", content=types.TextContent(type="text", text=f"write to {name}"))
    return types.GetPromptResult(messages=[message])


def app() -> Any:
    server = Server(
        "mrtr-upstream",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )
    return server.streamable_http_app(host="127.0.0.1")


if __name__ == "__main__":
    import uvicorn

    uvicorn.run(app(), host="127.0.0.1", port=int(sys.argv[1]), log_level="warning")
