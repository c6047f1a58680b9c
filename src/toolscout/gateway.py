"""The RFC 0001 semantics: ``find_tools``, ``call`` and ``use_tool`` over a catalog.

Two entries, each a parsed request (:mod:`toolscout.request`) plus the caller's
:class:`~toolscout.context.CallContext`: :meth:`Gateway.find` (how: :mod:`toolscout._gateway.finding`)
and :meth:`Gateway.execute`, a call run through the gateway's
:class:`~toolscout.access.guard.Guard` like every other operation (its handler is registered
there by :mod:`toolscout._gateway.execution` and reachable from nowhere else). Every surface goes
through them; ``find_tools``, ``call`` and ``use_tool`` are the library's conveniences. A
tool the caller may not see answers exactly as an unknown one. Nothing a model sends
raises out of here: every failure is data carrying an :class:`~toolscout.errors.ErrorInfo`.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

from . import formats
from ._gateway.execution import guard_tool_calls
from ._gateway.finding import search, use_choice
from ._gateway.no_match import did_you_mean, visible_categories
from ._sync import run_sync
from .access import approval
from .access.audit import Recorder
from .access.guard import Guard, Operation
from .access.identity import voter_of
from .access.policy import Policy
from .access.screening import screen_mode
from .access.validation import ArgumentCheck
from .access.visibility import Allow, Visibility
from .accounting.telemetry import stage
from .catalog_base import BaseCatalog, weak_listener
from .context import CallContext
from .embed.setup import enable_embeddings
from .errors import EmptyQuery, InvalidRequest, RequestError, ToolscoutError, UnknownTool
from .find_cache import FindCache
from .meta_tools import meta_tool_records, system_prompt
from .model import CallResult, Tool
from .namespaces import NamespaceBrowser
from .request import (
    DEFAULT_LIMIT,
    MAX_LIMIT,
    CallRequest,
    Dialect,
    FindRequest,
    UseRequest,
    dialect,
    find_arguments,
    kinds_option,
    shown,
)
from .results import FindResult, ToolReference, refused_find
from .search.index import ToolIndex
from .search.learning import UsageLearner, learner_for
from .storage import BlobStore, Follower

if TYPE_CHECKING:
    from .embed import Embedder
    from .storage import Store

__all__ = ["FindResult", "Gateway", "ToolReference"]

USE_TOOL_MARGIN = 1.5
"""``use_tool`` runs the top match only if its score is at least this many times the
runner-up's (or it is an exact name): a clear winner, not a coin toss."""

_NO_CONTEXT = CallContext()


class Gateway:
    """Search, validate and execute over one catalog.

    ``max_limit`` caps how many tools one search returns (default 20): every returned
    schema costs tokens and, with progressive disclosure, stays revealed. ``embeddings``
    turns on the ``semantic`` and ``hybrid`` modes (``auto`` then means hybrid); vectors are
    cached in ``vector_store`` (default: the catalog's own store) so restarts re-embed
    nothing. It is opt-in because embedding a new catalog takes time (about 65 tools/s).
    ``query_encoder`` chooses how requests are embedded (``"auto"``: the default model with
    block-quantized int8 products; ``"int8"`` faster, slightly less exact; ``"model"``; see
    docs/embeddings.md#query-encoders).
    ``approve`` (``approve(tool, arguments)``, sync or async) is asked before a call to a
    tool whose permission kind is in ``approve_kinds`` (default ``{"dangerous"}`` once
    some approver is given; ``"none"`` gates nothing): see :mod:`toolscout.access.approval`.
    ``trust_hints=False`` distrusts upstreams' MCP hints: a tool without an operator-set
    ``permission`` needs approval whatever its hints claim.
    """

    def __init__(
        self,
        catalog: BaseCatalog,
        *,
        index: ToolIndex | None = None,
        policy: Policy | None = None,
        max_limit: int = MAX_LIMIT,
        default_limit: int = DEFAULT_LIMIT,
        call_timeout: float | None = 60.0,
        platform: str | None = None,
        embeddings: bool | str | Embedder | None = None,
        vector_store: Store | None = None,
        query_encoder: str | Embedder | None = "auto",
        approve: approval.Approve | None = None,
        approve_kinds: str | Collection[str] | None = None,
        default_kinds: Collection[str] | None = None,
        learn: bool | str | UsageLearner = "auto",
        usage_store: BlobStore | None = None,
        meta_dialect: str | Dialect | None = None,
        result_cache: int | FindCache | None = None,
        list_names_below: int = 0,
        trust_hints: bool = True,
    ) -> None:
        self.catalog = catalog
        self.dialect: Dialect = dialect(meta_dialect)
        """How the find meta-tool is named and spelt (:data:`toolscout.request.DIALECTS`)."""
        self.result_cache: FindCache | None = (
            result_cache if isinstance(result_cache, FindCache) else FindCache(result_cache) if result_cache else None
        )
        """Search outcomes of repeated queries (:mod:`toolscout.find_cache`); off unless sized."""
        self.list_names_below = max(0, int(list_names_below))
        """Seed 003's fallback: when nothing matches and the caller may see at most this
        many tools, the error lists their names so the model can refine its query (0: off)."""
        self.default_kinds: tuple[str, ...] | None = kinds_option(default_kinds)
        """What ``find_tools`` ranks when the request names no ``kinds``; ``None``: the
        catalog's ``default_kinds`` (tools only unless set)."""
        self.index = index or ToolIndex(catalog, snapshots=catalog.store)
        if isinstance(catalog, Follower):  # a SharedCatalog: rebuild on its listener, not on the next search
            catalog.after_apply(weak_listener(self._refresh_index))
        self.hybrid = enable_embeddings(self.index, embeddings, vector_store or catalog.store, query_encoder)
        self.learner: UsageLearner | None = learner_for(learn, self.index, usage_store if usage_store is not None else catalog.store)
        """Learns from which found tools sessions call (:mod:`toolscout.search.learning`); ``None`` when off."""
        self.visibility = Visibility(policy, platform)
        self.namespaces = NamespaceBrowser(catalog, self.visibility)
        self.max_limit = max_limit
        self.default_limit = min(default_limit, max_limit)
        self.call_timeout = call_timeout
        self.pending_sources: Callable[[], Mapping[str, str]] | None = None
        """Set by whoever feeds the catalog from slow sources (the MCP aggregator): which
        have not listed their tools yet, and why. Shown with every search result."""
        self.arguments = ArgumentCheck()
        self.screen_results: Callable[[Tool, CallResult], Awaitable[CallResult]] | None = None
        """Reads every successful call result before it is returned (tool-result poisoning,
        :class:`toolscout.security.results.ResultScreen`); ``None``: results pass as they are."""
        self.approve = approve
        self.approve_kinds = approval.parse_kinds(approve_kinds)  # None: see gated_kinds
        self.trust_hints = trust_hints
        self.recorders: list[Recorder] = []
        """Audit recorders (:mod:`toolscout.access.audit`), one record per decision; none: nothing is built."""
        self.audit_arguments = False
        """Whether audit records carry the call's arguments (secret-looking values masked)."""
        self.guard = Guard(
            self.visibility,
            recorders=lambda: self.recorders,
            screen_mode=lambda entry: screen_mode(self.screen_results, entry),
            keep_arguments=lambda: self.audit_arguments,
        )
        """Every operation runs through it, tool calls included (:mod:`toolscout.access.guard`)."""
        guard_tool_calls(self.guard, self)
        self.code_runner: Any = None  # code mode's one sandbox pool, made on the first program (codemode.runner.code_runner)

    def _refresh_index(self) -> None:
        """Rebuild the index now (a shared catalog calls this after applying a change). Held
        weakly: the catalog keeps every index it feeds alive, so a discarded gateway must not
        have its index rebuilt on every change from then on."""
        self.index.refresh()

    @property
    def policy(self) -> Policy | None:
        return self.visibility.policy

    @property
    def platform(self) -> str:
        return self.visibility.platform

    # -- the two entries ---------------------------------------------------------------
    def find(
        self,
        request: FindRequest | Any,
        ctx: CallContext | None = None,
        *,
        loaded: Collection[str] = (),
        autocut: bool = True,
    ) -> FindResult:
        """Search for ``ctx``'s caller: the one way every surface finds tools.

        ``request``: a :class:`FindRequest`, or ``find_tools`` arguments as a model sends
        them, parsed here with this gateway's limits (bad ones: a result carrying the error).
        Only tools the caller may see are ranked. Tools in ``loaded`` are named but not sent
        again unless asked for by name. With ``ctx.session_id``, learning records the search.
        """
        ctx = ctx or _NO_CONTEXT
        if not isinstance(request, FindRequest):
            try:
                with stage("parse"):
                    request = FindRequest.parse(
                        request, default_limit=self.default_limit, max_limit=self.max_limit, dialect=self.dialect
                    )
            except RequestError as exc:
                if isinstance(exc, EmptyQuery):  # name only what this caller may see
                    exc = EmptyQuery(exc.message, hint=exc.hint, categories=self.visible_categories(ctx.allow))
                return refused_find(request, exc)
        result = search(self, request, ctx.allow, loaded, autocut)
        learner = self.learner
        if ctx.session_id is not None and learner is not None:
            learner.record_search(ctx.session_id, result, voter_of(ctx.principal, ctx.session_id))
        return result

    async def execute(
        self,
        request: CallRequest | UseRequest,
        ctx: CallContext | None = None,
    ) -> CallResult:
        """Run a call for ``ctx``'s caller: the one way every surface runs tools. Never raises.

        A :class:`CallRequest` resolves its name and runs through the guard
        (:mod:`toolscout.access.guard`, stages in :mod:`toolscout._gateway.execution`): a tool hidden
        from the caller answers exactly as an unknown one (``unknown_tool``, audited
        ``denied``); arguments are validated, the approver asked when the kind needs it, the
        handler run with ``ctx`` current within ``ctx.timeout`` (else ``call_timeout``), the
        result screened and audited. A :class:`UseRequest` finds first and runs the top match
        only when clearly ahead. With ``ctx.session_id``, learning records the call.
        """
        ctx = ctx or _NO_CONTEXT
        if isinstance(request, UseRequest):
            return await self._use(request, ctx)
        return await self._call(request, ctx, learn=True)

    async def _call(self, request: CallRequest, ctx: CallContext, *, learn: bool) -> CallResult:
        started = time.perf_counter()
        tool = self.lookup(request.name)
        if tool is None:
            error = self._unknown(request.name, ctx.allow)
            self.guard.record(Operation("tools/call", request.name, params=request.arguments), ctx, "refused", error.code)
            return CallResult.failure(request.name, error)
        op = Operation("tools/call", tool.name, entry=tool, params=request.arguments)
        try:
            result: CallResult = await self.guard.run(op, ctx, hidden=lambda: self._unknown(request.name, ctx.allow))
        except ToolscoutError as exc:
            if exc.code == "unknown_tool":  # hidden: as absent as an unknown name, and nothing to learn
                return CallResult.failure(request.name, exc)
            result = CallResult.failure(tool.name, exc, duration_ms=(time.perf_counter() - started) * 1000)
        learner = self.learner
        if learn and ctx.session_id is not None and learner is not None:
            learner.record_call(ctx.session_id, tool.name, result.ok, voter_of(ctx.principal, ctx.session_id))
        return result

    def audit_refusal(self, request: CallRequest, ctx: CallContext, error: ToolscoutError) -> None:
        """The audit record of a call a surface refused before :meth:`execute` (its name
        unknown, or hidden from the caller: then ``denied``): every decision is recorded."""
        tool = self.lookup(request.name)
        hidden = tool is not None and not self.visibility.admits(tool, ctx.allow)
        op = Operation("tools/call", request.name, params=request.arguments)
        self.guard.record(op, ctx, "denied" if hidden else "refused", "denied" if hidden else error.code)

    def visible_categories(self, allow: Allow | None) -> dict[str, int]:
        """Categories with the number of tools this caller may see in each, largest first:
        what hints and descriptions name (a hidden server is absent, not counted)."""
        return visible_categories(self.catalog, self.visibility, allow)

    # -- the library's conveniences --------------------------------------------------------
    def find_tools(
        self,
        query: str,
        limit: int | None = None,
        *,
        search_type: str | None = None,
        category: str | None = None,
        format: str = "generic",
        allow: Allow | None = None,
        exclude: Collection[str] = (),
        loaded: Collection[str] = (),
        kinds: Collection[str] | str | None = None,
        session: str | None = None,
        **aliases: Any,
    ) -> FindResult:
        """Search and render the found tools in ``format``. ``exclude``: tools never to
        return; ``loaded``: tools the caller already has (named, not re-sent). ``session``:
        a conversation id under which learning records this search (see :meth:`call`).
        Seed 001's argument names (``max_results``, ``category_filter``, ``searchType``)
        are accepted too, as keywords."""
        arguments = find_arguments(query, limit, search_type, category, exclude, kinds, aliases)
        try:
            formats.renderer(format)
            self.visibility.only_platform(aliases.get("platform"))
        except InvalidRequest as exc:
            return refused_find(arguments, exc)
        ctx = _NO_CONTEXT if allow is None and session is None else CallContext(session_id=session, allow=allow)
        return self.find(arguments, ctx, loaded=loaded).render(format)

    async def acall(
        self,
        name: str,
        arguments: Any = None,
        *,
        timeout: float | None = None,
        allow: Allow | None = None,
        session: str | None = None,
    ) -> CallResult:
        """Validate ``arguments`` against the tool's schema and run it. Never raises.
        ``session``: the id a :meth:`find_tools` used, so learning credits this call to
        that search (a :class:`~toolscout.session.Session` does this itself)."""
        try:
            request = CallRequest.parse(name, arguments)
        except ToolscoutError as exc:
            return CallResult.failure(name if isinstance(name, str) else shown(name), exc)
        return await self.execute(request, CallContext(session_id=session, allow=allow, timeout=timeout))

    def call(
        self, name: str, arguments: Any = None, *, timeout: float | None = None, session: str | None = None
    ) -> CallResult:
        """Synchronous :meth:`acall` (usable inside or outside a running event loop)."""
        return run_sync(self.acall(name, arguments, timeout=timeout, session=session))

    async def ause_tool(
        self, query: Any, params: Any = None, *, timeout: float | None = None, allow: Allow | None = None
    ) -> CallResult:
        """Find and run in one step, only when one tool is clearly the best match."""
        try:
            request = UseRequest.parse({"query": query, "params": params}, max_limit=self.max_limit)
        except ToolscoutError as exc:
            return CallResult.failure("use_tool", exc)
        return await self.execute(request, CallContext(allow=allow, timeout=timeout))

    def use_tool(self, query: str, params: Any = None, *, timeout: float | None = None) -> CallResult:
        """Synchronous :meth:`ause_tool`."""
        return run_sync(self.ause_tool(query, params, timeout=timeout))

    # -- find -------------------------------------------------------------------
    @property
    def find_name(self) -> str:
        """The find meta-tool's name as models see it (``find_tools`` unless a dialect)."""
        return self.dialect.name

    def kinds_default(self) -> tuple[str, ...]:
        """The kinds a request without ``kinds`` ranks."""
        kinds = getattr(self.catalog, "default_kinds", None) or ("tool",)
        return self.default_kinds or ((kinds,) if isinstance(kinds, str) else tuple(kinds))

    def suggest(self, name: str, n: int = 3, *, allow: Allow | None = None) -> list[str]:
        """Did-you-mean names for a misspelt or invented tool name (only tools the caller may see)."""
        return did_you_mean(self.index, self.catalog, self.visibility, name, n, allow)

    # -- names --------------------------------------------------------------------
    def lookup(self, name: str) -> Tool | None:
        """The tool a model means by ``name`` (exact, quoted, wire name, other spelling,
        unprefixed upstream name), or ``None``. Visibility is not checked."""
        return self.catalog.get(name) or self.index.resolver.tool(name)

    def resolve(self, name: str, *, allow: Allow | None = None) -> Tool:
        """The tool ``name`` means, if this caller may see it; else ``UnknownTool`` with
        did-you-mean names, the same answer for a hidden tool as for one that does not exist."""
        tool = self.lookup(name)
        if tool is None or not self.visibility.admits(tool, allow):
            raise self._unknown(name, allow)
        return tool

    def _unknown(self, name: str, allow: Allow | None) -> UnknownTool:
        return UnknownTool(f"no tool named {name!r}", suggestions=self.suggest(name, allow=allow))

    # -- call -------------------------------------------------------------------
    def gated_kinds(self, approve: approval.Approve | None = None) -> frozenset[str]:
        """The permission kinds whose calls need approval, for a caller whose approver is
        ``approve``: ``approve_kinds`` when set, else the default kinds once the caller or
        the gateway has an approver, else none."""
        return approval.gated_kinds(self.approve_kinds, (approve or self.approve) is not None)

    def validate(self, tool: Tool, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """Check parsed arguments (a :class:`CallRequest`'s) against ``tool``'s schema:
        a copy for the handler, or :class:`~toolscout.errors.InvalidArguments` listing each
        problem with its JSON pointer and expected type."""
        return self.arguments.validate(tool, arguments)

    async def _use(self, request: UseRequest, ctx: CallContext) -> CallResult:
        """Find, then run the top match only when clearly ahead (:func:`~toolscout.results.clear_winner`)."""
        picked = use_choice(self, request.find, ctx.allow, USE_TOOL_MARGIN)
        if isinstance(picked, str):
            return await self._call(CallRequest(picked, request.params), ctx, learn=False)
        code = picked.error.code if picked.error is not None else "error"
        self.guard.record(Operation("tools/call", "use_tool", params=request.params), ctx, "refused", code)
        return picked

    # -- what the model sees ------------------------------------------------------
    def meta_tools(self, format: str = "generic", *, use_tool: bool = False, call_tool: bool = False) -> list[dict[str, Any]]:
        """The meta-tool definitions in ``format``: ``find_tools`` (named as this gateway's
        dialect says), plus ``call_tool`` and/or ``use_tool`` when asked."""
        return [formats.render(t, format) for t in self.meta_tool_records(use_tool=use_tool, call_tool=call_tool)]

    def meta_tool_records(self, *, use_tool: bool = False, call_tool: bool = False) -> list[Tool]:
        return meta_tool_records(
            self.index.kinds(), default_limit=self.default_limit, max_limit=self.max_limit,
            use_tool=use_tool, call_tool=call_tool, dialect=self.dialect,
        )

    def system_prompt(self) -> str:
        return system_prompt(self.catalog.categories(), self.find_name)

