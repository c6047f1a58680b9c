"""The toolscout MCP server: ``find_tools`` and ``call_tool`` in front of every upstream tool.

This module answers MCP requests and nothing else; what a request needs comes from modules
with one job each: which session serves it (:mod:`.mcp_sessions`), who is told of tool-list
changes (:mod:`.list_changed`), asking the user for approval (:mod:`.elicit_approval`),
waiting for upstreams on a first start (:mod:`.cold_start`), the result's shape
(:mod:`.mcp_results`), skills as resources (:mod:`.skill_resources`), upstream resources and
prompts (:mod:`.federated`). Transports and the HTTP stack are assembled in :mod:`.app`.

``tools/list`` shows the meta-tools plus always-load tools, then what this connection's
:class:`~toolscout.session.Session` revealed: ``find_tools`` results join *that session's*
list and ``notifications/tools/list_changed`` is sent. Stateless clients (2026-07-28) find,
then run through ``call_tool``. Each request becomes one
:class:`~toolscout.context.CallContext` at this edge (the client's progress reporter, and an
approver that asks the client's user when it can). Progress and cancellation pass through:
an upstream's ``notifications/progress`` reach the client that made the call, and a client's
``notifications/cancelled`` (or a closed connection) cancels the upstream call.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from ..access.auth import TokenVerifier
from ..access.identity import AccessRules
from ..access.principal import edge_fields
from ..context import CallContext, Principal
from ..formats import render
from ..gateway import Gateway
from ..model import Tool
from ..session import Session
from ..sessions.tickets import InMemoryTicketStore, TicketStore
from ..sources.mcp.aggregator import Aggregator
from ..sources.mcp.thin_call import NO_PROGRESS
from .capabilities import CAPABILITIES_URI, capabilities, server_version
from .cold_start import COLD_START_WAIT, called_name, starting, wait_for_sources
from .elicit_approval import ApprovalTickets, ElicitApproval, can_elicit, may_ask
from .federated import FederatedMCP
from .input_required import RequestStates, RoundTrips
from .list_changed import ListChanged, notify_caller
from .mcp_results import call_result, error_result, find_result, least_permissive
from .mcp_sessions import SessionOptions, SessionRouter, is_stateful
from .skill_resources import SKILL_URI_PREFIX, install_skill_reader, read_skill, skill_resources

__all__ = ["GatewayServer", "SessionOptions"]

log = logging.getLogger("toolscout.mcp")

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
        name: str = "toolscout",
        cold_start_wait: float = COLD_START_WAIT,
        session_store: Any = None,
        approval_key: bytes | None = None,
        access: AccessRules | None = None,
        verifier: TokenVerifier | None = None,
        **session_options: Any,
    ) -> None:
        """``session_options``: the fields of :class:`SessionOptions` (``max_revealed``,
        ``stubs``, ``code_mode``...). ``session_store`` (a
        :class:`~toolscout.sessions.redis.RedisSessionStore`) keeps stateful sessions where
        every replica sees them. ``access``: the operator's rules per principal (what each
        caller may see and run); ``verifier``: checks OAuth bearer tokens on the HTTP
        transport (:mod:`toolscout.access.auth`)."""
        from mcp.server.lowlevel.server import NotificationOptions, Server

        self.gateway = gateway
        self.aggregator = aggregator
        self.options = SessionOptions(**session_options)
        self.max_revealed = self.options.max_revealed
        self.use_tool = self.options.use_tool
        self.cold_start_wait = cold_start_wait
        self.router = SessionRouter(gateway, self.options, access=access, shared=session_store)
        self.shared = session_store
        self.access = access
        self.verifier = verifier
        # single-use claims and signing secrets: in the replicas' Redis when they share sessions
        # (RedisSessionStore.tickets), else in this process's memory
        ticket_store: TicketStore = getattr(session_store, "tickets", None) or InMemoryTicketStore()
        self.tickets = ApprovalTickets(approval_key, store=ticket_store)
        """Signs stateless approval questions: an answer runs one call, once, in its session."""
        self.round_trips = RoundTrips(RequestStates(approval_key, store=ticket_store))
        """Multi-round-trip requests from upstreams, passed through (:mod:`.input_required`)."""
        self.audit_log: Any = None
        """The store's audit log (:class:`~toolscout.access.audit.AuditLog`), served at ``/v1/audit``."""
        self._meta_cache: tuple[int, list[dict[str, Any]]] | None = None
        self._pinned: tuple[int, frozenset[str]] = (-1, frozenset())
        self.list_changed = ListChanged(self.router, self.pinned_names)
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
        install_skill_reader(gateway)
        self.federated.round_trips = (
            self.round_trips,
            lambda ctx: (self.principal(ctx).id, not is_stateful(ctx)),
        )
        self.federated.shared = session_store
        self.federated.install(self.lowlevel)
        # A 2026-07-28 tools/call with arguments has its Mcp-Param headers checked against the
        # tool's schema: without this lookup the SDK lists every tool (a whole tools/list) per call.
        self.lowlevel.get_tool_input_schema = self.input_schema
        # Advertise tools.listChanged on every transport (the HTTP session manager builds
        # its initialize result from this method with no arguments); resources and prompts
        # change when an upstream's do.
        changes = NotificationOptions(tools_changed=True, prompts_changed=True, resources_changed=True)
        build = self.lowlevel.create_initialization_options
        self.lowlevel.create_initialization_options = lambda *a, **k: build(*(a or (changes,)), **k)

    # -- who and which session ----------------------------------------------------------
    def principal(self, ctx: Any) -> Principal:
        """Who sent this request (:meth:`SessionRouter.principal`)."""
        return self.router.principal(ctx)

    def session(self, ctx: Any, params: Any = None) -> Session:
        """The session serving this request (:meth:`SessionRouter.session`)."""
        return self.router.session(ctx, params)

    def request_context(self, ctx: Any) -> CallContext:
        """The caller of an MCP request (not a tool call) as the guard needs it."""
        principal = self.router.principal(ctx)
        return self.router.session(ctx, principal=principal).context(CallContext(principal=principal))

    def instructions(self) -> str:
        """The gateway's system prompt (categories = servers) plus how to run what is found."""
        return self.gateway.system_prompt() + RUNNING

    def _on_catalog_change(self, change: Any) -> None:
        """Keep the instructions current, and tell the sessions whose tools/list changed."""
        self.lowlevel.instructions = self.instructions()
        self.list_changed.on_change(change, self._pinned[1])

    # -- tools/list -----------------------------------------------------------------------
    def pinned_names(self) -> frozenset[str]:
        """Tools every session lists (defer policy ``never``), per catalog generation."""
        gen = self.gateway.catalog.generation
        if self._pinned[0] != gen:
            self._pinned = (gen, frozenset(self.router.stateless.pinned))
        return self._pinned[1]

    def meta_tools(self) -> list[dict[str, Any]]:
        """The meta-tools; those that can run any tool carry the least permissive hints of
        all the tools they reach."""
        gen = self.gateway.catalog.generation
        if self._meta_cache is not None and self._meta_cache[0] == gen:
            return self._meta_cache[1]
        tools = [dict(t) for t in self.router.stateless.meta_tools("mcp")]
        hints = least_permissive(self.gateway.catalog)
        for t in tools:
            t["annotations"] = {"readOnlyHint": True, "openWorldHint": False} if t["name"] == self.gateway.find_name else hints
        self._meta_cache = (gen, tools)
        return tools

    def input_schema(self, name: str) -> dict[str, Any] | None:
        """The input schema of the tool ``name`` as tools/list shows it (a meta-tool's, else the
        catalog tool's), ``None`` if there is none: only Mcp-Param header checks read it
        (fail-open), the call itself is checked as any other."""
        for tool in self.meta_tools():
            if tool["name"] == name:
                schema = tool.get("inputSchema")
                return schema if isinstance(schema, dict) else None
        found = self.gateway.catalog.get(name)
        return found.input_schema if found is not None else None

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
            await self.router.refreshed(ctx)
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
        with self.round_trips.scope(await self.round_trips.begin(ctx, params, not is_stateful(ctx), binding)) as ex:
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
        principal = self.principal(ctx)
        session = self.router.session(ctx, params, principal=principal)
        gateway = self.gateway
        if params.name == gateway.find_name:
            await wait_for_sources(self.aggregator, self.cold_start_wait)
            outcome = await session.ahandle(params.name, params.arguments, context=CallContext(principal=principal))
            if outcome.revealed:
                await notify_caller(ctx)
            return find_result(outcome)
        late = await starting(
            gateway,
            self.aggregator,
            called_name(params.name, params.arguments, gateway.find_name),
            self.cold_start_wait,
        )
        if late is not None:  # a first start: the tool's server is still listing (.cold_start)
            return error_result(late)
        # Ask the client's user only where some kind is gated without it (the gateway's
        # approve_kinds, or its own approver's default): offering elicitation gates nothing.
        kinds = self.access.approve_kinds(principal) if self.access is not None else frozenset()
        asking = None
        if (kinds or may_ask(gateway, params.name, params.arguments)) and can_elicit(ctx):
            asking = ElicitApproval(
                ctx,
                params,
                is_stateful(ctx),
                tickets=self.tickets,
                session=session.id,
                trust_hints=gateway.trust_hints,
            )
        edge = CallContext(
            progress=getattr(ctx.session, "report_progress", None) if asked_progress(ctx) else NO_PROGRESS,
            approve=asking,
            approve_kinds=kinds,
            relay=self.federated.relay(ctx),
            **{
                **edge_fields(getattr(getattr(ctx, "request", None), "scope", None)),
                "principal": principal,
            },
        )
        outcome = await session.ahandle(params.name, params.arguments, context=edge)
        if asking is not None and asking.needed:  # ask, and run when the client retries with the answer and ticket
            return {
                "resultType": "input_required",
                "inputRequests": asking.needed,
                "requestState": asking.state,
            }
        return call_result(outcome)

    async def run(self, name: str, arguments: Any) -> dict[str, Any]:
        """Run one tool as ``call_tool`` would (stateless path): validate, execute, answer."""
        return call_result(await self.router.stateless.ahandle("call_tool", {"name": name, "arguments": arguments}))

    # -- resources ------------------------------------------------------------------------
    def _visible_to(self, ctx: Any, entry: Tool) -> bool:
        """The visibility rule for this request's caller, for an upstream resource or prompt."""
        return self.gateway.visibility.admits(entry, self.session(ctx).context().allow)

    async def _list_resources(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        about = "What this toolscout gateway offers: backends, counts, protocol features, limits."
        mine = {
            "uri": CAPABILITIES_URI,
            "name": "capabilities",
            "description": about,
            "mimeType": "application/json",
        }
        skills = skill_resources(self.gateway, self.session(ctx).context().allow)
        upstream = await self.federated.list(ctx, "resources")
        return types.ListResourcesResult.model_validate({"resources": [mine, *skills, *upstream]})

    async def _read_resource(self, ctx: Any, params: Any) -> Any:
        import mcp_types as types

        uri = str(params.uri)
        if uri.startswith(SKILL_URI_PREFIX):
            return types.ReadResourceResult.model_validate(await read_skill(self.gateway, uri, self.request_context(ctx)))
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
        return capabilities(
            self.gateway,
            self.aggregator,
            max_revealed=self.max_revealed,
            version=self.version,
            allow=allow,
        )


def asked_progress(ctx: Any) -> bool:
    """Whether the client's request carries a progress token: without one, progress reports
    go nowhere, and an upstream call need not ask for progress, so it may take the thin path
    (:mod:`toolscout.sources.mcp.thin_call`). Read from the SDK's dispatch context of the
    request (through its wrappers); where it cannot be read, the answer is yes."""
    out = getattr(getattr(ctx, "session", None), "_request_outbound", None)
    for _ in range(4):
        if out is None:
            break
        for name in ("progress_token", "_progress_token", "_on_progress"):
            if hasattr(out, name):
                return getattr(out, name) is not None
        out = getattr(out, "_inner", None)
    return True
