"""The HTTP client of one upstream connection: one pool, connections kept alive across calls.

Why not the SDK's default client as is: its streamable HTTP transport closes each POST's
SSE response as soon as the JSON-RPC answer has arrived, a moment before the server ends
the stream. A response closed before its end cannot hand its connection back to the pool,
so every call paid a new TCP connection on the gateway's upstream leg (connect, the
server's accept, slow start) and a new one per call at the upstream too.

Here the response streams are wrapped: closing one that is not finished hands it to a
background task that reads what is left (the end of the stream follows the answer at
once on a server that sends promptly), bounded by :data:`DRAIN_SECONDS` and
:data:`DRAIN_BYTES`, and then closes it: a finished response returns its connection to the
pool, an unfinished one closes it exactly as before. The caller never waits for the drain,
so a slow server costs a fresh connection on the next call, never time on this one.

TCP_NODELAY: the transport's sockets are asyncio's, which set it on every TCP connection
they open, so a small request is never held back waiting for the previous one's ACK. That
also sent each request as two segments (httpcore writes the headers, then the body), which
woke the server twice; here a request's writes are held and sent as one just before its
answer is read (:class:`_Joined`), as the server needs all of it before answering anyway.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["DRAIN_BYTES", "DRAIN_SECONDS", "keep_alive_transport", "pooled_client", "streamable"]

log = logging.getLogger("toolscout.mcp")

DRAIN_SECONDS = 0.5
"""How long a closed, unfinished response may take to reach its end before its connection is
dropped instead (a stream the server keeps open: a cancelled call's, a listen stream)."""
DRAIN_BYTES = 256 * 1024
"""How much of a closed response is read, at most, to save its connection."""


def pooled_client(headers: dict[str, str] | None = None) -> Any:
    """The ``httpx2.AsyncClient`` one upstream connection uses for all its requests (the SDK's
    timeouts)."""
    import httpx2  # the MCP SDK's HTTP stack: loaded with the first HTTP upstream, not at import
    from mcp.shared._httpx_utils import MCP_DEFAULT_SSE_READ_TIMEOUT, MCP_DEFAULT_TIMEOUT

    timeout = httpx2.Timeout(MCP_DEFAULT_TIMEOUT, read=MCP_DEFAULT_SSE_READ_TIMEOUT)
    return httpx2.AsyncClient(headers=headers, timeout=timeout, transport=keep_alive_transport())


@contextlib.asynccontextmanager
async def streamable(url: str, http: Any) -> AsyncIterator[Any]:
    """The SDK's streamable HTTP transport over ``http``, which it closes at the end (the SDK
    leaves a client it was given open, with its kept-alive connections)."""
    from mcp.client.streamable_http import streamable_http_client

    async with http, streamable_http_client(url, http_client=http) as streams:
        yield streams


def keep_alive_transport(inner: Any = None) -> Any:
    """An HTTP transport (around ``inner``, by default httpx2's own) whose responses, closed
    early, finish in the background."""
    return _classes()[0](inner)


@functools.cache
def _classes() -> tuple[type, type]:
    """The transport and stream classes, made on first use: they subclass httpx2's, which is
    not imported until an HTTP upstream connects."""
    import httpx2

    class KeepAliveTransport(httpx2.AsyncBaseTransport):
        def __init__(self, inner: httpx2.AsyncBaseTransport | None = None) -> None:
            if inner is None:
                inner = httpx2.AsyncHTTPTransport()
                pool = getattr(inner, "_pool", None)  # the connections it opens join each request's writes
                if pool is not None and getattr(pool, "_network_backend", None) is not None:
                    pool._network_backend = _JoiningBackend(pool._network_backend)
            self._inner = inner
            self._drains: set[asyncio.Task[None]] = set()

        async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
            response = await self._inner.handle_async_request(request)
            if request.method != "POST":  # a GET is a listen stream: it never ends by itself
                return response
            response.stream = Finishing(response.stream, self._drains)
            return response

        async def aclose(self) -> None:
            for task in list(self._drains):
                task.cancel()
            if self._drains:
                await asyncio.gather(*self._drains, return_exceptions=True)
            await self._inner.aclose()

    class Finishing(_Finishing, httpx2.AsyncByteStream):
        pass

    return KeepAliveTransport, Finishing


class _Finishing:
    """A response stream that reads itself to its end (bounded) when closed early.

    An iterator object, not an async generator: a consumer that stops early (the SDK, once
    it has its answer) leaves the inner iterator here for the drain, and no abandoned
    generator is left for the event loop to finalise.
    """

    def __init__(self, inner: Any, drains: set[asyncio.Task[None]]) -> None:
        self._inner = inner
        self._drains = drains
        self._parts: AsyncIterator[bytes] | None = None
        self._done = False

    def __aiter__(self) -> _Finishing:
        if self._parts is None:
            self._parts = self._inner.__aiter__()
        return self

    async def __anext__(self) -> bytes:
        assert self._parts is not None
        try:
            return await self._parts.__anext__()
        except StopAsyncIteration:
            self._done = True
            raise

    async def aclose(self) -> None:
        if self._done:
            await self._inner.aclose()
            return
        # unread (a 202 to a notification, an error status) or read in part (an SSE answer)
        task = asyncio.ensure_future(self._drain())
        self._drains.add(task)
        task.add_done_callback(self._drains.discard)

    async def _drain(self) -> None:
        read = 0
        try:
            async with asyncio.timeout(DRAIN_SECONDS):
                if self._parts is None:
                    self._parts = self._inner.__aiter__()
                async for part in self._parts:
                    read += len(part)
                    if read > DRAIN_BYTES:
                        break
        except Exception as exc:  # it ended badly or late: the connection closes, as it would have
            log.debug("a response did not finish within its drain: %s", exc)
        finally:
            with contextlib.suppress(Exception):
                await self._inner.aclose()


class _JoiningBackend:
    """An httpcore network backend whose TCP streams send a request's writes as one."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner

    async def connect_tcp(self, *args: Any, **kwargs: Any) -> Any:
        return _Joined(await self._inner.connect_tcp(*args, **kwargs))

    def __getattr__(self, name: str) -> Any:  # unix sockets, sleep: the backend's own
        return getattr(self._inner, name)


class _Joined:
    """A network stream that holds what is written until the next read (HTTP/1.1: the request
    is whole by then) and sends it in one write."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self._held: list[bytes] = []

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if buffer:
            self._held.append(bytes(buffer))

    async def _flush(self, timeout: float | None) -> None:
        if self._held:
            data = self._held[0] if len(self._held) == 1 else b"".join(self._held)
            self._held = []
            await self._inner.write(data, timeout)

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        await self._flush(timeout)
        return bytes(await self._inner.read(max_bytes, timeout))

    async def aclose(self) -> None:
        self._held = []
        await self._inner.aclose()

    async def start_tls(self, *args: Any, **kwargs: Any) -> Any:
        await self._flush(None)
        return _Joined(await self._inner.start_tls(*args, **kwargs))

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)
