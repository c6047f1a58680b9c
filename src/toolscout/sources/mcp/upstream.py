"""One connection to one upstream MCP server: started lazily, restarted with backoff.

Each upstream lives in its own task holding its own SDK client session (the notes found that
parallel connects through ``ClientSessionGroup`` raise), so a slow or stuck server never
holds up another. Requests go out as raw JSON-RPC through the session's dispatcher: a
``tools/list`` page is parsed tool by tool (one malformed tool must not sink the list) and a
``tools/call`` result is passed on exactly as the upstream sent it. A plain ``tools/call`` to
an HTTP server goes as one POST next to the session instead (:mod:`.thin_call`).

Upstreams speak the stateful 2025-11-25 protocol (``mode="legacy"``) so that
``notifications/tools/list_changed`` arrives on the session without a listen stream.

A server that fails (at its first start or later) is retried in the background: delays of
0.5 s doubling to 30 s, each scaled by a random factor in [0.8, 1.2]; each retry gives a slow
starter twice the previous start window, up to 120 s. A stdio server's stderr reaches ours
line by line, prefixed with its name and with its configured secrets masked.

Whether the connection is lost is the transport's word alone: an error the server answers,
whatever its code or wording ("Ticket 42 is closed", -32000), is that call's error; only a
closed stream or an exited process restarts the server, and then every call in flight gets
``upstream_unavailable`` naming the cause.

What a server sends the caller mid-call (sampling, elicitation, logs) goes back through
:mod:`.callers`; a stdio server's stderr through :mod:`.stderr_relay`; messages the SDK's
parser rejects are re-read by :mod:`.lenient`; failures read as :mod:`.problems` words them.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import functools
import logging
import os
import time
from collections.abc import Awaitable, Callable
from enum import StrEnum
from typing import IO, Any

from ...accounting import telemetry
from ...context import ProgressFn, current
from ...errors import ToolTimeout, UpstreamUnavailable
from . import negotiation
from .callers import CallerRelay
from .config import ServerConfig
from .http_client import pooled_client, streamable
from .lenient import lenient
from .problems import BACKOFF_MAX, RETRY_WINDOW_MAX, backoff_delay, describe, hint_for, http_problem
from .stderr_relay import StderrRelay, pump_stderr, write_stderr
from .thin_call import NO_PROGRESS, SessionExpired, ThinLane

# StderrRelay, backoff_delay, BACKOFF_MAX and http_problem are re-exported: callers import them from here
__all__ = ["BACKOFF_MAX", "StderrRelay", "Upstream", "UpstreamState", "backoff_delay", "http_problem"]

log = logging.getLogger("toolscout.mcp")

MAX_PAGES = 1000
"""A paginator that never ends must not hang the gateway."""
PING_TIMEOUT = 5.0
"""After a -32000 error over HTTP, how long a ping may take before the server counts as gone."""
_CONNECTION_CLOSED = -32000


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
        on_notice: Callable[[Upstream, str, dict[str, Any]], Awaitable[None]] | None = None,
    ) -> None:
        """``on_notice`` receives the server's notifications that concern more than one call
        (``notifications/resources/updated``, resource and prompt ``list_changed``)."""
        self.name = name
        self.config = config
        self._callers = CallerRelay(name, config)
        self._inflight = self._callers.inflight  # the calls in flight (read by the tests' waits)
        self.state = UpstreamState.IDLE
        self.last_error: str | None = None
        self.connected_at: float | None = None
        self.calls = 0
        self._on_tools_changed = on_tools_changed
        self._on_reconnected = on_reconnected
        self._on_notice = on_notice
        self._caps: tuple[Any, dict[str, Any]] = (None, {})  # (client, its server's capabilities)
        self._client: Any = None
        self._stop: asyncio.Event | None = None
        self._holder: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()
        self._failures = 0  # consecutive failed attempts; sets the backoff and the start window
        self._next_attempt = 0.0
        self._retry_task: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._holders: set[asyncio.Task[None]] = set()  # the live connection, abandoned attempts
        self._relays: set[asyncio.Task[None]] = set()
        self._ever_connected = False
        self._http_status: int | None = None  # the last HTTP error status this connection saw
        self._modern: Any = None  # the stateless lane next to the session, if any (:mod:`.negotiation`)
        self._modern_only: frozenset[str] = frozenset()  # tools only the stateless lane lists
        self._thin: ThinLane | None = None  # plain tools/call straight over HTTP (:mod:`.thin_call`)

    @property
    def description(self) -> str | None:
        """What this server is for: the operator's ``description``, else what the server says
        of itself when connected (``serverInfo`` description, else title), at most 500 characters."""
        if self.config.description:
            return self.config.description
        info = getattr(self._client, "server_info", None) if self._client is not None else None
        for said in (getattr(info, "description", None), getattr(info, "title", None)):
            if isinstance(said, str) and said.strip():
                return said.strip()[:500]
        return None

    @property
    def relay_guard(self) -> Callable[[str, dict[str, Any], Any], Awaitable[dict[str, Any]]] | None:
        """Forwards a sampling or elicitation request to the caller through the gateway's
        guard (:mod:`.callers`); ``None``: straight to the call's relay."""
        return self._callers.guard

    @relay_guard.setter
    def relay_guard(self, guard: Callable[[str, dict[str, Any], Any], Awaitable[dict[str, Any]]] | None) -> None:
        self._callers.guard = guard

    # -- lifecycle ------------------------------------------------------------------
    async def connect(self) -> None:
        """Connect if not connected; concurrent callers share one attempt.

        Raises :class:`UpstreamUnavailable` when the server cannot be reached, or when a
        previous attempt failed less than the backoff delay ago (fail fast, no stampede).
        """
        if self.state is UpstreamState.READY and self._client is not None and not self._stale():
            return
        try:  # a background retry may hold the lock with a long start window: wait ours only
            async with asyncio.timeout(self.config.connect_timeout):
                await self._lock.acquire()
        except TimeoutError:
            after = f" after: {self.last_error}" if self.last_error else ""
            raise UpstreamUnavailable(
                f"server '{self.name}' is still starting (a retry{after})",
                hint="Retry in a few seconds or use another tool.",
                server=self.name,
            ) from None
        try:
            await self._connect_locked()
        finally:
            self._lock.release()

    async def _connect_locked(self) -> None:
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
                hint=hint_for(self.last_error or "", f"Retry in {wait:.0f} s or use another tool."),
                server=self.name,
            )
        await self._open()

    async def _open(self, window: float | None = None) -> None:
        """Start the server and wait up to ``window`` s (default ``connectTimeout``) for it."""
        timeout = window or self.config.connect_timeout
        self.state = UpstreamState.CONNECTING
        self._http_status = None
        loop = asyncio.get_running_loop()
        ready: asyncio.Future[None] = loop.create_future()
        self._stop = asyncio.Event()
        # A fresh context: the connection outlives the call that opened it, so what the server
        # sends outside any call must not run as that first caller (its relay, its identity).
        self._holder = asyncio.create_task(
            self._hold(ready, self._stop), name=f"upstream:{self.name}", context=contextvars.Context()
        )
        self._holders.add(self._holder)  # an abandoned attempt still shuts its process down
        self._holder.add_done_callback(self._holders.discard)
        try:
            await asyncio.wait_for(asyncio.shield(ready), timeout)
        except BaseException as exc:
            self._stop.set()
            ready.cancel()  # abandoned: the holder must not leave an unretrieved exception
            self._holder.cancel()
            if isinstance(exc, asyncio.CancelledError):
                if self.state is UpstreamState.CONNECTING:
                    self.state = UpstreamState.IDLE
                raise
            reason = f"did not start within {timeout:g} s" if isinstance(exc, TimeoutError) else self._explain(exc)
            self._failed(reason)
            raise UpstreamUnavailable(
                f"server '{self.name}' could not be started: {self.config.redact(reason)}",
                hint=hint_for(reason, "Check its command/url in the config; toolscout retries it with backoff."),
                server=self.name,
                **({"http_status": self._http_status} if self._http_status else {}),
            ) from None
        self.state = UpstreamState.READY
        self.connected_at = time.time()
        reconnected = self._ever_connected or self._failures > 0
        self._failures = 0
        self.last_error = None
        # Its tools may have changed while it was away, or were never listed (a failed first
        # start): list them again, which is what makes a late server's tools appear.
        if reconnected and self._on_reconnected is not None:
            self._spawn(self._on_reconnected(self))
        self._ever_connected = True

    async def _hold(self, ready: asyncio.Future[None], stop: asyncio.Event) -> None:
        """Own the SDK client for the whole connection (its context must exit in this task)."""
        from mcp import Client

        errlog: IO[str] | None = None
        mine: Any = None
        thin: ThinLane | None = None
        try:
            transport, errlog, thin = self._transport(thin=True)
            async with Client(
                lenient(transport, self.name),
                mode="legacy",
                message_handler=self._on_message,
                cache=None,
                sampling_callback=self._callers.on_sampling if self.config.relays("sampling") else None,
                elicitation_callback=self._callers.on_elicitation if self.config.relays("elicitation") else None,
                logging_callback=self._callers.on_log,
            ) as client, negotiation.modern_lane(
                self.name, self.config.url, lambda: self._transport()[0], self.config.protocol != "legacy"
            ) as lane:
                self._client = mine = client
                self._modern = lane
                self._thin = thin
                if not ready.done():
                    ready.set_result(None)
                await stop.wait()
        except BaseException as exc:  # the session died: crash, closed pipe, cancelled
            if not ready.done():
                ready.set_exception(exc if isinstance(exc, Exception) else RuntimeError(repr(exc)))
            elif not stop.is_set():
                self._failed(f"connection lost: {self._explain(exc)}")
            if isinstance(exc, asyncio.CancelledError) and stop.is_set():
                return
        finally:
            if mine is not None and self._client is mine:  # never clear a newer connection's
                self._client = None
                self._modern = None
                self._thin = None
            if errlog is not None:  # the relay sees EOF once the process tree has exited too
                errlog.close()
        if not stop.is_set() and self.state is UpstreamState.READY:
            self._failed("connection closed by the server")

    def _transport(self, *, thin: bool = False) -> tuple[Any, IO[str] | None, ThinLane | None]:
        """The SDK transport for this server, the stderr pipe its process writes into, and
        (``thin``, over HTTP) the thin lane of its plain calls around the transport."""
        cfg = self.config
        if cfg.command:
            from mcp.client.stdio import StdioServerParameters, stdio_client

            params = StdioServerParameters(command=cfg.command, args=cfg.args, env=cfg.env or None, cwd=cfg.cwd)
            read_fd, write_fd = os.pipe()
            relay = asyncio.ensure_future(pump_stderr(read_fd, StderrRelay(self.name, cfg, write_stderr)))
            self._relays.add(relay)
            relay.add_done_callback(self._relays.discard)
            errlog = os.fdopen(write_fd, "w")
            return stdio_client(params, errlog=errlog), errlog, None
        assert cfg.url is not None
        http = pooled_client(headers=dict(cfg.headers) or None)  # kept alive across calls
        http.event_hooks = {"response": [self._saw_response]}
        if not thin:
            return streamable(cfg.url, http), None, None
        lane = ThinLane(cfg.url, http)
        http.event_hooks["response"].append(lane.saw)
        return lane.wrap(streamable(cfg.url, http)), None, lane

    async def _saw_response(self, response: Any) -> None:
        """Remember an HTTP error status: the SDK reports every one as the same bare text."""
        if response.status_code >= 400:
            self._http_status = response.status_code

    def _explain(self, exc: BaseException) -> str:
        """``exc`` as a reason for status and errors, with the HTTP status when there was one."""
        text = describe(exc)
        if self._http_status is not None and "returned an error response" in text:
            return http_problem(self._http_status)
        return text

    def _stale(self) -> bool:
        """The session's pipe closed under us (the process exited while idle)."""
        client = self._client
        return client is not None and bool(getattr(client.session._dispatcher, "_closed", False))

    def _failed(self, reason: str) -> None:
        if self.state is UpstreamState.CLOSED:
            return
        reason = self.config.redact(reason)
        repeated = reason == self.last_error
        self.state = UpstreamState.FAILED
        self.last_error = reason
        self._failures += 1
        delay = backoff_delay(self._failures)
        self._next_attempt = time.monotonic() + delay
        # A server down for hours retries every 30 s: say so once per distinct reason.
        log.log(
            logging.INFO if repeated else logging.WARNING,
            "upstream %s: %s (retry in %.1f s)",
            self.name,
            reason,
            delay,
        )
        if self._retry_task is None or self._retry_task.done():
            self._retry_task = self._spawn(self._retry())

    async def _retry(self) -> None:
        """Reconnect a failed server in the background (first start or crash), with backoff.

        At most one attempt runs at a time; each gives the server twice the previous start
        window (from ``connectTimeout`` up to :data:`RETRY_WINDOW_MAX`), so a slow starter
        comes up eventually, while callers still wait only ``connectTimeout`` for it.
        """
        while self.state is UpstreamState.FAILED:
            await asyncio.sleep(max(0.0, self._next_attempt - time.monotonic()))
            async with self._lock:
                if self.state is not UpstreamState.FAILED:
                    return
                if self._next_attempt > time.monotonic():  # a caller's attempt failed meanwhile
                    continue
                base = self.config.connect_timeout
                window = min(base * 2 ** min(self._failures, 16), max(base, RETRY_WINDOW_MAX))
                with contextlib.suppress(UpstreamUnavailable):
                    await self._open(window)

    async def _on_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if method == "notifications/tools/list_changed" and self._on_tools_changed is not None:
            # Never request from inside the receive loop: it would wait on itself.
            self._spawn(self._on_tools_changed(self))
        elif method in _NOTICES and self._on_notice is not None:
            params = getattr(message, "params", None)
            raw = params.model_dump(by_alias=True, mode="json", exclude_none=True) if params is not None else {}
            self._spawn(self._on_notice(self, method, raw))

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
        # Holders (the live one and abandoned attempts) shut their processes down; bounded.
        if self._holders:
            _, stuck = await asyncio.wait(list(self._holders), timeout=5)
            for task in stuck:  # shutting down: a stuck child is killed with the process
                task.cancel()
        if self._relays:  # a dying server's last stderr lines, bounded
            _, stuck = await asyncio.wait(list(self._relays), timeout=2)
            for task in stuck:
                task.cancel()

    # -- requests ---------------------------------------------------------------------
    async def _request(
        self,
        method: str,
        params: dict[str, Any] | None,
        timeout: float | None,
        progress: ProgressFn | None = None,
        *,
        modern: bool | None = None,
        renewed: bool = False,
    ) -> dict[str, Any]:
        """Send one request (on the lane :mod:`.negotiation` picks, unless ``modern`` says); cancelling the caller's task cancels it at the server too (the
        SDK's dispatcher sends ``notifications/cancelled`` for an abandoned request)."""
        from mcp.shared.exceptions import MCPError

        await self.connect()
        client = self._client
        if client is None:
            raise UpstreamUnavailable(f"server '{self.name}' is not connected", server=self.name)
        lane = self._modern
        if modern is None:
            modern = lane is not None and negotiation.wants_modern(method, params, self._modern_only)
        if modern and lane is not None:
            client = lane
        sent, opts = negotiation.prepare(self.name, client, bool(modern and lane is not None), method, params)
        dispatcher = client.session._dispatcher  # raw JSON: no result validation in between
        # With a progress callback the dispatcher adds a progressToken and routes the
        # server's notifications/progress for this request to it.
        if progress is not None:
            opts["on_progress"] = progress
        thin = self._thin if method == "tools/call" and progress is None and client is self._client else None
        token = self._callers.enter()
        try:
            if thin is not None and thin.usable() and not opts:
                send = thin.call_or(dispatcher, sent)
            else:
                send = dispatcher.send_raw_request(method, sent, opts or None)
            raw = await (send if timeout is None else asyncio.wait_for(send, timeout))
            if negotiation.is_input_required(raw) and client is lane:  # a stateful client answers it now
                send = functools.partial(self._request, method, timeout=timeout, progress=progress, modern=True)
                raw = await negotiation.drive(raw, current().relay, negotiation.again(params, send))
            negotiation.note_answer(self.name, method, params, raw)
            return raw
        except SessionExpired:
            if renewed:
                raise UpstreamUnavailable(
                    f"server '{self.name}' forgot the new session at once (HTTP 404)", server=self.name
                ) from None
            await self._renew(client)  # nothing ran: the call goes again on a new session
            return await self._request(method, params, timeout, progress, modern=modern, renewed=True)
        except TimeoutError:
            raise ToolTimeout(
                f"server '{self.name}' did not answer {method} within {timeout:g} s", server=self.name
            ) from None
        except MCPError as exc:
            negotiation.note_error(exc)
            if self._lost(client) or (
                exc.code == _CONNECTION_CLOSED and client is not lane and not await self._answers(client)
            ):
                # The transport's word, never the error's code or text: its stream closed, or
                # (HTTP, where a broken response stream reads like a -32000 error) a ping fails.
                cause = self.last_error or "connection lost"
                raise UpstreamUnavailable(
                    f"server '{self.name}' lost its connection during {method}: {cause}",
                    hint="toolscout restarts it in the background; retry the call shortly.",
                    server=self.name,
                ) from None
            problem = self._explain(exc)
            if problem.startswith("HTTP "):
                raise UpstreamUnavailable(
                    f"server '{self.name}' failed {method}: {problem}",
                    hint=hint_for(problem, None),
                    server=self.name,
                    http_status=self._http_status,
                ) from None
            raise
        except (OSError, EOFError, RuntimeError) as exc:
            reason = self.config.redact(describe(exc))
            self._mark_dead(reason)
            raise UpstreamUnavailable(f"server '{self.name}' failed: {reason}", server=self.name) from None
        finally:
            self._callers.leave(token)

    async def _renew(self, client: Any) -> None:
        """A new session at once (no backoff): the server answered that it no longer knows
        ours, which says it is up. The first caller to notice opens it; the others wait."""
        async with self._lock:
            if self._client is not client:
                return  # renewed (or lost) meanwhile
            log.info("upstream %s: the server no longer knows our session; opening a new one", self.name)
            if self._stop is not None:
                self._stop.set()
            self._client = None
            self._thin = None
            await self._open()

    async def _answers(self, client: Any) -> bool:
        """Whether an HTTP server still answers a ping (stdio: the pipe's state says it all)."""
        if self.config.transport != "http":
            return True
        try:
            await asyncio.wait_for(client.session._dispatcher.send_raw_request("ping", None, None), PING_TIMEOUT)
            return True
        except Exception:
            if self._client is client:
                self._mark_dead("connection lost: the server does not answer")
            return False

    def _lost(self, client: Any) -> bool:
        """Whether ``client``'s connection is gone (its stream closed, its process exited);
        marks the server failed then, once, so it restarts."""
        dispatcher = client.session._dispatcher
        if not (getattr(dispatcher, "_closed", False) or not getattr(dispatcher, "_running", True)):
            return False
        if self._client is client:  # first to notice: the holder may not have yet
            self._mark_dead("connection lost: the server closed its stream or exited")
        return True

    def _mark_dead(self, reason: str) -> None:
        if self._stop is not None:
            self._stop.set()
        self._client = None
        self._failed(reason)

    async def list_tools(self) -> list[Any]:
        """Every tool the server lists, raw (one dict each), following ``nextCursor``; with a
        stateless lane, what either revision lists (:func:`.negotiation.merge_tools`)."""
        stateful = await self._list_tools(False)
        modern = None
        if self._modern is not None:
            try:
                modern = await self._list_tools(True)
            except Exception as exc:  # a server whose newer side fails: what its stateful side lists
                log.warning("upstream %s: listing tools on %s failed (%s); listing the session's only", self.name, negotiation.MODERN, exc)
        tools, self._modern_only = negotiation.merge_tools(stateful, modern)
        return tools

    async def _list_tools(self, modern: bool) -> list[Any]:
        tools: list[Any] = []
        cursor: str | None = None
        timeout = max(self.config.timeout or 60.0, 30.0)
        for _ in range(MAX_PAGES):
            page = await self._request("tools/list", {"cursor": cursor} if cursor else None, timeout, modern=modern)
            batch = page.get("tools")
            if isinstance(batch, list):
                tools.extend(batch)
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return tools
        log.warning("upstream %s: stopped listing after %d pages", self.name, MAX_PAGES)
        return tools

    async def call(
        self,
        tool: str,
        arguments: dict[str, Any],
        timeout: float | None = None,
        *,
        progress: ProgressFn | None = None,
    ) -> dict[str, Any]:
        """Run ``tool`` (the upstream's own name); the raw ``CallToolResult`` dict.

        ``progress`` receives the server's ``notifications/progress`` for this call.
        """
        self.calls += 1
        if progress is NO_PROGRESS:  # the caller asked for none: nothing to route back
            progress = None
        limit = timeout if timeout is not None else self.config.timeout
        params: dict[str, Any] = {"name": tool, "arguments": arguments}
        with telemetry.stage("upstream"):  # a span while tracing: the upstream's own spans go under it
            trace = telemetry.outgoing()  # the client's trace goes on upstream (docs/telemetry.md)
            if trace:
                params["_meta"] = dict(trace)
            return await self._request("tools/call", params, limit, progress)

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Any other request (resources, prompts, completions), raw, with this server's timeout;
        a list the stateless lane fails to give is asked of the session, a prompt or resource
        the session does not have is asked of the stateless lane."""
        timeout = max(self.config.timeout or 60.0, 30.0)
        if self._modern is None:
            return await self._request(method, params, timeout)
        send = functools.partial(self._request, method, params, timeout)
        return await negotiation.with_fallback(self.name, method, params, self._modern_only, send)

    def capabilities(self) -> dict[str, Any]:
        """What the connected server declared (empty when not connected); read once per connection."""
        client = self._client
        if client is None:
            return {}
        if self._caps[0] is not client:
            caps = getattr(getattr(client, "session", None), "server_capabilities", None)
            self._caps = (client, caps.model_dump(by_alias=True, mode="json", exclude_none=True) if caps is not None else {})
        return self._caps[1]

    def retry_in(self) -> float | None:
        """Seconds until the next background retry of a failed server, else ``None``."""
        if self.state is not UpstreamState.FAILED or self._retry_task is None or self._retry_task.done():
            return None
        return round(max(0.0, self._next_attempt - time.monotonic()), 1)

    def status(self) -> dict[str, Any]:
        state = UpstreamState.FAILED if self._stale() else self.state
        return {
            "state": state.value,
            "last_error": self.last_error,
            "retry_in": self.retry_in(),
            "connected_at": self.connected_at,
            "calls": self.calls,
        }


_NOTICES = frozenset(
    {
        "notifications/resources/updated",
        "notifications/resources/list_changed",
        "notifications/prompts/list_changed",
    }
)
