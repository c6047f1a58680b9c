"""A stateful client's plain request is answered with one JSON body, not a one-event SSE
stream (issue 36, :mod:`toolscout.server.plain_answers`), so an SDK client keeps its
connection; a request whose stream carries anything before its answer (progress, a request to
the client) still gets the SSE stream, from its first byte."""

from __future__ import annotations

from typing import Any

import httpx2
import mcp_types as types
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from mcp_fixtures.asgi import serving
from toolscout import Catalog, Tool
from toolscout.context import current
from toolscout.gateway import Gateway
from toolscout.server.app import http_app
from toolscout.server.mcp import GatewayServer
from toolscout.server.plain_answers import (  # reach-in: which SSE chunks the rewrite takes, case by case
    _answer_data,
)


def _server() -> GatewayServer:
    cat = Catalog()

    async def steps(args: dict[str, Any]) -> str:
        report = current().progress
        assert report is not None
        for i in range(2):
            await report(i + 1, 2, f"step {i + 1}")
        return "done"

    cat.add(Tool("long_job", "Run a long job in steps.", {"type": "object"}), handler=steps)
    cat.add(Tool("quick", "Answer at once.", {"type": "object"}), handler=lambda args: "quick answer")
    return GatewayServer(Gateway(cat, call_timeout=None))


class Answers:
    """The content type and TCP connection (local port) of every answer to a tools/call POST."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, int]] = []

    async def __call__(self, response: httpx2.Response) -> None:
        if response.request.method == "POST" and b'"tools/call"' in response.request.content:
            stream = response.extensions.get("network_stream")
            port = stream.get_extra_info("client_addr")[1] if stream is not None else -1
            self.seen.append((response.headers.get("content-type", ""), port))


async def test_a_plain_call_gets_json_on_a_kept_connection_and_progress_gets_its_stream() -> None:
    answers = Answers()
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        progress.append((done, total, message))

    async with serving(http_app(_server())) as url:
        http = httpx2.AsyncClient(event_hooks={"response": [answers]})
        async with http, Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="legacy") as client:
            for _ in range(3):
                quick = await client.call_tool("call_tool", {"name": "quick", "arguments": {}})
                assert quick.content[0].text == "quick answer"
            followed = await client.call_tool("call_tool", {"name": "long_job", "arguments": {}}, progress_callback=on_progress)
    assert followed.content[0].text == "done"
    assert progress == [(1, 2, "step 1"), (2, 2, "step 2")]
    kinds = [kind for kind, _ in answers.seen]
    assert kinds[:3] == ["application/json"] * 3 and kinds[3].startswith("text/event-stream"), kinds
    ports = {port for _, port in answers.seen[:3]}
    assert len(ports) == 1 and -1 not in ports, answers.seen  # each JSON answer was read to its end: the connection stayed


@pytest.mark.parametrize(
    ("chunk", "plain"),
    [
        (b'event: message\r\ndata: {"jsonrpc":"2.0","id":3,"result":{}}\r\n\r\n', True),
        (b'event: message\ndata: {"jsonrpc":"2.0","id":"a","error":{"code":-1,"message":"no"}}\n\n', True),
        (b'event: message\r\nid: 7\r\ndata: {"jsonrpc":"2.0","id":3,"result":{}}\r\n\r\n', False),  # resumable
        (b'event: message\r\ndata: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\r\n\r\n', False),
        (b'event: message\r\ndata: {"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{}}\r\n\r\n', False),
        (b": ping\r\n\r\n", False),
        (b'event: message\r\ndata: {"jsonrpc":"2.0","id":3,"result":{}}\r\n\r\nevent: message\r\ndata: {}\r\n\r\n', False),
    ],
)
def test_only_a_lone_answer_event_is_rewritten(chunk: bytes, plain: bool) -> None:
    assert (_answer_data(chunk) is not None) is plain


def test_the_rewritten_body_is_the_events_json_rpc_message() -> None:
    data = _answer_data(b'event: message\r\ndata: {"jsonrpc":"2.0","id":3,"result":{"content":[]}}\r\n\r\n')
    assert data is not None
    assert types.jsonrpc_message_adapter.validate_json(data).id == 3  # type: ignore[union-attr]
