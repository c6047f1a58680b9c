"""A plain answer to a plain MCP request: JSON, not a one-event SSE stream.

The MCP SDK's streamable HTTP server answers every request POST of a stateful session with an
SSE stream, even when all it ever carries is the answer. An SDK client closes such a stream as
soon as the answer arrives, a moment before the stream's end, so its connection cannot go back
to its pool: every call through the gateway paid a new TCP connection on the client's leg
(docs/benchmarks.md, issue 36). The spec lets the server pick either form for a client that
accepts both (the SDK's server checks that it does), so here the choice is deferred, as the
SDK's own 2026-07-28 path does: a stream whose first event is the request's answer goes out
as one ``application/json`` body instead, at once (the answer is the last event of a
request's stream: the SDK ends the stream after it, and that end is not waited for); a stream
that carries anything else first (progress, a log, a request to the client, a keep-alive
ping) goes out as the SSE stream it is, from its first byte, unchanged. An event with an id
(resumable streams) is never rewritten.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["PlainAnswers"]

_SSE = b"text/event-stream"


class PlainAnswers:
    """ASGI wrapper of the SDK's streamable HTTP app (see the module's docstring)."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        await self.app(scope, receive, _Deferred(send))


class _Deferred:
    """The ``send`` of one POST: holds an SSE response's start until its first event says
    whether the stream is one answer."""

    __slots__ = ("_answered", "_send", "_start", "_through")

    def __init__(self, send: Any) -> None:
        self._send = send
        self._start: dict[str, Any] | None = None
        self._through = False
        self._answered = False

    async def __call__(self, message: dict[str, Any]) -> None:
        if self._through:
            await self._send(message)
            return
        if self._answered:
            return  # what the SSE stream sends after its answer: its end (the JSON body was whole)
        kind = message.get("type")
        if kind == "http.response.start":
            headers = message.get("headers") or []
            if message.get("status") == 200 and any(k.lower() == b"content-type" and v.startswith(_SSE) for k, v in headers):
                self._start = message
                return
            self._through = True
            await self._send(message)
            return
        start = self._start
        data = _answer_data(message.get("body", b"")) if kind == "http.response.body" and start is not None else None
        if start is None or data is None:  # SSE it is: what was held, then this, then all as it comes
            self._through = True
            if start is not None:
                await self._send(start)
            await self._send(message)
            return
        kept = [(k, v) for k, v in start.get("headers") or [] if k.lower() not in _DROPPED]
        headers = [*kept, (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
        self._answered = True
        await self._send({**start, "headers": headers})
        await self._send({"type": "http.response.body", "body": data, "more_body": False})


_DROPPED = frozenset({b"content-type", b"content-length", b"cache-control", b"connection", b"x-accel-buffering", b"transfer-encoding"})


def _answer_data(chunk: bytes) -> bytes | None:
    """The JSON of ``chunk`` if it is exactly one SSE ``message`` event, without an id, whose
    data is a JSON-RPC answer (a result or an error); else ``None``."""
    text = chunk.replace(b"\r\n", b"\n")
    if not text.endswith(b"\n\n") or text.count(b"\n\n") != 1:
        return None
    data: bytes | None = None
    for line in text[:-2].split(b"\n"):
        field, _, value = line.partition(b":")
        value = value[1:] if value.startswith(b" ") else value
        if field == b"event" and value == b"message":
            continue
        if field == b"data" and data is None:
            data = value
            continue
        return None  # an id, a second data line, a comment, another event type
    if data is None:
        return None
    try:
        parsed = json.loads(data)
    except ValueError:
        return None
    if not isinstance(parsed, dict) or "method" in parsed or not ("result" in parsed or "error" in parsed):
        return None
    return data
