"""One connection to one upstream MCP server: started lazily, restarted with backoff.

Each upstream lives in its own task holding its own SDK client session (the notes found that
parallel connects through ``ClientSessionGroup`` raise), so a slow or stuck server never
holds up another. Requests go out as raw JSON-RPC through the session's dispatcher: a
``tools/list`` page is parsed tool by tool (one malformed tool must not sink the list) and a
``tools/call`` result is passed on exactly as the upstream sent it.

Upstreams speak the stateful 2025-11-25 protocol (``mode="legacy"``) so that
``notifications/tools/list_changed`` arrives on the session without a listen stream.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import time
from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import Any

from ...errors import ToolTimeout, UpstreamUnavailable
from .config import ServerConfig

__all__ = ["Upstream", "UpstreamState"]

log = logging.getLogger("toolscout.mcp")

MAX_PAGES = 1000
"""A paginator that never ends must not hang the gateway."""
BACKOFF_START = 0.5
BACKOFF_MAX = 30.0


class UpstreamState(StrEnum):
    IDLE = "idle"  # not started yet (lazy), tools served from the cache
    CONNECTING = "connecting"
    READY = "ready"
    FAILED = "failed"  # last attempt failed or the session died; retried with backoff
    CLOSED = "closed"


class Upstream:
    """A lazily started, self-healing client of one upstream server."""

    def __init__(
        self,
        name: str,
        config: ServerConfig,
        *,
        on_tools_changed: Callable[[Upstream], Awaitable[None]] | None = None,
        on_reconnected: Callable[[Upstream], Awaitable[None]] | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.state = UpstreamState.IDLE
        self.last_error: str | None = None
        self.connected_at: float | None = None
        self.calls = 0
        self._on_tools_changed = on_tools_changed
        self._on_reconnected = on_reconnected
        self._client: Any = None
        self._stop: asyncio.Event | None = None
        self._holder: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._backoff = BACKOFF_START
        self._next_attempt = 0.0
        self._retry_task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._ever_connected = False

    # -- lifecycle ------------------------------------------------------------------
    async def connect(self) -> None:
        """Connect if not connected; concurrent callers share one attempt.

        Raises :class:`UpstreamUnavailable` when the server cannot be reached, or when a
        previous attempt failed less than the backoff delay ago (fail fast, no stampede).
        """
        if self.state is UpstreamState.READY and self._client is not None and not self._stale():
            return
        async with self._lock:
            if self.state is UpstreamState.READY and self._client is not None:
                if not self._stale():
                    return
                # It died while idle (nothing was in flight): reconnect now, no backoff.
                log.warning("upstream %s: connection lost while idle; reconnecting", self.name)
                if self._stop is not None:
                    self._stop.set()
                self._client = None
                self.last_error = "connection lost while idle"
            if self.state is UpstreamState.CLOSED:
                raise UpstreamUnavailable(f"server '{self.name}' is shut down", server=self.name)
            wait = self._next_attempt - time.monotonic()
            if wait > 0:
                raise UpstreamUnavailable(
                    f"server '{self.name}' is unavailable: {self.last_error}",
                    hint=f"Retry in {wait:.0f} s or use another tool.",
                    server=self.name,
                )
            await self._open()

    async def _open(self) -> None:
        self.state = UpstreamState.CONNECTING
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        self._stop = asyncio.Event()
        self._holder = asyncio.create_task(self._hold(ready, self._stop), name=f"upstream:{self.name}")
        try:
            await asyncio.wait_for(asyncio.shield(ready), self.config.connect_timeout)
        except BaseException as exc:
            self._stop.set()
            ready.cancel()  # abandoned: the holder must not leave an unretrieved exception
            self._holder.cancel()
            if isinstance(exc, asyncio.CancelledError):
                raise
            reason = (
                f"did not start within {self.config.connect_timeout:g} s"
                if isinstance(exc, TimeoutError)
                else _describe(exc)
            )
            self._failed(reason)
            raise UpstreamUnavailable(
                f"server '{self.name}' could not be started: {self.config.redact(reason)}",
                hint="Check its command/url in the config; toolscout retries with backoff.",
                server=self.name,
            ) from None
        self.state = UpstreamState.READY
        self.connected_at = time.time()
        self._backoff = BACKOFF_START
        self.last_error = None
        if self._ever_connected and self._on_reconnected is not None:
            self._spawn(self._on_reconnected(self))
        self._ever_connected = True

    async def _hold(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        """Own the SDK client for the whole connection (its context must exit in this task)."""
        from mcp import Client

        try:
            async with Client(
                self._transport(), mode="legacy", message_handler=self._on_message, cache=None
            ) as client:
                self._client = client
                if not ready.done():
                    ready.set_result(None)
                await stop.wait()
        except BaseException as exc:  # the session died: crash, closed pipe, cancelled
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(repr(exc)))
            elif not stop.is_set():
                self._failed(f"connection lost: {_describe(exc)}")
            if isinstance(exc, asyncio.CancelledError) and stop.is_set():
                return
        finally:
            self._client = None
        if not stop.is_set() and self.state is UpstreamState.READY:
            self._failed("connection closed by the server")

    def _transport(self) -> Any:
        cfg = self.config
        if cfg.command:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            params = StdioServerParameters(command=cfg.command, args=cfg.args, env=cfg.env or None, cwd=cfg.cwd)
            return stdio_client(params, errlog=_errlog())
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        assert cfg.url is not None
        http = create_mcp_http_client(headers=dict(cfg.headers) or None)
        return streamable_http_client(cfg.url, http_client=http)

    def _stale(self) -> bool:
        """The session's pipe closed under us (the process exited while idle)."""
        client = self._client
        return client is not None and bool(getattr(client.session._dispatcher, "_closed", False))

    def _failed(self, reason: str) -> None:
        if self.state is UpstreamState.CLOSED:
            return
        reason = self.config.redact(reason)
        self.state = UpstreamState.FAILED
        self.last_error = reason
        self._next_attempt = time.monotonic() + self._backoff
        delay = self._backoff
        self._backoff = min(self._backoff * 2, BACKOFF_MAX)
        log.warning("upstream %s: %s (retry in %.1f s)", self.name, reason, delay)
        if self._ever_connected and (self._retry_task is None or self._retry_task.done()):
            self._retry_task = self._spawn(self._retry_after(delay))

    async def _retry_after(self, delay: float) -> None:
        """Reconnect a server that was up and crashed, with growing delays."""
        while self.state is UpstreamState.FAILED:
            await asyncio.sleep(max(delay, self._next_attempt - time.monotonic()))
            if self.state is not UpstreamState.FAILED:
                return
            with contextlib.suppress(UpstreamUnavailable):
                await self.connect()
            delay = self._backoff

    async def _on_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if method == "notifications/tools/list_changed" and self._on_tools_changed is not None:
            # Never request from inside the receive loop: it would wait on itself.
            self._spawn(self._on_tools_changed(self))

    def _spawn(self, coro: Awaitable[Any]) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    async def aclose(self) -> None:
        self.state = UpstreamState.CLOSED
        if self._stop is not None:
            self._stop.set()
        for task in list(self._tasks):
            task.cancel()
        if self._holder is not None:
            try:
                await asyncio.wait_for(self._holder, 5)
            except BaseException:  # shutting down: a stuck child is killed with the process
                self._holder.cancel()

    # -- requests ---------------------------------------------------------------------
    async def _request(self, method: str, params: dict[str, Any] | None, timeout: float | None) -> dict[str, Any]:
        from mcp.shared.exceptions import MCPError

        await self.connect()
        client = self._client
        if client is None:
            raise UpstreamUnavailable(f"server '{self.name}' is not connected", server=self.name)
        dispatcher = client.session._dispatcher  # raw JSON: no result validation in between
        try:
            if timeout is None:
                return await dispatcher.send_raw_request(method, params, None)
            return await asyncio.wait_for(dispatcher.send_raw_request(method, params, None), timeout)
        except TimeoutError:
            raise ToolTimeout(
                f"server '{self.name}' did not answer {method} within {timeout:g} s", server=self.name
            ) from None
        except MCPError as exc:
            if exc.code == -32000 or "closed" in str(exc).lower():
                self._mark_dead(f"connection lost during {method}")
                raise UpstreamUnavailable(
                    f"server '{self.name}' closed the connection during {method}", server=self.name
                ) from None
            raise
        except (OSError, EOFError, RuntimeError) as exc:
            reason = self.config.redact(_describe(exc))
            self._mark_dead(reason)
            raise UpstreamUnavailable(f"server '{self.name}' failed: {reason}", server=self.name) from None

    def _mark_dead(self, reason: str) -> None:
        if self._stop is not None:
            self._stop.set()
        self._client = None
        self._failed(reason)

    async def list_tools(self) -> list[Any]:
        """Every tool the server lists, raw (one dict each), following ``nextCursor``."""
        tools: list[Any] = []
        cursor: str | None = None
        timeout = max(self.config.timeout or 60.0, 30.0)
        for _ in range(MAX_PAGES):
            page = await self._request("tools/list", {"cursor": cursor} if cursor else None, timeout)
            batch = page.get("tools")
            if isinstance(batch, list):
                tools.extend(batch)
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return tools
        log.warning("upstream %s: stopped listing after %d pages", self.name, MAX_PAGES)
        return tools

    async def call(self, tool: str, arguments: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Run ``tool`` (the upstream's own name); the raw ``CallToolResult`` dict."""
        self.calls += 1
        limit = timeout if timeout is not None else self.config.timeout
        return await self._request("tools/call", {"name": tool, "arguments": arguments}, limit)

    def status(self) -> dict[str, Any]:
        state = UpstreamState.FAILED if self._stale() else self.state
        return {
            "state": state.value,
            "last_error": self.last_error,
            "connected_at": self.connected_at,
            "calls": self.calls,
        }


def _errlog() -> Any:
    """Where an upstream's stderr goes: ours if it is a real file (not a captured stream)."""
    for stream in (sys.stderr, sys.__stderr__):
        try:
            if stream is not None:
                stream.fileno()
                return stream
        except (AttributeError, OSError, ValueError):
            continue
    return open(os.devnull, "w")  # lives as long as the process


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(e) for e in exc.exceptions[:3])
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
