"""The toolscout MCP server: ``find_tools`` and ``call_tool`` in front of every upstream tool.

``tools/list`` shows the two meta-tools plus always-load tools. On a stateful session
(protocol 2025-11-25) the tools ``find_tools`` returns also join *that session's*
``tools/list`` and ``notifications/tools/list_changed`` is sent, so the client can call
them by name; the reveal set is per session, bounded (oldest dropped first) and never
shared. Stateless clients (2026-07-28) find, then run through ``call_tool``.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from ..errors import InvalidRequest, NotRevealed, ToolscoutError, UnknownTool
from ..formats import render
from ..gateway import Gateway
from ..model import CallResult, DeferPolicy, Tool
from ..sources.mcp.aggregator import Aggregator
from .capabilities import CAPABILITIES_URI, capabilities
from .guard import BearerGuard, HostOriginGuard
from .stdio import DEFAULT_MAX_MESSAGE_BYTES, stdio_transport

__all__ = ["GatewayServer"]

log = logging.getLogger("toolscout.mcp")

MAX_SESSIONS = 10_000
"""Reveal sets kept at once; the least recently active session is forgotten first."""
META = ("find_tools", "call_tool")
RUNNING = (
    "\n\n## Running tools\n"
    "Run a found tool with `call_tool(name, arguments)`. On clients that refresh their tool "
    "list, found tools also become callable by name."
)


class GatewayServer:
    """Serves one :class:`Gateway` (usually fed by an :class:`Aggregator`) over MCP."""

    def __init__(
        self,
        gateway: Gateway,
        aggregator: Aggregator | None = None,
        *,
        max_revealed: int = 64,
        name: str = "toolscout",
    ) -> None:
        from mcp.server.lowlevel.server import NotificationOptions, Server

        self.gateway = gateway
        self.aggregator = aggregator
        self.max_revealed = max_revealed
        self._sessions: OrderedDict[Any, OrderedDict[str, None]] = OrderedDict()
        self._peers: dict[str, weakref.ref[Any]] = {}  # session key -> its connection (to notify)
        self._conn_keys: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self._tasks: set[asyncio.Task[Any]] = set()
        gateway.catalog.subscribe(self._on_catalog_change)
        self._meta_cache: tuple[int, list[dict[str, Any]]] | None = None
        self._always: tuple[int, dict[str, Tool]] | None = None
        self.version = _version()
        self.lowlevel: Any = Server(
            name,
            version=self.version,
            instructions=self.instructions(),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_read_resource=self._read_resource,
        )
        # Advertise tools.listChanged on every transport (the HTTP session manager builds
        # its initialize result from this method with no arguments).
        build = self.lowlevel.create_initialization_options
        self.lowlevel.create_initialization_options = lambda *a, **k: build(
            *(a or (NotificationOptions(tools_changed=True),)), **k
        )

    # -- sessions -------------------------------------------------------------------
    @staticmethod
    def _stateful(ctx: Any) -> bool:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        return ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS

    def _session_key(self, ctx: Any) -> str:
        """A key unique to this client connection for its whole life (never reused, unlike
        ``id()``); its reveal set is dropped when the connection object goes away."""
        conn = getattr(ctx.session, "_connection", None)
        if conn is None:
            return "-"
        key = self._conn_keys.get(conn)
        if key is None:
            key = getattr(conn, "session_id", None) or uuid.uuid4().hex
            self._conn_keys[conn] = key
            self._peers[key] = weakref.ref(conn)
            weakref.finalize(conn, self._forget, key)
        return key

    def _forget(self, key: str) -> None:
        self._sessions.pop(key, None)
        self._peers.pop(key, None)

    def revealed(self, ctx: Any) -> OrderedDict[str, None]:
        key = self._session_key(ctx)
        found = self._sessions.get(key)
        if found is None:
            found = self._sessions[key] = OrderedDict()
            while len(self._sessions) > MAX_SESSIONS:
                gone, _ = self._sessions.popitem(last=False)
                self._peers.pop(gone, None)
        else:
            self._sessions.move_to_end(key)
        return found

    def instructions(self) -> str:
        """The gateway's system prompt (categories = servers) plus how to run what is found."""
        return self.gateway.system_prompt() + RUNNING

    def _on_catalog_change(self, change: Any) -> None:
        """Keep the instructions current, and tell each stateful session whose tools/list this change alters (an upstream
        refreshed: always-load tools came or went, or a revealed tool disappeared)."""
        self.lowlevel.instructions = self.instructions()
        before = set(self._always[1]) if self._always is not None else set()
        touched = set(change.added) | set(change.removed)
        if not touched or not self._peers:
            return
        always = self.always_loaded()
        everyone = before != set(always) or any(n in always for n in touched)
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        for key, ref in list(self._peers.items()):
            peer = ref()
            shown = self._sessions.get(key)
            if peer is None or shown is None:  # gone, or a stateless connection (never revealed)
                continue
            if everyone or any(n in shown for n in touched):
                task = loop.create_task(_notify_peer(peer))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    def _reveal(self, ctx: Any, names: Iterable[str]) -> bool:
        shown = self.revealed(ctx)
        changed = False
        for name in names:
            if name in shown:
                shown.move_to_end(name)
                continue
            shown[name] = None
            changed = True
        while len(shown) > self.max_revealed:
            shown.popitem(last=False)
        return changed

    # -- tools/list -----------------------------------------------------------------------
    def meta_tools(self) -> list[dict[str, Any]]:
        """find_tools and call_tool; call_tool carries the least permissive hints of all it reaches."""
        gen = self.gateway.catalog.generation
        if self._meta_cache is not None and self._meta_cache[0] == gen:
            return self._meta_cache[1]
        tools = self.gateway.meta_tools("mcp", call_tool=True)
        hints = least_permissive(self.gateway.catalog)
        for t in tools:
            if t["name"] == "find_tools":
                t["annotations"] = {"readOnlyHint": True, "openWorldHint": False}
            elif t["name"] == "call_tool":
                t["annotations"] = hints
        self._meta_cache = (gen, tools)
        return tools

    def always_loaded(self) -> dict[str, Tool]:
        """Tools listed to every session (defer policy ``never``), recomputed per catalog change."""
        catalog = self.gateway.catalog
        if self._always is None or self._always[0] != catalog.generation:
            tools = {t.name: t for t in catalog if t.defer is DeferPolicy.NEVER and t.name not in META}
            self._always = (catalog.generation, tools)
        return self._always[1]

    def listed(self, ctx: Any) -> list[Tool]:
        """The catalog tools this session sees in tools/list (always-load, then revealed)."""
        always = self.always_loaded()
        out = list(always.values())
        if self._stateful(ctx):
            for name in self.revealed(ctx):
                tool = self.gateway.catalog.get(name)
                if tool is not None and name not in always and name not in META:
                    out.append(tool)
        return out

    def _callable_by_name(self, ctx: Any, name: str) -> bool:
        if name in self.always_loaded():
            return True
        if not self._stateful(ctx):
            return False
        return name in self.revealed(ctx) and name in self.gateway.catalog

    async def _list_tools(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        tools = [types.Tool.model_validate(t) for t in self.meta_tools()]
        for tool in self.listed(ctx):
            try:
                tools.append(types.Tool.model_validate(render(tool, "mcp")))
            except Exception as exc:  # one odd upstream tool must not break the whole list
                log.warning("not listing %s: %s", tool.name, exc)
        return types.ListToolsResult(tools=tools)

    # -- tools/call -----------------------------------------------------------------------
    async def _call_tool(self, ctx: Any, params: Any) -> Any:
        """Every outcome is a tool result (errors too), typed for the negotiated protocol."""
        import mcp_types as types
        from pydantic import ValidationError

        raw = await self._dispatch(ctx, params)
        try:
            return types.CallToolResult.model_validate(raw)
        except ValidationError as exc:
            text = f"upstream_error: the server behind {params.name!r} returned a malformed result ({exc.error_count()} problems)"
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)

    async def _dispatch(self, ctx: Any, params: Any) -> dict[str, Any]:
        name = params.name
        args = params.arguments or {}
        try:
            if name == "find_tools":
                return await self._find(ctx, args)
            if name == "call_tool":
                target = args.get("name")
                if not isinstance(target, str) or not target:
                    raise InvalidRequest(
                        "call_tool needs 'name': the exact name of a tool from find_tools",
                        hint="Call find_tools first, then call_tool with one of the names it returned.",
                    )
                if target in META:
                    raise InvalidRequest(f"call {target} directly, not through call_tool")
                return await self.run(target, args.get("arguments"))
            if not self._callable_by_name(ctx, name):
                tool = self.gateway.catalog.get(name)
                if tool is None:
                    raise UnknownTool(f"no tool named {name!r}", suggestions=self.gateway.suggest(name))
                raise NotRevealed(
                    f"tool {name!r} is not loaded in this session",
                    hint="Call find_tools with its name first, or run it with call_tool(name, arguments).",
                )
            return await self.run(name, args)
        except ToolscoutError as exc:
            return error_result(CallResult.failure(str(name), exc))

    async def _find(self, ctx: Any, args: dict[str, Any]) -> dict[str, Any]:
        found = self.gateway.find_tools(
            args.get("query"),  # type: ignore[arg-type]  # the gateway reports a bad type itself
            args.get("limit"),
            search_type=args.get("search_type") or "auto",
            category=args.get("category"),
            format="mcp",
        )
        if self._stateful(ctx) and found.found and self._reveal(ctx, (t.name for t in found.found)):
            await _notify_list_changed(ctx)
        hard = found.error is not None and found.error.code not in ("no_match",)
        return {"content": [{"type": "text", "text": found.text()}], "structuredContent": found.to_dict(), "isError": hard}

    async def run(self, name: str, arguments: Any) -> dict[str, Any]:
        """Validate and execute through the gateway; an upstream's own result is passed on as is."""
        result = await self.gateway.acall(name, arguments)
        tool = self.gateway.catalog.get(name)
        if result.error is None and tool is not None and tool.source == "mcp" and isinstance(result.value, dict):
            return result.value
        if result.error is not None:
            return error_result(result)
        out: dict[str, Any] = {"content": result.content, "isError": not result.ok}
        if result.structured is not None:
            out["structuredContent"] = result.structured
        return out

    # -- resources ------------------------------------------------------------------------
    async def _list_resources(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        about = "What this toolscout gateway offers: backends, counts, protocol features, limits."
        return types.ListResourcesResult.model_validate(
            {
                "resources": [
                    {"uri": CAPABILITIES_URI, "name": "capabilities", "description": about, "mimeType": "application/json"}
                ]
            }
        )

    async def _read_resource(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        if str(params.uri) != CAPABILITIES_URI:
            raise MCPError(code=-32002, message=f"unknown resource {params.uri}")
        text = json.dumps(self.capabilities(), indent=2)
        return types.ReadResourceResult.model_validate(
            {"contents": [{"uri": CAPABILITIES_URI, "mimeType": "application/json", "text": text}]}
        )

    def capabilities(self) -> dict[str, Any]:
        return capabilities(self.gateway, self.aggregator, max_revealed=self.max_revealed, version=self.version)

    # -- transports -----------------------------------------------------------------------
    def init_options(self) -> Any:
        return self.lowlevel.create_initialization_options()

    async def serve_stdio(self, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES) -> None:
        """Serve over stdin/stdout; a malformed or oversized message gets a JSON-RPC error."""
        async with stdio_transport(max_message_bytes=max_message_bytes) as (read, write):
            await self.lowlevel.run(read, write, self.init_options())

    def http_app(
        self,
        *,
        host: str = "127.0.0.1",
        token: str | None = None,
        allow_origins: Iterable[str] = (),
        allow_hosts: Iterable[str] = (),
    ) -> Any:
        """The streamable HTTP ASGI app (``/mcp``); with ``token``, every request needs it.

        Host and Origin are checked by :class:`HostOriginGuard` for ``host`` (the bind
        address), which replaces the SDK's narrower check.
        """
        from mcp.server.transport_security import TransportSecuritySettings

        off = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        app = self.lowlevel.streamable_http_app(host=host, transport_security=off)
        if token:
            app = BearerGuard(app, token)
        return HostOriginGuard(app, bind=host, allow_origins=allow_origins, allow_hosts=allow_hosts)


def least_permissive(tools: Iterable[Tool]) -> dict[str, Any]:
    """The hints a tool that can run any of ``tools`` may honestly claim.

    Read-only and idempotent only if every tool says so; destructive and open-world unless
    every tool says otherwise (MCP's defaults for unstated hints are the unsafe ones).
    """
    read_only = idempotent = True
    destructive = open_world = False
    seen = False
    for t in tools:
        seen = True
        a = t.annotations
        read_only = read_only and bool(a and a.read_only)
        idempotent = idempotent and bool(a and a.idempotent)
        destructive = destructive or not (a and (a.destructive is False or a.read_only))
        open_world = open_world or not (a and a.open_world is False)
    if not seen:
        return {"readOnlyHint": True, "destructiveHint": False, "idempotentHint": True, "openWorldHint": False}
    return {
        "readOnlyHint": read_only,
        "destructiveHint": destructive,
        "idempotentHint": idempotent,
        "openWorldHint": open_world,
    }


def error_result(result: CallResult) -> dict[str, Any]:
    """A structured error as a tool result the model can read and act on."""
    info = result.error
    if info is None:
        return {"content": result.content, "isError": True}
    lines = [f"{info.code}: {info.message}"]
    if info.hint:
        lines.append(info.hint)
    suggestions = info.details.get("suggestions")
    if suggestions:
        lines.append("Did you mean: " + ", ".join(map(str, suggestions)) + "?")
    return {
        "content": [{"type": "text", "text": "\n".join(lines)}],
        "structuredContent": {"error": info.to_dict()},
        "isError": True,
    }


async def _notify_list_changed(ctx: Any) -> None:
    """Announce the new tools on the request's own stream (reaches HTTP clients without a
    standalone GET stream; on stdio it is the same pipe)."""
    import mcp_types as types

    try:
        await ctx.session.send_notification(types.ToolListChangedNotification(), related_request_id=ctx.request_id)
    except Exception as exc:  # a client that cannot take notifications still gets its result
        log.debug("list_changed not delivered: %s", exc)


async def _notify_peer(peer: Any) -> None:
    try:
        await peer.send_tool_list_changed()
    except Exception as exc:  # the session is gone, or has no standalone stream
        log.debug("list_changed not delivered: %s", exc)


def _version() -> str:
    try:
        from importlib.metadata import version

        return version("toolscout")
    except Exception:
        return "0"


async def run_with(aggregator: Aggregator | None, serve: Callable[[], Awaitable[None]]) -> None:
    """Load cached tool lists, fetch the rest in the background, serve, then close upstreams."""
    background: asyncio.Task[None] | None = None
    if aggregator is not None:
        aggregator.load_cached()
        background = asyncio.ensure_future(aggregator.start(lazy=True))
    try:
        await serve()
    finally:
        if background is not None:
            background.cancel()
        if aggregator is not None:
            await aggregator.aclose()


def build(
    config: Any, *, cache_path: str | None = None, use_cache: bool = True, embeddings: Any = None
) -> tuple[GatewayServer, Aggregator]:
    """Wire a config into a ready-to-serve gateway: catalog, aggregator, cache, server."""
    from ..catalog import Catalog
    from ..sources.mcp.cache import ToolListCache, default_cache_path

    cache = None
    if use_cache:
        cache = ToolListCache.open(cache_path or config.cache or default_cache_path())
    catalog = Catalog()
    aggregator = Aggregator(config, catalog, cache=cache)
    gateway = Gateway(  # each upstream has its own timeout; vectors live beside the tool lists
        catalog, call_timeout=None, embeddings=embeddings, vector_store=cache.store if cache else None
    )
    return GatewayServer(gateway, aggregator, max_revealed=config.max_revealed), aggregator
