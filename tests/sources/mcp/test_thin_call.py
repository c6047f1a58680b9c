"""The thin path of a plain ``tools/call`` to an HTTP upstream (issue 36, :mod:`.thin_call`):
one POST straight to the server with its session's headers, and each case where it hands the
call (or part of it) to the SDK session instead: a caller that asked for progress, a session
the server no longer knows (404), what the server sends mid-call (elicitation, sampling,
logs), and a caller that gives up (the server is told).

The upstream is the scripted fake served in the test's loop, behind a recorder of every
JSON-RPC POST it receives; a thin call is told apart by its id (``toolscout-N``, where the
SDK numbers its own).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager, suppress
from typing import Any

import httpx
import pytest

from _wait import until
from mcp_fixtures.asgi import read_body, serving
from mcp_fixtures.fake_upstream import build
from toolscout.context import CallContext, using
from toolscout.errors import ToolTimeout
from toolscout.sources.mcp.config import parse_config
from toolscout.sources.mcp.upstream import Upstream


class Posts:
    """ASGI in front of an upstream app: every JSON-RPC POST it receives (body, headers) and
    the HTTP status it answered, in order; the requests pass through unchanged."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[tuple[dict[str, Any], dict[str, str], list[int]]] = []

    def calls(self) -> list[tuple[Any, int | None]]:
        """``(JSON-RPC id, HTTP status)`` of every ``tools/call`` POST."""
        return [(body.get("id"), status[0] if status else None) for body, _, status in self.seen if body.get("method") == "tools/call"]

    def sent(self, method: str) -> list[dict[str, Any]]:
        return [body for body, _, _ in self.seen if body.get("method") == method]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body: dict[str, Any] = {}
        status: list[int] = []
        self.seen.append((body, {k.decode(): v.decode() for k, v in scope["headers"]}, status))
        raw = b""

        async def reading() -> dict[str, Any]:
            nonlocal raw
            message = await receive()
            raw += message.get("body", b"")
            if message["type"] == "http.request" and not message.get("more_body"):
                with suppress(ValueError, TypeError):
                    body.update(json.loads(raw))
            return message  # type: ignore[no-any-return]

        async def sending(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])
            await send(message)

        await self.app(scope, reading, sending)


@asynccontextmanager
async def upstream_of(mode: str) -> AsyncIterator[tuple[Upstream, Posts, str]]:
    posts = Posts(build(mode).streamable_http_app(host="127.0.0.1"))
    async with serving(posts) as url:
        config = parse_config({"mcpServers": {"up": {"url": f"{url}/mcp", "connectTimeout": 10, "protocol": "legacy"}}}).enabled()["up"]
        upstream = Upstream("up", config)
        try:
            await upstream.list_tools()  # the session is established: its next calls may go thin
            yield upstream, posts, f"{url}/mcp"
        finally:
            await upstream.aclose()


def _text(result: Mapping[str, Any]) -> str:
    return "".join(part.get("text", "") for part in result.get("content", []))


def _thin(rid: Any) -> bool:
    return isinstance(rid, str) and rid.startswith("toolscout-")


async def test_a_plain_call_is_one_post_with_the_sessions_headers() -> None:
    async with upstream_of("normal") as (upstream, posts, _):
        for i in range(3):
            assert _text(await upstream.call("echo", {"text": f"call {i}"})) == f"call {i}"
        result = await upstream.call("add", {"a": 2, "b": 3})
    assert result["structuredContent"] == {"sum": 5}  # the result exactly as the server sent it
    calls = posts.calls()
    assert len(calls) == 4 and all(_thin(rid) and status == 200 for rid, status in calls), calls
    sdk = next(headers for body, headers, _ in posts.seen if body.get("method") == "tools/list")
    thin = next(headers for body, headers, _ in posts.seen if _thin(body.get("id")))
    for name in ("mcp-session-id", "mcp-protocol-version"):
        assert thin[name] == sdk[name]


async def test_an_error_answer_is_that_calls_error() -> None:
    from mcp.shared.exceptions import MCPError

    async with upstream_of("errors") as (upstream, posts, _):
        with pytest.raises(MCPError) as info:
            await upstream.call("ticket", {})
        assert info.value.code == -32603 and "Ticket 42 is closed" in info.value.message
        assert upstream.status()["state"] == "ready"
    assert _thin(posts.calls()[-1][0])


async def test_a_caller_that_asked_for_progress_goes_through_the_sdk_session() -> None:
    async def progress(done: float, total: float | None, message: str | None) -> None:
        pass

    async with upstream_of("normal") as (upstream, posts, _):
        assert _text(await upstream.call("echo", {"text": "with progress"}, progress=progress)) == "with progress"
    ((rid, status),) = posts.calls()
    assert isinstance(rid, int) and status == 200
    assert "progressToken" in posts.sent("tools/call")[0]["params"]["_meta"]


class Caller:
    """The client a call came from, as an upstream reaches it mid-call."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, Mapping[str, Any] | None]] = []
        self.logs: list[Mapping[str, Any] | None] = []

    def supports(self, capability: str) -> bool:
        return capability in {"sampling", "elicitation"}

    async def request(self, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
        self.asked.append((method, params))
        if method == "elicitation/create":
            return {"action": "accept", "content": {"answer": "forty-two"}}
        return {"role": "assistant", "content": {"type": "text", "text": "a haiku"}, "model": "test-model"}

    async def notify(self, method: str, params: Mapping[str, Any] | None) -> None:
        self.logs.append(params)


@pytest.mark.filterwarnings("ignore:The (sampling|logging) capability is deprecated")  # the fake upstream's own
async def test_what_the_server_asks_and_logs_mid_call_reaches_the_caller() -> None:
    caller = Caller()
    async with upstream_of("relay") as (upstream, posts, _):
        with using(CallContext(relay=caller)):
            asked = await upstream.call("ask", {"question": "The answer?"})
            sampled = await upstream.call("sample", {"prompt": "Write a haiku"})
            logged = await upstream.call("chatty", {"tag": "t1"})
    assert _text(asked) == 'user accept: {"answer": "forty-two"}'
    assert _text(sampled) == "model said: a haiku"
    assert _text(logged) == "logged for t1"
    assert [method for method, _ in caller.asked] == ["elicitation/create", "sampling/createMessage"]
    assert any("t1" in json.dumps(log) for log in caller.logs), caller.logs
    assert all(_thin(rid) for rid, _ in posts.calls()), posts.calls()
    # the SDK session answered the server's requests (its own POSTs, the answers' ids)
    answers = [body for body, _, _ in posts.seen if "result" in body]
    assert len(answers) == 2


async def test_a_session_the_server_forgot_is_opened_again_and_the_call_sent_once_more() -> None:
    async with upstream_of("normal") as (upstream, posts, url):
        assert _text(await upstream.call("echo", {"text": "before"})) == "before"
        headers = next(h for body, h, _ in posts.seen if _thin(body.get("id")))
        async with httpx.AsyncClient() as http:  # the server ends the session (as on expiry)
            gone = await http.delete(url, headers={k: headers[k] for k in ("mcp-session-id", "mcp-protocol-version")})
            assert gone.status_code in (200, 204)
        initialized = len(posts.sent("initialize"))
        assert _text(await upstream.call("echo", {"text": "after"})) == "after"
        assert _text(await upstream.call("echo", {"text": "again"})) == "again"
        assert upstream.status()["state"] == "ready"
    calls = posts.calls()
    # the thin POST got 404 (nothing ran); a new session, then the same call once more
    assert [status for _, status in calls] == [200, 404, 200, 200], calls
    assert _thin(calls[1][0]) and len(posts.sent("initialize")) == initialized + 1
    after = [body["params"]["arguments"]["text"] for body in posts.sent("tools/call")]
    assert after == ["before", "after", "after", "again"]


async def test_a_caller_that_gives_up_cancels_the_call_at_the_server() -> None:
    async with upstream_of("errors") as (upstream, posts, _):
        task = asyncio.create_task(upstream.call("hang", {}))
        assert await until(lambda: posts.calls(), 10)
        ((rid, _),) = posts.calls()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await until(lambda: any(n["params"]["requestId"] == rid for n in posts.sent("notifications/cancelled")), 10)
        with pytest.raises(ToolTimeout):  # a timeout cancels it the same way
            await upstream.call("hang", {}, timeout=0.3)
        timed_out = posts.calls()[-1][0]
        assert await until(lambda: any(n["params"]["requestId"] == timed_out for n in posts.sent("notifications/cancelled")), 10)
        assert _thin(rid) and _thin(timed_out)
        assert _text(await upstream.call("echo", {"text": "still here"})) == "still here"


@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_through_the_gateway_only_a_client_that_asks_for_progress_leaves_the_thin_path(mode: str) -> None:
    from mcp import Client

    from toolscout.catalog import Catalog
    from toolscout.gateway import Gateway
    from toolscout.server.mcp import GatewayServer
    from toolscout.sources.mcp.aggregator import Aggregator

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        pass

    posts = Posts(build("normal").streamable_http_app(host="127.0.0.1"))
    async with serving(posts) as url:
        agg = Aggregator(parse_config({"mcpServers": {"up": {"url": f"{url}/mcp", "protocol": "legacy"}}}), Catalog())
        try:
            await agg.refresh("up")
            server = GatewayServer(Gateway(agg.catalog, call_timeout=None), agg)
            forward = {"name": "up_echo", "arguments": {"text": "hi"}}
            async with Client(server.lowlevel, mode=mode) as client:
                plain = await client.call_tool("call_tool", forward)
                followed = await client.call_tool("call_tool", forward, progress_callback=on_progress)
        finally:
            await agg.aclose()
    assert plain.content[0].text == followed.content[0].text == "hi"
    (plain_id, _), (followed_id, _) = posts.calls()
    assert _thin(plain_id) and isinstance(followed_id, int)


class JsonServer:
    """A minimal streamable HTTP server (plain ASGI, no session id) that answers every request
    with a JSON body; ``tools/call`` of ``deep`` answers a result nested past any parser's depth."""

    def __init__(self) -> None:
        self.ids: list[Any] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await read_body(receive)
        request = json.loads(body) if body else {}
        rid, method = request.get("id"), request.get("method")
        if scope["method"] != "POST" or rid is None:
            await send({"type": "http.response.start", "status": 202 if scope["method"] == "POST" else 405, "headers": []})
            await send({"type": "http.response.body", "body": b""})
            return
        if method == "initialize":
            result: Any = {"protocolVersion": request["params"]["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "json", "version": "1"}}
        elif method == "tools/list":
            result = {"tools": [{"name": n, "inputSchema": {"type": "object"}} for n in ("echo", "deep")]}
        elif method == "tools/call":
            self.ids.append(rid)
            result = {"content": [{"type": "text", "text": str(request["params"]["arguments"].get("text"))}]}
        else:
            result = {}
        raw = json.dumps({"jsonrpc": "2.0", "id": rid, "result": result}).encode()
        if method == "tools/call" and request["params"]["name"] == "deep":
            raw = b'{"jsonrpc":"2.0","id":' + json.dumps(rid).encode() + b',"result":{"content":' + b"[" * 100_000 + b"]" * 100_000 + b"}}"
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": raw})


async def test_a_json_answer_is_read_and_one_too_deep_to_parse_fails_only_its_call() -> None:
    from mcp.shared.exceptions import MCPError

    server = JsonServer()
    async with serving(server) as url:
        config = parse_config({"mcpServers": {"up": {"url": f"{url}/mcp", "protocol": "legacy"}}}).enabled()["up"]
        upstream = Upstream("up", config)
        try:
            await upstream.list_tools()
            assert _text(await upstream.call("echo", {"text": "plain json"})) == "plain json"
            with pytest.raises(MCPError) as info:
                await upstream.call("deep", {})
            assert info.value.code == -32700 and "too deeply" in info.value.message
            assert upstream.status()["state"] == "ready"
            assert _text(await upstream.call("echo", {"text": "still fine"})) == "still fine"
        finally:
            await upstream.aclose()
    assert all(_thin(rid) for rid in server.ids), server.ids
