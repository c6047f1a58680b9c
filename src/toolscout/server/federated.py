"""The MCP surface of a transparent gateway: what upstreams offer besides tools.

:class:`ClientRelay` is the :class:`~toolscout.context.Relay` a ``tools/call`` carries: an
upstream's sampling and elicitation requests and its log messages during that call go back
on the call's own channel, to that client only. :class:`FederatedMCP` serves upstream
resources, resource templates, prompts and completions (named as
:mod:`toolscout.sources.mcp.federation` says, each under the same visibility rule as
tools), relays ``resources/subscribe`` with its update notifications and the upstreams'
``list_changed``, and keeps each client's ``logging/setLevel``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import weakref
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from ..access.guard import Guard, Operation
from ..context import CallContext
from ..errors import ToolscoutError
from ..model import Annotations, Tool
from ..sources.mcp.aggregator import Aggregator

__all__ = ["LOG_LEVELS", "ClientRelay", "FederatedMCP"]

log = logging.getLogger("toolscout.mcp")

LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
LEVEL_TTL = 24 * 3600.0
"""How long a session's log level is kept in the shared store after it was last set."""
_READ_ONLY = Annotations.from_mcp({"readOnlyHint": True})
_CAPABILITY = {"sampling": "sampling", "elicitation": "elicitation", "roots": "roots"}


class ClientRelay:
    """The client behind one request (``ctx``: the SDK's request context), for an upstream.

    Requests go on the request's own outbound channel (on streamable HTTP, the call's
    response stream), so they reach this client and no other. ``level`` is the client's
    ``logging/setLevel`` (``None``: everything); on stateless protocol revisions the
    request's own log opt-in decides instead (the SDK applies it).
    """

    def __init__(self, ctx: Any, level: Callable[[], str | None], shared: Callable[[], Awaitable[str | None]] | None = None) -> None:
        """``shared``: the level kept for this session where every replica reads it (the
        client may have set it on another replica), asked once when this replica has none."""
        self._ctx = ctx
        self._level = level
        self._shared = shared
        self._lookup: asyncio.Future[str | None] | None = None  # one lookup, awaited by every message

    def supports(self, capability: str) -> bool:
        import mcp_types as types

        session = self._ctx.session
        if not getattr(session, "can_send_request", False):  # stateless: no back channel
            return False
        field = _CAPABILITY.get(capability)
        if field is None:
            return False
        wanted = {
            "sampling": types.ClientCapabilities(sampling=types.SamplingCapability()),
            "elicitation": types.ClientCapabilities(elicitation=types.ElicitationCapability()),
            "roots": types.ClientCapabilities(roots=types.RootsCapability()),
        }[field]
        try:
            return bool(session.check_client_capability(wanted))
        except Exception:
            return False

    async def request(self, method: str, params: Mapping[str, Any] | None) -> dict[str, Any]:
        # The request-scoped channel (the SDK keeps it private): related to this call.
        return await self._ctx.session._request_outbound.send_raw_request(method, params, None)

    async def notify(self, method: str, params: Mapping[str, Any] | None) -> None:
        if method == "notifications/message" and self._shared is not None and self._level() is None:
            # Messages of one call may arrive concurrently: all wait for the same lookup, so
            # none passes before the level another replica kept is known.
            if self._lookup is None:
                self._lookup = asyncio.ensure_future(self._shared())
            found = None
            with contextlib.suppress(Exception):  # Redis away: everything, as before a setLevel
                found = await asyncio.shield(self._lookup)
            if found is not None:
                self._level = lambda: found
        if method == "notifications/message" and not self._wants(params):
            return
        await self._ctx.session._request_outbound.notify(method, params)

    def _wants(self, params: Mapping[str, Any] | None) -> bool:
        level = (params or {}).get("level")
        allowed = getattr(self._ctx.session, "_allowed_log_levels", None)
        if allowed is not None and getattr(self._ctx.session, "_log_is_request_scoped", False):
            return level in allowed
        floor = self._level()
        if floor is None or level not in LOG_LEVELS or floor not in LOG_LEVELS:
            return True
        return LOG_LEVELS.index(level) >= LOG_LEVELS.index(floor)


class FederatedMCP:
    """Upstream resources, templates, prompts and completions on the gateway's MCP server.

    ``visible(ctx, tool)`` is the surface's visibility rule for this request's caller;
    ``own_resources`` lists the gateway's own resources (capabilities, skills), which come
    first and are read by ``own_read`` (``None``: not one of ours).
    """

    def __init__(
        self,
        aggregator: Aggregator | None,
        visible: Callable[[Any, Tool], bool],
        *,
        guard: Guard | None = None,
        caller: Callable[[Any], CallContext] | None = None,
    ) -> None:
        self.aggregator = aggregator
        self.federation = aggregator.federation if aggregator is not None else None
        self._visible = visible
        self.guard = guard or Guard(_NOBODY_HIDDEN)
        self._caller = caller or (lambda ctx: CallContext())
        for kind, handler in _HANDLERS.items():  # the upstream fetches run only through the guard
            if not self.guard.handles(kind):
                self.guard.register(kind, handler)
        self._levels: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self._subscribers: dict[str, weakref.WeakSet[Any]] = {}  # outer uri -> connections
        self._connections: weakref.WeakSet[Any] = weakref.WeakSet()  # for list_changed
        self.shared: Any = None
        """The :class:`~toolscout.sessions.redis.RedisSessionStore` replicas share, if any:
        each session's log level is kept there too."""
        self.round_trips: Any = None
        """``(RoundTrips, ctx -> (principal id, stateless?))``: multi-round-trip prompts and
        reads pass through (:mod:`.input_required`); set by the gateway's server."""
        if aggregator is not None:
            aggregator.notice_listeners.append(self._on_notice)

    # -- wiring -----------------------------------------------------------------------------
    def install(self, lowlevel: Any) -> None:
        """Register the handlers on the SDK server (``resources/list`` and ``resources/read``
        stay the gateway's, which call :meth:`list` and :meth:`read`)."""
        import mcp_types as types

        add = lowlevel.add_request_handler
        add("resources/templates/list", types.PaginatedRequestParams, self._list_templates)
        add("resources/subscribe", types.SubscribeRequestParams, self._subscribe)
        add("resources/unsubscribe", types.UnsubscribeRequestParams, self._unsubscribe)
        add("prompts/list", types.PaginatedRequestParams, self._list_prompts)
        add("prompts/get", types.GetPromptRequestParams, self._get_prompt)
        add("completion/complete", types.CompleteRequestParams, self._complete)
        add("logging/setLevel", types.SetLevelRequestParams, self._set_level)

    def relay(self, ctx: Any) -> ClientRelay:
        """The relay for one request's client (put in its call's context)."""
        conn = getattr(ctx.session, "_connection", None)
        self._seen(conn)
        sid, shared = getattr(conn, "session_id", None), self.shared
        remote = (lambda: shared.aget_note(f"log-level:{sid}")) if shared is not None and sid else None
        return ClientRelay(ctx, lambda: self._levels.get(conn) if conn is not None else None, remote)

    def _seen(self, conn: Any) -> None:
        if conn is not None:
            with contextlib.suppress(TypeError):
                self._connections.add(conn)

    # -- visibility -------------------------------------------------------------------------
    def _allowed(self, ctx: Any) -> Callable[[str, str, str], bool]:
        def visible(server: str, kind: str, name: str) -> bool:
            entry = _entry(server, kind, name)
            return entry is not None and self._visible(ctx, entry)

        return visible

    async def _guarded(self, ctx: Any, kind: str, key: str, server: str, entry_kind: str, params: dict[str, Any]) -> Any:
        """Run one request through the guard; a hidden entry answers as an unknown one."""
        from mcp.shared.exceptions import MCPError

        assert self.federation is not None
        entry = _entry(server, entry_kind, self.federation.outer_name(server, entry_kind) if entry_kind == "resource" else key)
        if entry is None:
            raise _unknown(entry_kind, key)
        op = Operation(kind, key, entry=entry, params=params, payload=self.federation)
        try:
            return await self.guard.run(op, self._caller(ctx), hidden=lambda: _unknown(entry_kind, key))
        except MCPError:
            raise
        except ToolscoutError as exc:
            raise MCPError(code=-32603, message=f"{exc.code}: {exc.message}") from None

    # -- handlers ---------------------------------------------------------------------------
    async def list(self, ctx: Any, what: str) -> list[dict[str, Any]]:
        """Upstream entries of ``what`` this caller may see (``[]`` without upstreams)."""
        self._seen(getattr(ctx.session, "_connection", None))
        if self.federation is None:
            return []
        return await self.federation.list(what, self._allowed(ctx))

    async def read(self, ctx: Any, uri: str, params: Any = None) -> dict[str, Any]:
        fed = self._need()
        server, _ = await self._route(fed.route_uri, uri, "resource")
        result: dict[str, Any] = await self._round_trip(
            ctx, "resources/read", uri, None, params,
            lambda: self._guarded(ctx, "resources/read", uri, server, "resource", {}),
        )
        return result

    async def _list_templates(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        return types.ListResourceTemplatesResult.model_validate(
            {"resourceTemplates": await self.list(ctx, "resourceTemplates")}
        )

    async def _list_prompts(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        return types.ListPromptsResult.model_validate({"prompts": await self.list(ctx, "prompts")})

    async def _get_prompt(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        fed = self._need()
        server, _ = await self._route(fed.route_name, params.name, "prompt")
        arguments = dict(params.arguments or {})
        result = await self._round_trip(
            ctx, "prompts/get", params.name, params.arguments, params,
            lambda: self._guarded(ctx, "prompts/get", params.name, server, "prompt", arguments),
        )
        if result.get("resultType") == "input_required":
            return types.InputRequiredResult.model_validate(result)
        return types.GetPromptResult.model_validate(result)

    async def _round_trip(self, ctx: Any, method: str, name: str, arguments: Any, params: Any, run: Any) -> Any:
        """One guarded upstream request that may answer ``input_required`` (hooks of
        :mod:`.input_required`): ``run()`` goes through the guard inside the round trip's scope."""
        if self.round_trips is None:
            return await run()
        trips, who = self.round_trips
        principal, stateless = who(ctx)
        binding = trips.binding(principal, method, name, arguments)
        with trips.scope(await trips.begin(ctx, params, stateless, binding)) as ex:
            result = await run()
        return await trips.finish(ex, result, binding)

    async def _complete(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        fed = self._need()
        raw = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        raw.pop("_meta", None)
        ref = raw.get("ref") or {}
        if ref.get("type") == "ref/prompt":
            key, kind = str(ref.get("name", "")), "prompt"
            server, _ = await self._route(fed.route_name, key, kind)
        else:
            key, kind = str(ref.get("uri", "")), "resource"
            server, _ = await self._route(fed.route_uri, key, kind)
        result = await self._guarded(ctx, "completion/complete", key, server, kind, {"completion": raw})
        return types.CompleteResult.model_validate(result)

    async def _subscribe(self, ctx: Any, params: Any) -> Any:
        return await self._subscription(ctx, str(params.uri), True)

    async def _unsubscribe(self, ctx: Any, params: Any) -> Any:
        return await self._subscription(ctx, str(params.uri), False)

    async def _subscription(self, ctx: Any, uri: str, on: bool) -> Any:
        import mcp_types as types

        fed = self._need()
        server, _ = await self._route(fed.route_uri, uri, "resource")
        entry = _entry(server, "resource", fed.outer_name(server, "resource"))
        if entry is None:
            raise _unknown("resource", uri)
        op = Operation("resources/subscribe", uri, entry=entry, screen=False, payload=fed)
        await self.guard.run(op, self._caller(ctx), hidden=lambda: _unknown("resource", uri))  # decides and audits
        conn = getattr(ctx.session, "_connection", None)
        subscribers = self._subscribers.setdefault(uri, weakref.WeakSet())
        if on:
            first = not subscribers
            if conn is not None:
                subscribers.add(conn)
            if first:  # one upstream subscription however many clients watch the URI
                await self._upstream(fed.subscribe(uri, True))
        else:
            if conn is not None:
                subscribers.discard(conn)
            if not subscribers:
                self._subscribers.pop(uri, None)
                await self._upstream(fed.subscribe(uri, False))
        return types.EmptyResult()

    async def _set_level(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        conn = getattr(ctx.session, "_connection", None)
        if conn is not None:
            self._levels[conn] = str(params.level)
            sid = getattr(conn, "session_id", None)
            if self.shared is not None and sid:  # the session's next request may reach another replica
                try:
                    await self.shared.aput_note(f"log-level:{sid}", str(params.level), LEVEL_TTL)
                except Exception as exc:  # Redis away: this replica still knows it
                    log.warning("log level of session %s kept on this replica only: %s", str(sid)[:8], exc)
        return types.EmptyResult()

    # -- upstream notifications -------------------------------------------------------------
    async def _on_notice(self, server: str, method: str, params: dict[str, Any]) -> None:
        if self.federation is None:
            return
        if method == "notifications/resources/updated":
            uri = self.federation.outer_uri(server, str(params.get("uri", "")))
            targets = list(self._subscribers.get(uri, ()))
            params = {**params, "uri": uri}
        else:  # list_changed: every client may list again
            targets = list(self._connections)
        for conn in targets:
            await _notify(conn, method, params)

    # -- helpers ----------------------------------------------------------------------------
    def _need(self) -> Any:
        from mcp.shared.exceptions import MCPError

        if self.federation is None:
            raise MCPError(code=-32601, message="this gateway has no upstream servers")
        return self.federation

    async def _route(self, route: Callable[[str], tuple[str, str]], key: str, kind: str) -> tuple[str, str]:
        assert self.federation is not None
        await self.federation.warm()
        try:
            return route(key)
        except ToolscoutError:
            raise _unknown(kind, key) from None

    @staticmethod
    async def _upstream(pending: Awaitable[Any]) -> Any:
        """An upstream's own error passes through as it is; toolscout's as a JSON-RPC error."""
        from mcp.shared.exceptions import MCPError

        try:
            return await pending
        except MCPError:
            raise
        except ToolscoutError as exc:
            raise MCPError(code=-32603, message=f"{exc.code}: {exc.message}") from None


def _entry(server: str, kind: str, name: str) -> Tool | None:
    """What the visibility rule judges for an upstream resource or prompt."""
    try:
        return Tool(
            name,
            f"{kind} of {server}",
            source="mcp",
            source_id=server,
            category=server,
            annotations=_READ_ONLY,
            meta={"server": server, "kind": kind},
        )
    except (TypeError, ValueError, ToolscoutError):
        return None


def _unknown(kind: str, key: str) -> Exception:
    """The one answer for a resource or prompt that does not exist or that this caller may
    not see: the same code and message either way (hidden means absent)."""
    from mcp.shared.exceptions import MCPError

    return MCPError(code=-32002, message=f"unknown {kind} {key}")


class _NoPolicy:
    """The visibility of a FederatedMCP built without a gateway (tests of the relay alone)."""

    @staticmethod
    def admits(entry: Tool, allow: Any = None) -> bool:
        return allow is None or bool(allow(entry))


_NOBODY_HIDDEN: Any = _NoPolicy()


async def _fetch_read(op: Operation, ctx: CallContext) -> dict[str, Any]:
    _, result = await FederatedMCP._upstream(op.payload.read(op.name))
    out: dict[str, Any] = result
    return out


async def _fetch_prompt(op: Operation, ctx: CallContext) -> dict[str, Any]:
    _, result = await FederatedMCP._upstream(op.payload.get_prompt(op.name, dict(op.params) or None))
    out: dict[str, Any] = result
    return out


async def _fetch_completion(op: Operation, ctx: CallContext) -> dict[str, Any]:
    _, result = await FederatedMCP._upstream(op.payload.complete(dict(op.params["completion"])))
    out: dict[str, Any] = result
    return out


async def _admit_subscription(op: Operation, ctx: CallContext) -> dict[str, Any]:
    return {}  # the subscription itself is shared across clients (one upstream subscription per URI)


_HANDLERS = {
    "resources/read": _fetch_read,
    "prompts/get": _fetch_prompt,
    "completion/complete": _fetch_completion,
    "resources/subscribe": _admit_subscription,
}


async def _notify(conn: Any, method: str, params: dict[str, Any]) -> None:
    try:
        await conn.notify(method, params)
    except Exception as exc:  # gone, or no standalone stream: this client misses it
        log.debug("%s not delivered: %s", method, exc)
