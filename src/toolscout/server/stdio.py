"""A stdio transport where every line gets an answer and no line can exhaust memory.

The SDK's ``stdio_server`` hands a line it cannot parse (nested past the JSON parser's
depth limit, a lone surrogate escape, not JSON-RPC) to the server as an exception, which
drops it: the client waits for its own timeout, and nothing is logged. It also reads a line
whole, however long. Here such a line is answered on the wire like the HTTP transport does
(-32700 parse error, -32600 invalid request, with the request's id when it can be read),
logged, and a line over ``max_message_bytes`` is discarded in chunks, never held whole.
Messages that parse are handed over exactly as the SDK would.
"""

from __future__ import annotations

import json
import logging
import re
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, BinaryIO

__all__ = ["DEFAULT_MAX_MESSAGE_BYTES", "request_id", "serve_stdio", "stdio_transport"]

log = logging.getLogger("toolscout.mcp")

DEFAULT_MAX_MESSAGE_BYTES = 8 * 1024 * 1024
"""Largest stdio message (one line, newline excluded) accepted by default."""
_DISCARD_CHUNK = 1024 * 1024
_ID_SCAN_BYTES = 256 * 1024
"""How far into a rejected line to look for its id (clients write ``id`` before ``params``)."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603

_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[{}\[\]:,]|[^"{}\[\]:,\s]+', re.DOTALL)


def _scalar(token: bytes) -> Any:
    try:
        return json.loads(token)
    except ValueError:
        return None


def request_id(data: bytes) -> int | str | None:
    """The top-level ``id`` of the request that ``data`` starts with, read without parsing it.

    Works on a line that is cut short, nested too deep or not valid JSON further on. Only a
    request (an object with a ``method``) gives an id: answering a malformed *response*
    with its id would look like an answer to the client's own request of that id.
    """
    depth = 0
    pending: bytes | None = None  # a top-level key waiting for its value
    ident: int | str | None = None
    has_method = False
    for match in _TOKEN.finditer(data, 0, _ID_SCAN_BYTES):
        token = match.group()
        if token in (b"{", b"["):
            if depth == 0 and token != b"{":
                return None
            if depth == 1:
                pending = None  # a compound value: neither a usable id nor a method name
            depth += 1
        elif token in (b"}", b"]"):
            depth -= 1
            if depth <= 0:
                break
        elif depth != 1:
            if depth == 0:
                return None
        elif token == b",":
            pending = None
        elif token != b":":
            if pending is None:
                pending = token
                continue
            key, pending = _scalar(pending), None
            if key == "method":
                has_method = True
            elif key == "id" and ident is None:
                value = _scalar(token)
                if isinstance(value, int | str) and not isinstance(value, bool):
                    ident = value
            if has_method and ident is not None:
                break
    if not has_method or ident is None:
        return None
    if isinstance(ident, str):
        try:
            ident.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: it could not be written back
            return None
    return ident


def _error(ident: int | str | None, code: int, message: str) -> Any:
    import mcp_types as types

    return types.JSONRPCError(jsonrpc="2.0", id=ident, error=types.ErrorData(code=code, message=message))


def _rejection(line: bytes, exc: Exception) -> Any:
    """The error that answers a line the SDK's message parser refused."""
    from pydantic import ValidationError

    ident = request_id(line)
    problems = exc.errors(include_url=False, include_input=False) if isinstance(exc, ValidationError) else []
    invalid_json = [p["msg"] for p in problems if p["type"] == "json_invalid"]
    if invalid_json or not problems:
        reason = invalid_json[0] if invalid_json else str(exc)
        code, message = PARSE_ERROR, f"Parse error: {reason}"[:500]
    else:
        code, message = INVALID_REQUEST, "Invalid request: not a JSON-RPC 2.0 request, notification or response"
    log.warning("stdio: answered a %d-byte malformed message (id %r) with %d: %s", len(line), ident, code, message)
    return _error(ident, code, message)


class _Wire:
    """stdout, written a whole line at a time by both the reader (errors) and the writer."""

    def __init__(self, out: BinaryIO) -> None:
        import anyio

        self._out = out
        self._lock = anyio.Lock()

    async def send(self, message: Any) -> None:
        import anyio

        data = _encode(message)
        if data is None:
            return
        async with self._lock:
            await anyio.to_thread.run_sync(self._put, data)

    def _put(self, data: bytes) -> None:
        self._out.write(data)
        self._out.flush()


def _encode(message: Any) -> bytes | None:
    """One wire line; a reply that cannot be encoded (a lone surrogate in a result) becomes
    an internal error for its id rather than ending the server."""
    try:
        return message.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8") + b"\n"
    except Exception:
        ident = getattr(message, "id", None)
        log.exception("stdio: could not encode an outgoing %s (id %r)", type(message).__name__, ident)
        if ident is None or getattr(message, "method", None) is not None:
            return None  # a notification or our own request: nobody waits on it
        fallback = _error(ident, INTERNAL_ERROR, "Internal error: the reply could not be encoded as JSON")
        return fallback.model_dump_json(by_alias=True, exclude_unset=True).encode("utf-8") + b"\n"


async def _discard_line(stdin: BinaryIO) -> int:
    """Skip to the end of the current line in bounded chunks; the bytes skipped (newline excluded)."""
    import anyio

    skipped = 0
    while True:
        chunk = await anyio.to_thread.run_sync(stdin.readline, _DISCARD_CHUNK)
        if not chunk or chunk.endswith(b"\n"):
            return skipped + len(chunk.rstrip(b"\r\n"))
        skipped += len(chunk)


async def _read_lines(stdin: BinaryIO, sink: Any, wire: _Wire, limit: int) -> None:
    import anyio
    import mcp_types as types
    from mcp.shared.message import SessionMessage

    async with sink:
        while True:
            line = await anyio.to_thread.run_sync(stdin.readline, limit + 1)
            if not line:
                return
            if len(line) > limit and not line.endswith(b"\n"):
                ident = request_id(line[:_ID_SCAN_BYTES])
                del line
                size = limit + 1 + await _discard_line(stdin)
                log.warning("stdio: discarded a %d-byte message (id %r); the limit is %d bytes", size, ident, limit)
                hint = f"Request too large: {size} bytes, over the {limit}-byte limit (--max-message-bytes)"
                await wire.send(_error(ident, INVALID_REQUEST, hint))
                continue
            if not line.strip():
                continue
            try:  # exactly the SDK's parse (invalid UTF-8 is replaced, as its text reader does)
                message = types.jsonrpc_message_adapter.validate_json(
                    line.decode("utf-8", errors="replace"), by_name=False
                )
            except Exception as exc:
                await wire.send(_rejection(line, exc))
                continue
            try:
                await sink.send(SessionMessage(message))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                return


async def _write_messages(source: Any, wire: _Wire) -> None:
    async with source:
        async for item in source:
            await wire.send(item.message)


def _claim(fd: int, releases: list[Callable[[], None]]) -> BinaryIO:
    """The SDK's claim on fd 0 or 1 (children and stray prints then miss the wire, restored
    on exit), falling back to the sys stream's buffer if this SDK version lacks it."""
    from mcp.server import stdio as sdk

    stream = sys.stdin if fd == 0 else sys.stdout
    claim = getattr(sdk, "_claim_fd", None)
    divert = getattr(sdk, "_open_stdin_diversion" if fd == 0 else "_open_stdout_diversion", None)
    if claim is None or divert is None:
        return stream.buffer
    buffer, release = claim(fd, stream, "rb" if fd == 0 else "wb", divert)
    if release is not None:
        releases.append(release)
    return buffer


@asynccontextmanager
async def stdio_transport(
    *,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    stdin: BinaryIO | None = None,
    stdout: BinaryIO | None = None,
) -> AsyncIterator[tuple[Any, Any]]:
    """Yield ``(read, write)`` streams for ``Server.run`` over stdin/stdout (or the given
    binary streams), like the SDK's ``stdio_server``."""
    import anyio
    from mcp.shared.message import SessionMessage

    if max_message_bytes < 1:
        raise ValueError("max_message_bytes must be positive")
    releases: list[Callable[[], None]] = []
    try:
        if stdin is None:
            stdin = _claim(0, releases)
        if stdout is None:
            stdout = _claim(1, releases)
        wire = _Wire(stdout)
        read_send, read_recv = anyio.create_memory_object_stream[SessionMessage | Exception](0)
        write_send, write_recv = anyio.create_memory_object_stream[SessionMessage](0)
        async with anyio.create_task_group() as tg:
            tg.start_soon(_read_lines, stdin, read_send, wire, max_message_bytes)
            tg.start_soon(_write_messages, write_recv, wire)
            yield read_recv, write_send
    finally:
        for release in reversed(releases):
            release()


async def serve_stdio(lowlevel: Any, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
    """Serve the MCP server ``lowlevel`` over stdin/stdout; a malformed or oversized message
    gets a JSON-RPC error."""
    async with stdio_transport(max_message_bytes=max_message_bytes) as (read, write):
        await lowlevel.run(read, write, lowlevel.create_initialization_options())
