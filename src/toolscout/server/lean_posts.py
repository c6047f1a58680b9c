"""A stateful session's request POSTs served with less machinery than the SDK's SSE path.

For each request of a stateful (2025-11-25) session the MCP SDK's streamable HTTP transport
starts an SSE response (``sse_starlette``: a task group of four tasks, one more memory
stream, a writer task forwarding the request's messages) before it even knows whether the
request will send anything but its answer. Measured, that was a large share of the SDK
server's time per proxied call (docs/benchmarks.md, issue 36). Here the transport's request
POST waits on the request's own message stream, the way the SDK's JSON mode does: an answer
that comes first goes out as one JSON body (what :mod:`.plain_answers` made of the SSE stream
before); anything else first (progress, a log, a request to the client), or 15 s of silence,
starts the SSE stream, which then carries every message of the request up to its answer, with
a comment line every 15 s to keep proxies from closing it.

Only the plain case is served here: a JSON-RPC request other than ``initialize``, on a
transport without JSON-only mode and without an event store (resumable streams keep the SDK's
path, event ids and all). Everything else, and every check before the request is dispatched
(Accept, Content-Type, the session id), is the SDK's own.
"""

from __future__ import annotations

import functools
import json
from typing import Any

__all__ = ["lean_posts"]

KEEP_ALIVE = 15.0
"""Seconds of silence before an answer's stream starts (or gets a comment line)."""
_ENDED = object()


def lean_posts(manager: Any) -> None:
    """Serve the request POSTs of every session ``manager`` (the SDK's
    ``StreamableHTTPSessionManager``) opens from now on as the module says."""
    admit = getattr(manager, "_admit_session", None)
    if admit is None or not _sdk_has_what_it_needs():  # another SDK: its own path, unchanged
        return
    try:
        lean = _lean_class()
    except ImportError:  # the same: a name this module imports from the SDK has moved
        return

    def admitted(requestor: Any) -> Any:
        transport = admit(requestor)
        if transport is not None and type(transport) is lean.__base__:
            transport.__class__ = lean
        return transport

    manager._admit_session = admitted


_SDK_NEEDS = (
    "_handle_post_request", "_validate_accept_header", "_validate_request_headers", "_check_content_type",
    "_create_session_message", "_create_json_response", "_create_error_response", "_clean_up_memory_streams",
)
"""The SDK transport's own (private) steps this module calls: if an SDK release renames one,
requests keep the SDK's path instead of failing."""


@functools.cache
def _sdk_has_what_it_needs() -> bool:
    from mcp.server.streamable_http import StreamableHTTPServerTransport

    return all(callable(getattr(StreamableHTTPServerTransport, name, None)) for name in _SDK_NEEDS)


@functools.cache
def _lean_class() -> type:
    import anyio
    import mcp_types as types
    from mcp.server.streamable_http import (
        MCP_SESSION_ID_HEADER,
        REQUEST_STREAM_BUFFER_SIZE,
        EventMessage,
        StreamableHTTPServerTransport,
    )
    from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER

    class LeanPostsTransport(StreamableHTTPServerTransport):
        async def _handle_post_request(self, scope: Any, request: Any, receive: Any, send: Any) -> None:
            message = await self._plain_request(request)
            if message is None:
                await super()._handle_post_request(scope, request, receive, send)
                return
            if not await self._validate_accept_header(request, scope, send):
                return
            if not await self._validate_request_headers(request, send):
                return
            writer = self._read_stream_writer
            assert writer is not None
            version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER, types.DEFAULT_NEGOTIATED_VERSION)
            request_id = str(message.id)
            streams = anyio.create_memory_object_stream[EventMessage](REQUEST_STREAM_BUFFER_SIZE)
            self._request_streams[request_id] = streams
            try:
                await writer.send(self._create_session_message(message, request, request_id, version))
                first = await _next(streams[1])
                if first is _ENDED:  # the session ended under the request: as the SDK's JSON mode says it
                    response = self._create_error_response(
                        "Session terminated before the request completed", 500, types.INTERNAL_ERROR
                    )
                    await response(scope, receive, send)
                elif first is not None and _is_answer(first):
                    await self._create_json_response(first.message)(scope, receive, send)
                else:
                    await self._stream(first, streams[1], send)
            finally:
                await self._clean_up_memory_streams(request_id)

        async def _plain_request(self, request: Any) -> Any:
            """The POST's JSON-RPC request if this transport serves it here, else ``None``."""
            if self.is_json_response_enabled or self._event_store is not None or not self._check_content_type(request):
                return None
            try:
                raw = json.loads(await request.body())  # starlette keeps the body: the SDK's path reads it again
            except (ValueError, RecursionError):
                return None
            if not isinstance(raw, dict) or "id" not in raw or raw.get("method") in (None, "initialize"):
                return None
            try:
                message = types.jsonrpc_message_adapter.validate_python(raw, by_name=False)
            except (ValueError, RecursionError):
                return None
            return message if isinstance(message, types.JSONRPCRequest) else None

        async def _stream(self, event: Any, reader: Any, send: Any) -> None:
            """The request's messages as SSE, from ``event`` (``None``: nothing came yet) to its answer."""
            headers = [
                (b"cache-control", b"no-cache, no-transform"),
                (b"connection", b"keep-alive"),
                (b"content-type", b"text/event-stream"),
            ]
            if self.mcp_session_id:
                headers.append((MCP_SESSION_ID_HEADER.encode(), self.mcp_session_id.encode()))
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            while event is not _ENDED:
                if event is None:
                    chunk = b": ping\r\n\r\n"
                else:
                    data = event.message.model_dump_json(by_alias=True, exclude_unset=True)
                    chunk = f"event: message\r\ndata: {data}\r\n\r\n".encode()
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
                if event is not None and _is_answer(event):
                    break
                event = await _next(reader)
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    def _is_answer(event: Any) -> bool:
        return isinstance(event.message, types.JSONRPCResponse | types.JSONRPCError)

    async def _next(reader: Any) -> Any:
        """The request's next message; ``None`` after :data:`KEEP_ALIVE` s of silence;
        :data:`_ENDED` when its stream closed."""
        with anyio.move_on_after(KEEP_ALIVE):
            try:
                return await reader.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                return _ENDED
        return None

    return LeanPostsTransport
