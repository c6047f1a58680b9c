"""The toolscout MCP server: ``find_tools`` and ``call_tool`` in front of every upstream tool.

``tools/list`` shows the meta-tools plus always-load tools. Each stateful connection
(protocol 2025-11-25) is a :class:`~toolscout.session.Session`, the same model the library
and the provider adapters use: the tools ``find_tools`` returns join *that session's*
``tools/list`` and ``notifications/tools/list_changed`` is sent, so the client can call
them by name. Sessions live in a bounded store (least recently active forgotten first) and
are never shared. Stateless clients (2026-07-28) share one session that never reveals:
they find, then run through ``call_tool``.

Each request becomes one :class:`~toolscout.context.CallContext` at this edge (the
client's progress reporter, and an approver that asks the client's user when it can) handed
to the connection's session. Progress and cancellation pass through: an upstream's
``notifications/progress`` reach the client that made the call (``ctx.progress``), and a client's
``notifications/cancelled`` (or a closed connection) cancels the handler, which cancels
the upstream call.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import re
import uuid
import weakref
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from ..access.auth import IdentityGuard, TokenVerifier, principal_of_scope
from ..access.guard import Operation
from ..access.identity import AccessRules, local_principal
from ..access.principal import edge_fields
from ..calls import UpstreamResult
from ..context import CallContext, Principal
from ..errors import ErrorInfo, SessionStoreUnavailable, ToolscoutError
from ..formats import render
from ..gateway import Gateway
from ..model import CallResult, Tool
from ..session import Session, ToolOutcome
from ..sessions.store import InMemorySessionStore
from ..sources.mcp.aggregator import Aggregator
from ..sources.skills import SKILL_URI_PREFIX
from .capabilities import CAPABILITIES_URI, capabilities, server_version
from .cold_start import called_name, starting
from .elicit_approval import ApprovalTickets, ElicitApproval
from .elicit_approval import can_elicit as _can_elicit
from .federated import FederatedMCP
from .guard import HostOriginGuard
from .input_required import RequestStates, RoundTrips
from .metrics import Metrics
from .recent import RecentCalls
from .session_owners import SessionOwners
from .shared_sessions import accept_shared_sessions
from .stdio import DEFAULT_MAX_MESSAGE_BYTES, stdio_transport

__all__ = ["GatewayServer"]

log = logging.getLogger("toolscout.mcp")

MAX_SESSIONS = 10_000
"""Sessions kept at once; the least recently active one is forgotten first."""
COLD_START_WAIT = 5.0
"""How long a search waits, at most, for upstreams that have never listed their tools."""
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
        use_tool: bool = False,
        max_sessions: int = MAX_SESSIONS,
        cold_start_wait: float = COLD_START_WAIT,
        session_store: Any = None,
        stubs: bool = False,
        threshold: int | str = 0,
        auto_pin: int = 0,
        context_window: int | None = None,
        approval_key: bytes | None = None,
        code_mode: bool = False,
        access: AccessRules | None = None,
        verifier: TokenVerifier | None = None,
    ) -> None:
        """``code_mode``: every session also offers ``execute`` (docs/code-mode.md).
        ``session_store`` (a :class:`~toolscout.redis_sessions.RedisSessionStore`) keeps
        stateful sessions where every replica sees them (see :mod:`.shared_sessions`).
        ``stubs``: stateful sessions list every tool not yet found as a stub (name and one
        line, no parameters) instead of leaving it out. ``threshold``: when sessions start
        deferring (0: always, the gateway's default; a count or ``"auto:N%"`` lists a small
        catalog in full, see :mod:`toolscout.deferral`); ``auto_pin``: pin the most-used tools.
        ``access``: the operator's rules per principal (what each caller may see and run);
        ``verifier``: checks OAuth bearer tokens on the HTTP transport (:mod:`.auth`)."""
        from mcp.server.lowlevel.server import NotificationOptions, Server

        self.gateway = gateway
        self.aggregator = aggregator
        self.max_revealed = max_revealed
        self.use_tool = use_tool
        self.cold_start_wait = cold_start_wait
        options: dict[str, Any] = {
            "threshold": threshold,
            "call_tool": True,
            "use_tool": use_tool,
            "stubs": stubs,
            "auto_pin": auto_pin,
            "context_window": context_window,
        }
        if code_mode:
            options["code_mode"] = True
        self.sessions = InMemorySessionStore(gateway, max_sessions=max_sessions, max_revealed=max_revealed, **options)
        self.stateless = Session(gateway, session_id="stateless", progressive=False, **options)
        # Stateless requests that name their conversation (``_meta["toolscout/session"]``) get
        # a session of their own: nothing to reveal, but learning sees who searched and called.
        self.tagged = InMemorySessionStore(gateway, max_sessions=max_sessions, progressive=False, **options)
        self.shared = session_store
        self.tickets = ApprovalTickets(approval_key, shared=session_store if approval_key is None else None)
        """Signs stateless approval questions (:class:`ApprovalTickets`): an answer runs
        one call, once, in the session it was asked in."""
        self.round_trips = RoundTrips(RequestStates(approval_key, shared=session_store if approval_key is None else None))
        """Multi-round-trip requests from upstreams, passed through (:mod:`.input_required`)."""
        self.access = access
        self.verifier = verifier
        self.local = local_principal()
        """Who a stdio client is: the OS user running this process."""
        self._owners: dict[str, str] = {}  # stateful session key -> the principal it belongs to
        self.audit_log: Any = None
        """The store's audit log (:class:`~toolscout.access.audit.AuditLog`), served at ``/v1/audit``."""
        self._peers: dict[str, weakref.ref[Any]] = {}  # session key -> its connection (to notify)
        self._conn_keys: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self._tasks: set[asyncio.Task[Any]] = set()
        self._meta_cache: tuple[int, list[dict[str, Any]]] | None = None
        self._pinned: tuple[int, frozenset[str]] = (-1, frozenset())
        if aggregator is not None and gateway.pending_sources is None:
            gateway.pending_sources = aggregator.pending
        gateway.catalog.subscribe(self._on_catalog_change)
        self.version = server_version()
        self.lowlevel: Any = Server(
            name,
            version=self.version,
            instructions=self.instructions(),
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_read_resource=self._read_resource,
        )
        # Upstream resources, templates, prompts, completions, logging (transparent gateway).
        self.federated = FederatedMCP(aggregator, self._visible_to, guard=gateway.guard, caller=self.request_context)
        if not gateway.guard.handles("skills/read"):
            gateway.guard.register("skills/read", _read_skill)
        self.federated.round_trips = (self.round_trips, lambda ctx: (self.principal(ctx).id, not self._stateful(ctx)))
        self.federated.shared = session_store
        self.federated.install(self.lowlevel)
        # Advertise tools.listChanged on every transport (the HTTP session manager builds
        # its initialize result from this method with no arguments); resources and prompts
        # change when an upstream's do.
        changes = NotificationOptions(tools_changed=True, prompts_changed=True, resources_changed=True)
        build = self.lowlevel.create_initialization_options
        self.lowlevel.create_initialization_options = lambda *a, **k: build(*(a or (changes,)), **k)

    # -- sessions -------------------------------------------------------------------
    @staticmethod
    def _stateful(ctx: Any) -> bool:
        return ctx.protocol_version not in _modern_versions()

    def _session_key(self, ctx: Any) -> str | None:
        """A key unique to this client connection for its whole life (never reused, unlike
        ``id()``); its session is dropped when the connection object goes away."""
        conn = getattr(ctx.session, "_connection", None)
        if conn is None:
            return None
        key = self._conn_keys.get(conn)
        if key is None:
            key = getattr(conn, "session_id", None) or uuid.uuid4().hex
            self._conn_keys[conn] = key
            ref = self._peers[key] = weakref.ref(conn)
            weakref.finalize(conn, self._forget, key, ref)
        return key

    def _forget(self, key: str, ref: weakref.ref[Any] | None = None) -> None:
        """Drop a gone connection's session here (a shared store keeps it for other
        replicas), unless a newer connection continues it under the same id."""
        if ref is not None and self._peers.get(key) not in (None, ref):
            return
        self.sessions.drop(key)
        self._peers.pop(key, None)
        self._owners.pop(key, None)

    def principal(self, ctx: Any) -> Principal:
        """Who sent this request: the caller the HTTP edge established (:mod:`.auth`), else
        (stdio) the OS user running the gateway."""
        request = getattr(ctx, "request", None)
        scope = getattr(request, "scope", None)
        found = principal_of_scope(scope) if isinstance(scope, dict) else None
        return found if found is not None else self.local

    def session(self, ctx: Any, params: Any = None) -> Session:
        """The :class:`Session` serving this request's connection (a stateless request's
        own, when its ``_meta`` names one; else the shared stateless session). With access
        rules, a session sees only what its principal may, and belongs to that principal (a
        request with another principal's token on its id gets a session of its own)."""
        principal = self.principal(ctx)
        key = self._session_key(ctx) if self._stateful(ctx) else None
        if key is None:
            tag = _session_tag(params)
            if tag is not None:  # a name is the caller's own: never another principal's session
                return self._scoped(self.tagged.session(f"tagged:{principal.id}:{tag}"), principal)
            if self.access is None:
                return self.stateless
            return self._scoped(self.tagged.session(f"principal:{principal.id}"), principal)
        if self._owners.setdefault(key, principal.id) != principal.id:
            key = f"{key}:{principal.id}"  # another caller's token on this session id: never the owner's session
        session = self._scoped(self.sessions.session(key), principal)
        if self.shared is not None and session.store is None:  # loaded by its first request
            self.shared.attach(session, load=False)
        return session

    def _scoped(self, session: Session, principal: Principal) -> Session:
        """``session`` limited to what ``principal`` may see and run (set once: a session
        belongs to one principal)."""
        if self.access is not None:
            allow = self.access.allow_for(principal)
            if session.allow is not allow:
                session.allow = allow
        return session

    async def _refreshed(self, ctx: Any) -> Session:
        """The session, caught up with what other replicas did (if the store cannot be
        reached, as this replica last saw it)."""
        session = self.session(ctx)
        if session.store is not None:
            try:
                await session.store.arefresh(session)
            except SessionStoreUnavailable as exc:
                log.debug("listing session %s from this replica's copy: %s", session.id[:8], exc)
        return session

    def instructions(self) -> str:
        """The gateway's system prompt (categories = servers) plus how to run what is found."""
        return self.gateway.system_prompt() + RUNNING

    def _on_catalog_change(self, change: Any) -> None:
        """Keep the instructions current, and tell each stateful session whose tools/list
        this change alters (always-load tools came or went, or a revealed tool changed)."""
        self.lowlevel.instructions = self.instructions()
        touched = set(change.added) | set(change.removed)
        if not touched or not self._peers:
            return
        before = self._pinned[1]
        everyone = before != self.pinned_names()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        for key, ref in list(self._peers.items()):
            peer = ref()
            session = self.sessions.get(key) if key in self.sessions else None
            if peer is None or session is None:  # gone, or a stateless connection
                continue
            if everyone or session.shows_any(touched):
                task = loop.create_task(_notify_peer(peer))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)

    # -- tools/list -----------------------------------------------------------------------
    def pinned_names(self) -> frozenset[str]:
        """Tools every session lists (defer policy ``never``), per catalog generation."""
        gen = self.gateway.catalog.generation
        if self._pinned[0] != gen:
            self._pinned = (gen, frozenset(self.stateless.pinned))
        return self._pinned[1]

    def meta_tools(self) -> list[dict[str, Any]]:
        """The meta-tools; those that can run any tool carry the least permissive hints of
        all the tools they reach."""
        gen = self.gateway.catalog.generation
        if self._meta_cache is not None and self._meta_cache[0] == gen:
            return self._meta_cache[1]
        tools = [dict(t) for t in self.stateless.meta_tools("mcp")]
        hints = least_permissive(self.gateway.catalog)
        for t in tools:
            t["annotations"] = {"readOnlyHint": True, "openWorldHint": False} if t["name"] == self.gateway.find_name else hints
        self._meta_cache = (gen, tools)
        return tools

    def listed(self, ctx: Any) -> list[Tool]:
        """The catalog tools this session sees in tools/list (always-load, then revealed;
        with ``stubs``, every other tool as a stub until found), each one callable: a
        metadata-only tool (nothing runs it) is found, never listed."""
        session = self.session(ctx)
        handler = self.gateway.catalog.handler  # metadata-only tools are never listed as callable
        return [session.stub(t, "mcp") if stub else t for t, stub in session.listed() if handler(t.name) is not None]

    async def _list_tools(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        tools = [types.Tool.model_validate(t) for t in self.meta_tools()]
        if self.shared is not None:
            await self._refreshed(ctx)
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

        binding = self.round_trips.binding(self.principal(ctx).id, "tools/call", params.name, params.arguments)
        with self.round_trips.scope(await self.round_trips.begin(ctx, params, not self._stateful(ctx), binding)) as ex:
            raw = await self.round_trips.run(ex, lambda: self._dispatch(ctx, self.round_trips.unwrapped(ex, params)))
        raw = await self.round_trips.finish(ex, raw, binding)
        if raw.get("resultType") == "input_required":  # an approval asked of a 2026-07-28 client
            return types.InputRequiredResult.model_validate(raw)
        try:
            return types.CallToolResult.model_validate(raw)
        except ValidationError as exc:
            text = f"upstream_error: the server behind {params.name!r} returned a malformed result ({exc.error_count()} problems)"
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)

    async def _dispatch(self, ctx: Any, params: Any) -> dict[str, Any]:
        """Hand the call to the connection's session; progress goes back to this caller."""
        session = self.session(ctx, params)
        principal = self.principal(ctx)
        if params.name == self.gateway.find_name:
            await self._wait_for_sources()
            outcome = await session.ahandle(params.name, params.arguments, context=CallContext(principal=principal))
            if outcome.revealed:
                await _notify_list_changed(ctx)
            return self._find_result(outcome)
        late = await starting(self.gateway, self.aggregator, called_name(params.name, params.arguments, self.gateway.find_name), self.cold_start_wait)
        if late is not None:  # a first start: the tool's server is still listing (.cold_start)
            return error_result(late)
        # Ask the client's user only where some kind is gated without it (the gateway's
        # approve_kinds, or its own approver's default): offering elicitation gates nothing.
        kinds = self.access.approve_kinds(principal) if self.access is not None else frozenset()
        asking = None
        if (self._may_ask(params) or kinds) and _can_elicit(ctx):
            asking = ElicitApproval(
                ctx, params, self._stateful(ctx), tickets=self.tickets, session=session.id, trust_hints=self.gateway.trust_hints
            )
        edge = CallContext(
            progress=getattr(ctx.session, "report_progress", None),
            approve=asking,
            approve_kinds=kinds,
            relay=self.federated.relay(ctx),
            **{**edge_fields(getattr(getattr(ctx, "request", None), "scope", None)), "principal": principal},
        )
        outcome = await session.ahandle(params.name, params.arguments, context=edge)
        if asking is not None and asking.needed:  # ask, and run when the client retries with the answer and ticket
            return {"resultType": "input_required", "inputRequests": asking.needed, "requestState": asking.state}
        return self._call_result(outcome)

    def _may_ask(self, params: Any) -> bool:
        """Whether this call may need the user's approval: some kind is gated, hints are
        distrusted, or the operator set an approval rule on the tool called."""
        gateway = self.gateway
        if gateway.gated_kinds() or not gateway.trust_hints:
            return True
        name = params.name
        if name in ("call_tool", "use_tool", "execute"):  # execute: a program may call any tool
            name = (params.arguments or {}).get("name") if name == "call_tool" else None
            if name is None:
                return any(t.meta.get("approval") == "always" for t in gateway.catalog if t.meta)
        tool = gateway.lookup(name) if isinstance(name, str) else None
        return tool is not None and bool(tool.meta) and tool.meta.get("approval") == "always"

    async def _wait_for_sources(self) -> None:
        """Cold start: before the first searches, give upstreams that have never listed
        their tools a bounded moment to do so (a search then says which are still loading)."""
        aggregator = self.aggregator
        if aggregator is None or self.cold_start_wait <= 0 or not aggregator.pending():
            return
        try:
            await aggregator.wait_listed(self.cold_start_wait)
        except Exception as exc:  # waiting is a courtesy; the search answers regardless
            log.debug("cold-start wait failed: %s", exc)

    @staticmethod
    def _find_result(outcome: ToolOutcome) -> dict[str, Any]:
        found = outcome.find
        if found is None and outcome.error is not None:  # refused before searching
            return error_result(outcome.error, outcome.content)
        structured = found.render("mcp").to_dict() if found is not None else {}
        hard = outcome.error is not None and outcome.error.code != "no_match"
        return {"content": outcome.content, "structuredContent": structured, "isError": hard}

    def _call_result(self, outcome: ToolOutcome) -> dict[str, Any]:
        """An upstream's own result is passed on as is; anything else as text + structure."""
        result = outcome.result
        if result is None:  # refused before execution (unknown name, not revealed, ...)
            return error_result(outcome.error, outcome.content)
        if result.error is not None:
            return error_result(result.error, result.content)
        if isinstance(result, UpstreamResult) and not result.findings:  # an upstream's own result, as its server sent it
            return result.raw
        if isinstance(result, UpstreamResult):  # screened and marked: the marked content, never the raw text alone
            return {**result.raw, "content": result.content}
        out: dict[str, Any] = {"content": result.content, "isError": not result.ok}
        if result.structured is not None:
            out["structuredContent"] = result.structured
        return out

    async def run(self, name: str, arguments: Any) -> dict[str, Any]:
        """Run one tool as ``call_tool`` would (stateless path): validate, execute, answer."""
        return self._call_result(await self.stateless.ahandle("call_tool", {"name": name, "arguments": arguments}))

    # -- resources ------------------------------------------------------------------------
    def _visible_to(self, ctx: Any, entry: Tool) -> bool:
        """The visibility rule for this request's caller, for an upstream resource or prompt."""
        allow = self.session(ctx).context().allow
        return self.gateway.visibility.admits(entry, allow)

    async def _list_resources(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        about = "What this toolscout gateway offers: backends, counts, protocol features, limits."
        skills = [
            {"uri": SKILL_URI_PREFIX + t.name, "name": t.name, "description": t.summary(), "mimeType": "text/markdown"}
            for t in self._skills(self.session(ctx).context().allow)
        ]
        return types.ListResourcesResult.model_validate(
            {
                "resources": [
                    {"uri": CAPABILITIES_URI, "name": "capabilities", "description": about, "mimeType": "application/json"},
                    *skills,
                    *await self.federated.list(ctx, "resources"),
                ]
            }
        )

    def _skills(self, allow: Any = None) -> list[Tool]:
        """Skills this caller may see (each is also a resource)."""
        gw = self.gateway
        return [t for t in gw.catalog if t.kind == "skill" and t.searchable and gw.visibility.admits(t, allow)]

    async def _read_resource(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        uri = str(params.uri)
        if uri.startswith(SKILL_URI_PREFIX):
            # The skill's instructions, read when asked (as calling the skill would): under
            # the caller's own rule, screened and audited like every other read.
            skill = self.gateway.catalog.get(uri.removeprefix(SKILL_URI_PREFIX))
            if skill is None or skill.kind != "skill" or self.gateway.catalog.handler(skill.name) is None:
                raise MCPError(code=-32002, message=f"unknown resource {params.uri}")
            op = Operation("skills/read", uri, entry=skill, payload=self.gateway.catalog.handler(skill.name))
            try:
                answer = await self.gateway.guard.run(op, self.request_context(ctx), hidden=lambda: _unknown_resource(uri))
            except ToolscoutError as exc:
                raise MCPError(code=-32603, message=f"{exc.code}: {exc.message}") from None
            return types.ReadResourceResult.model_validate(answer)
        if uri != CAPABILITIES_URI:
            read = await self.federated.read(ctx, uri, params)
            if read.get("resultType") == "input_required":  # an upstream's question (.input_required)
                return types.InputRequiredResult.model_validate(read)
            return types.ReadResourceResult.model_validate(read)
        text = json.dumps(self.capabilities(self.session(ctx).context().allow), indent=2)
        return types.ReadResourceResult.model_validate(
            {"contents": [{"uri": CAPABILITIES_URI, "mimeType": "application/json", "text": text}]}
        )

    def capabilities(self, allow: Any = None) -> dict[str, Any]:
        """What this gateway offers, as the caller whose rule is ``allow`` may see it."""
        return capabilities(self.gateway, self.aggregator, max_revealed=self.max_revealed, version=self.version, allow=allow)

    def request_context(self, ctx: Any) -> CallContext:
        """The caller of an MCP request (not a tool call) as the guard needs it."""
        session = self.session(ctx)
        return session.context(CallContext(principal=self.principal(ctx)))

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
        metrics: bool = False,
        console: bool = True,
    ) -> Any:
        """The streamable HTTP ASGI app (``/mcp``) with the HTTP API (``/v1``, see
        :mod:`.http_api`) on the same port; with ``token``, every request needs it.
        ``console`` adds the web console at ``/ui`` (:mod:`.console`: its data behind the
        token, its static files not).

        Host and Origin are checked by :class:`HostOriginGuard` for ``host`` (the bind
        address), which replaces the SDK's narrower check. ``metrics`` adds ``/metrics``
        (Prometheus; needs ``toolscout[metrics]``), counting MCP and HTTP requests alike.
        """
        from mcp.server.transport_security import TransportSecuritySettings

        from .http_api import create_app, mount  # fastapi: kept off the stdio start-up path

        off = TransportSecuritySettings(enable_dns_rebinding_protection=False)
        app = self.lowlevel.streamable_http_app(host=host, transport_security=off)
        if self.shared is not None:  # any replica serves any session: no affinity needed
            accept_shared_sessions(self.lowlevel.session_manager, self.shared)
        app = SessionOwners(app, store=self.shared)  # a session id answers only its opener
        counters = None
        if metrics:
            counters = Metrics(aggregator=self.aggregator, catalog=self.gateway.catalog, find_cache=self.gateway.result_cache)
            counters.watch_mcp(self)
            if self.aggregator is not None:
                counters.watch_cache(self.aggregator)
        recent = None
        if console:
            recent = RecentCalls()
            recent.watch_mcp(self)
        api = create_app(
            self.gateway,
            aggregator=self.aggregator,
            capabilities=self.capabilities,
            metrics=counters,
            cold_start_wait=self.cold_start_wait,
            recent=recent,
            session_store=self.shared,
            auth=self.verifier,
            access=self.access,
            audit_log=self.audit_log,
        )
        app = mount(api, app)
        if console:
            from .console import CONSOLE_API, console_api, with_console  # fastapi, as above

            app = mount(console_api(self.gateway, aggregator=self.aggregator, recent=recent, access=self.access), app, (CONSOLE_API,))
        broker = getattr(self.aggregator, "credentials", None)
        if broker is not None:  # each caller's upstream accounts; fastapi, as above
            from .credentials_api import (
                CALLBACK_PATH,
                CREDENTIALS_PATH,
                callback_app,
                credentials_app,
            )

            app = mount(credentials_app(broker), app, (CREDENTIALS_PATH,))
        scopes = self.verifier.config.required_scopes if self.verifier is not None else ()
        app = IdentityGuard(app, token=token, verifier=self.verifier, scopes=scopes)
        if broker is not None:  # a browser coming back from consent carries no bearer token
            app = mount(callback_app(broker), app, (CALLBACK_PATH,))
        if console:
            app = with_console(app)
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


def error_result(info: ErrorInfo | None, content: list[dict[str, Any]] | CallResult | None = None) -> dict[str, Any]:
    """A structured error as a tool result the model can read and act on (its text is the
    one rendering every surface uses: :meth:`ErrorInfo.text`)."""
    if isinstance(content, CallResult):
        content = content.content
    if info is None:
        return {"content": content or [], "isError": True}
    return {
        "content": [{"type": "text", "text": info.text()}],
        "structuredContent": {"error": info.to_dict()},
        "isError": True,
    }


async def _read_skill(op: Operation, ctx: CallContext) -> dict[str, Any]:
    """A skill's instructions as a resource (run only by the guard: the caller's rule decided)."""
    skill = op.entry
    assert skill is not None
    handler = op.payload
    text = await asyncio.to_thread(handler, {})
    text = await text if inspect.isawaitable(text) else text
    return {"contents": [{"uri": op.name, "mimeType": "text/markdown", "text": text}]}


def _unknown_resource(uri: str) -> Exception:
    from mcp.shared.exceptions import MCPError

    return MCPError(code=-32002, message=f"unknown resource {uri}")


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


SESSION_META = "toolscout/session"
_TAG = re.compile(r"[\w.:@/-]{1,128}")


def _session_tag(params: Any) -> str | None:
    """The conversation a stateless request names in ``_meta["toolscout/session"]`` (an id
    of up to 128 word characters and ``.:@/-``), or ``None``."""
    meta = getattr(params, "meta", None)
    value = meta.get(SESSION_META) if isinstance(meta, dict) else getattr(meta, SESSION_META, None)
    return value if isinstance(value, str) and _TAG.fullmatch(value) else None


@lru_cache(maxsize=1)
def _modern_versions() -> frozenset[str]:
    """Protocol versions without sessions (imported on first use: not on the start-up path)."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return frozenset(MODERN_PROTOCOL_VERSIONS)
