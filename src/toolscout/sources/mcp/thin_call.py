"""The thin path of a plain ``tools/call`` to an HTTP upstream: one pooled POST, the answer
read directly.

Why: through the SDK's client session a call crosses the session's dispatcher, the
transport's writer task, a task per POST, two memory streams and the typed message models
both ways; measured, that was a large part of the gateway's own time per proxied call
(docs/benchmarks.md, "MCP pass-through over HTTP: the thin path"). Here the call is one POST
on the connection's own pooled HTTP client (its headers, auth and kept-alive connections)
with the session id and protocol version the SDK itself last sent, and the answer is read
from the response: a JSON body, or the SSE stream up to the event that answers it.

When it is used (:meth:`ThinLane.usable`, decided by :class:`.upstream.Upstream`): a
``tools/call`` on the stateful session of an HTTP upstream whose session is established
(the SDK has sent a request with its protocol version), whose caller did not ask for progress
(a progress token routes ``notifications/progress`` through the SDK's dispatcher).

When it hands over to the SDK session:

- before anything ran: a redirect, a connection that could not be made: the call goes out
  again through the SDK session, which then handles it as it always did; a 404 (the server
  no longer knows the session: it expired, or the server restarted) raises
  :class:`SessionExpired`, on which the upstream opens a new session and sends the call
  once more (the SDK alone answered every later call "Session not found");
- mid-call: whatever the upstream sends on the call's stream besides the answer (a sampling
  or elicitation request, a log message, a ``list_changed``) is handed to the SDK session as
  if it had arrived on its own stream (:meth:`ThinLane.wrap`), in the caller's context, so
  the SDK answers it and relays it to that caller exactly as on its own path.

Errors read as the SDK's would (a JSON-RPC error is that call's :class:`MCPError`; an HTTP
error status, the SDK's stand-in; a stream that breaks, ``-32000``, which the upstream then
checks with a ping). Cancelling the caller (its timeout, its client's cancellation) sends
``notifications/cancelled`` for the call, as the SDK does.

Not on the thin path: a resumable SSE stream that breaks mid-call is not resumed (the SDK
reconnects with ``Last-Event-ID``); the call fails with ``-32000`` instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["NO_PROGRESS", "SessionExpired", "ThinLane"]

log = logging.getLogger("toolscout.mcp")

_SESSION = "mcp-session-id"
_VERSION = "mcp-protocol-version"
_CONNECTION_CLOSED = -32000
_ids = itertools.count(1)


async def NO_PROGRESS(progress: float, total: float | None = None, message: str | None = None) -> None:
    """The progress callback of a caller that asked for none: a handler may report to it
    (nothing is sent), and an upstream call need not ask its server for progress, so the
    call may take the thin path."""


class SessionExpired(Exception):
    """The server no longer knows the session (HTTP 404 to a thin call): nothing ran, and a
    new session may send the call again."""


class ThinLane:
    """Direct ``tools/call`` POSTs next to one SDK client session over streamable HTTP."""

    def __init__(self, url: str, http: Any) -> None:
        self.url = url
        self.http = http
        self.session_id: str | None = None
        self.version: str | None = None
        self._inject: Any = None  # the SDK session's read stream, from our side (see wrap)
        self._tasks: set[asyncio.Task[Any]] = set()

    # -- what the SDK sends -------------------------------------------------------------
    async def saw(self, response: Any) -> None:
        """A response on the session's client: a POST the server accepted carries the session
        id and protocol version the SDK uses now (an ``initialize`` carries no version yet)."""
        request = response.request
        if request.method != "POST" or response.status_code >= 300:
            return
        version = request.headers.get(_VERSION)
        if version:
            self.version = version
            self.session_id = request.headers.get(_SESSION)

    def usable(self) -> bool:
        return self.version is not None and self._inject is not None

    @contextlib.asynccontextmanager
    async def wrap(self, transport: Any) -> AsyncIterator[tuple[Any, Any]]:
        """``transport`` (the SDK's streamable HTTP client streams) with a read stream this
        lane can also write into: what the upstream sends on a thin call's stream besides
        the answer reaches the SDK session as if it had come on its own stream."""
        import anyio

        send, receive = anyio.create_memory_object_stream[tuple[contextvars.Context, Any]](0)
        async with transport as (read, write), anyio.create_task_group() as tg:

            async def pump() -> None:
                async with send:  # the SDK's stream ended: so does the session's
                    async for item in read:
                        ctx = getattr(read, "last_context", None) or contextvars.copy_context()
                        await send.send((ctx, item))

            tg.start_soon(pump)
            self._inject = send
            try:
                yield _Merged(receive), write
            finally:
                self._inject = None
                tg.cancel_scope.cancel()

    async def _hand_over(self, data: dict[str, Any]) -> None:
        """One message from a thin call's stream to the SDK session, in the caller's context
        (the SDK spawns its handling there: a sampling request reaches this call's caller)."""
        import mcp_types as types
        from mcp.shared.message import SessionMessage

        inject = self._inject
        if inject is None:
            return
        try:
            message = types.jsonrpc_message_adapter.validate_python(data, by_name=False)
        except (ValueError, RecursionError) as exc:
            log.debug("a message on a call's stream could not be read: %s", exc)
            return
        with contextlib.suppress(Exception):  # the session is closing: the message goes with it
            await inject.send((contextvars.copy_context(), SessionMessage(message)))

    # -- the call ------------------------------------------------------------------------
    async def call(self, params: dict[str, Any] | None) -> dict[str, Any] | None:
        """The raw result of one ``tools/call``; ``None`` when nothing ran and the SDK session
        should send it instead. Raises :class:`MCPError` for an error answer."""
        import httpx2
        from mcp.shared.exceptions import MCPError

        rid = f"toolscout-{next(_ids)}"
        body = json.dumps({"jsonrpc": "2.0", "id": rid, "method": "tools/call", "params": params}, separators=(",", ":"))
        headers = {"accept": "application/json, text/event-stream", "content-type": "application/json"}
        assert self.version is not None
        headers[_VERSION] = self.version
        if self.session_id:
            headers[_SESSION] = self.session_id
        request = self.http.build_request("POST", self.url, content=body.encode(), headers=headers)
        try:
            response = await self.http.send(request, stream=True, follow_redirects=False)
        except (httpx2.ConnectError, httpx2.ConnectTimeout):
            return None  # nothing reached the server
        except httpx2.TransportError as exc:
            raise MCPError(_CONNECTION_CLOSED, f"the request failed: {exc}") from None
        except asyncio.CancelledError:
            self._cancelled(rid, headers)
            raise
        try:
            if response.status_code == 404 and self.session_id:
                raise SessionExpired(self.session_id)
            if response.status_code == 404 or 300 <= response.status_code < 400:
                return None  # a redirect, a 404 without a session: nothing ran; the SDK's path handles it
            if response.status_code >= 400:
                raise _status_error(response.status_code, await _body(response))
            if response.status_code == 202:
                raise MCPError(-32600, "server answered a request with 202 Accepted")
            kind = response.headers.get("content-type", "").lower()
            if kind.startswith("application/json"):
                return _answer(rid, json.loads(await response.aread()))
            if kind.startswith("text/event-stream"):
                return await self._read_stream(rid, response)
            raise MCPError(-32600, f"Unexpected content type: {kind}")
        except asyncio.CancelledError:
            self._cancelled(rid, headers)
            raise
        except (httpx2.TransportError, httpx2.StreamError, httpx2.SSEError) as exc:
            raise MCPError(_CONNECTION_CLOSED, f"the call's stream broke: {exc}") from None
        except RecursionError:  # deeper than any parser goes: that call's error, not the connection's
            raise MCPError(-32700, "the server's answer could not be parsed: nested too deeply to read") from None
        except ValueError as exc:  # not JSON
            raise MCPError(-32700, f"the server's answer could not be parsed: {exc}") from None
        finally:
            await response.aclose()

    async def _read_stream(self, rid: str, response: Any) -> dict[str, Any]:
        import httpx2
        from mcp.shared.exceptions import MCPError

        async for event in httpx2.EventSource(response):
            if not event.data:
                continue
            data = json.loads(event.data)
            if isinstance(data, dict) and data.get("id") == rid and ("result" in data or "error" in data):
                return _answer(rid, data)
            if isinstance(data, dict):
                await self._hand_over(data)
        raise MCPError(_CONNECTION_CLOSED, "SSE stream ended without a response")

    async def call_or(self, session: Any, params: dict[str, Any] | None) -> dict[str, Any]:
        """:meth:`call`, else (nothing ran) the same call through ``session`` (the SDK's dispatcher)."""
        raw = await self.call(params)
        return raw if raw is not None else await session.send_raw_request("tools/call", params, None)

    def _cancelled(self, rid: str, headers: dict[str, str]) -> None:
        """Tell the server the caller gave up on ``rid`` (as the SDK does), without waiting."""
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": rid, "reason": "cancelled"}}

        async def send() -> None:
            with contextlib.suppress(Exception):
                response = await self.http.post(self.url, content=json.dumps(note).encode(), headers=headers)
                await response.aclose()

        task = asyncio.ensure_future(send())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


def _answer(rid: str, data: Any) -> dict[str, Any]:
    from mcp.shared.exceptions import MCPError

    if not isinstance(data, dict) or data.get("id") != rid:
        raise MCPError(-32603, "the server answered another request on this call's POST")
    if "error" in data:
        error = data["error"] if isinstance(data["error"], dict) else {}
        raise MCPError(int(error.get("code", -32603)), str(error.get("message", "")), error.get("data"))
    result = data.get("result")
    if not isinstance(result, dict):
        raise MCPError(-32603, "the server's answer has no result object")
    return result


async def _body(response: Any) -> bytes:
    with contextlib.suppress(Exception):
        return bytes(await response.aread())
    return b""


def _status_error(status: int, body: bytes) -> Exception:
    """What the SDK makes of an HTTP error status: the JSON-RPC error in the body, else its stand-in."""
    from mcp.shared.exceptions import MCPError

    with contextlib.suppress(ValueError, TypeError, AttributeError):
        error = json.loads(body)["error"]
        return MCPError(int(error["code"]), str(error["message"]), error.get("data"))
    return MCPError(-32603, "Server returned an error response")


class _Merged:
    """The SDK session's read stream: the transport's messages and those a thin call hands
    over, each with the context it was sent in (what the SDK's dispatcher reads)."""

    def __init__(self, receive: Any) -> None:
        self._receive = receive
        self.last_context: contextvars.Context | None = None

    async def receive(self) -> Any:
        ctx, item = await self._receive.receive()
        self.last_context = ctx
        return item

    def __aiter__(self) -> _Merged:
        return self

    async def __anext__(self) -> Any:
        import anyio

        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    def close(self) -> None:
        self._receive.close()

    async def aclose(self) -> None:
        await self._receive.aclose()

    async def __aenter__(self) -> _Merged:
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.aclose()
