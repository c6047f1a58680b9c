"""The HTTP API under ``/v1``: find and call tools from any language, without speaking MCP.

Same gateway, same rules, same errors as data as ``find_tools``/``call_tool``: a problem a
model can act on (no match, unknown tool, invalid arguments, a failing upstream) is a 200
whose body carries ``error``, exactly what the library returns. Only a request the API
itself cannot read (broken JSON, a wrong type, a body over 4 MiB) is a 4xx, with
``{"error": {"code", "message", "hint"}}``; so is an unknown name in ``GET /v1/tools/{name}``
(404, with did-you-mean names), where there is no model result to carry it.

FastAPI does the routing and builds the OpenAPI document (``/v1/openapi.json``) from the
pydantic models of :mod:`.http_models`. Only whoever serves HTTP imports this module: never the stdio path.

:func:`create_app` serves a :class:`~toolscout.gateway.Gateway` alone (mount it in your own
service); :func:`toolscout.server.app.http_app`
serves it next to ``/mcp`` on one port, behind the same guards.
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse as _StarletteJSON
from fastapi.responses import Response
from starlette.exceptions import HTTPException

from .. import formats
from ..access.approval import Decision
from ..access.audit import parse_since
from ..access.auth import principal_of_scope
from ..access.principal import edge_context
from ..context import CallContext
from ..errors import ErrorInfo, InvalidRequest, ToolscoutError, split_pending
from ..model import CallResult
from ..request import CallRequest, shown
from ..results import refused_find
from ..storage import Follower
from .capabilities import capabilities as gateway_capabilities
from .capabilities import server_version, visible_servers
from .http_models import (
    ERRORS,
    CallBody,
    CallResponse,
    ErrorResponse,
    FindBody,
    FindResponse,
    HealthResponse,
    ReadyResponse,
    ServersResponse,
)

if TYPE_CHECKING:
    from ..gateway import Gateway
    from .metrics import Metrics
    from .recent import RecentCalls

__all__ = ["API_PREFIX", "MAX_BODY_BYTES", "JSONResponse", "create_app", "mount"]

log = logging.getLogger("toolscout.http")

API_PREFIX = "/v1"
EDGE = CallContext()
"""What a request tells this API about its caller: nobody in particular (a bearer token
guards the port, it names no principal). Every find and call carries it to the gateway."""
MAX_BODY_BYTES = 4 * 1024 * 1024
"""Bodies above this get a 413, as on ``/mcp``: a find or a call never needs more."""
SERVER_FIELDS = (
    "state",
    "kind",
    "transport",
    "tools",
    "skipped",
    "fetched_at",
    "from_cache",
    "last_error",
    "retry_in",
    "connected_at",
    "calls",
    "flagged",
    "quarantined",
)
"""The status fields ``/v1/servers`` passes on. A list, not "all but": a field added to the
aggregator later is not served until someone checks that it carries no secret."""
_STARTING = ("starting", "listing tools")
_PING_TIMEOUT = 2.0
"""Seconds readiness waits for the session store's PING (a probe must answer in time)."""
_TOO_LARGE = f"The body may hold at most {MAX_BODY_BYTES} bytes."


class JSONResponse(_StarletteJSON):
    """A JSON body that can always be sent. Requests echo user text (a query, a tool name)
    and tools return what they like: a lone UTF-16 surrogate (``"\\ud800"`` in the request's
    JSON) cannot be encoded as UTF-8, and NaN or infinity is not JSON. Starlette's renderer
    raises on both (an HTTP 500); here the first is sent as its ``\\uXXXX`` escape (what the
    client sent) and the second as ``null``."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return json.dumps(content, ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")
        except ValueError:  # NaN or infinity somewhere in a result
            return json.dumps(_finite(content), ensure_ascii=True, allow_nan=False, separators=(",", ":")).encode("ascii")


def _finite(value: Any) -> Any:
    """``value`` with every non-finite float as ``None`` (JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


# -- the app --------------------------------------------------------------------------
def create_app(
    gateway: Gateway,
    *,
    aggregator: Any = None,
    capabilities: Callable[..., dict[str, Any]] | None = None,
    metrics: Metrics | None = None,
    cold_start_wait: float = 5.0,
    docs: bool = True,
    recent: RecentCalls | None = None,
    session_store: Any = None,
    auth: Any = None,
    access: Any = None,
    audit_log: Any = None,
) -> FastAPI:
    """The ``/v1`` API over ``gateway`` as an ASGI app (no MCP, no guards: mount it behind
    your own auth, or serve it with :func:`toolscout.server.app.http_app`).

    ``aggregator`` (an MCP :class:`~toolscout.sources.mcp.aggregator.Aggregator`) adds its
    servers to ``/v1/servers`` and readiness; ``metrics`` adds ``/metrics`` and counts every
    find and call; ``cold_start_wait`` bounds how long a find waits for upstreams that have
    never listed their tools, as ``find_tools`` over MCP does; ``recent`` keeps the last
    finds and calls for the web console; ``session_store`` (a
    :class:`~toolscout.sessions.redis.RedisSessionStore`) is checked by readiness, as is
    the gateway's catalog when it is a :class:`~toolscout.scaleout.replica.SharedCatalog`.
    ``auth`` (a :class:`~toolscout.access.auth.TokenVerifier`) is checked by readiness too;
    ``access`` (:class:`~toolscout.access.identity.AccessRules`) limits each caller (the principal
    the guard in front established) to their tools; ``audit_log``
    (:class:`~toolscout.access.audit.AuditLog`) is served at ``/v1/audit``.
    """
    app = FastAPI(
        default_response_class=JSONResponse,
        title="toolscout HTTP API",
        version=server_version(),
        summary="Find and call tools through the toolscout gateway.",
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=f"{API_PREFIX}/docs" if docs else None,
        redoc_url=None,
    )
    app.add_middleware(_BodyLimit, max_bytes=MAX_BODY_BYTES)
    app.state.gateway = gateway
    caps = capabilities or (
        lambda allow=None: gateway_capabilities(gateway, aggregator, max_revealed=0, version=server_version(), allow=allow)
    )

    def edge(request: Request, session: str | None = None) -> CallContext:
        """The caller of this request, as the identity guard in front established it (with
        ``session``: the conversation learning credits, always the caller's own)."""
        principal = principal_of_scope(request.scope)
        if principal is None:  # mounted without the guard: nobody to credit a conversation to
            return EDGE
        allow = access.allow_for(principal) if access is not None else None
        conversation = f"v1:{principal.id}:{session}" if session is not None else None
        kinds = access.approve_kinds(principal) if access is not None else frozenset()
        return CallContext(session_id=conversation, principal=principal, allow=allow, approve_kinds=kinds)

    def pending() -> dict[str, str]:
        source = getattr(aggregator, "pending", None) or gateway.pending_sources
        return dict(source()) if source is not None else {}

    def observe(op: str, started: float, error: ErrorInfo | None, name: str = "") -> None:
        seconds = time.perf_counter() - started
        if metrics is not None:
            metrics.observe("http", op, seconds, error.code if error else None)
        if recent is not None:
            code, message = (error.code, error.message) if error else (None, None)
            recent.record("http", op, name, ok=error is None, ms=seconds * 1000, code=code, message=message)

    @app.exception_handler(RequestValidationError)
    async def unreadable(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = exc.errors()
        if any(p.get("type") == "json_invalid" for p in problems):
            status, message = 400, "the body is not valid JSON"
        else:
            status = 422
            message = "; ".join(_problem(p) for p in problems[:5]) or "the request does not match its schema"
        hint = "Send one JSON object with Content-Type: application/json; see /v1/openapi.json."
        errors = [{"loc": list(p.get("loc", ())), "msg": p.get("msg"), "type": p.get("type")} for p in problems[:20]]
        error = InvalidRequest(message, hint=hint, errors=errors).info()
        if metrics is not None:
            metrics.error("http", _op(request.url.path), error.code)
        return _error(status, error)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        code = {401: "unauthorized", 404: "not_found", 405: "method_not_allowed", 413: "too_large"}.get(
            exc.status_code, "http_error"
        )
        hint = _TOO_LARGE if exc.status_code == 413 else ""
        if exc.status_code == 404:
            hint = "See /v1/openapi.json for the endpoints."
        info = ErrorInfo(code=code, message=str(exc.detail), hint=hint)
        return _error(exc.status_code, info, dict(exc.headers or {}))

    @app.post(f"{API_PREFIX}/find", response_model=FindResponse, responses=ERRORS, tags=["tools"])
    async def find(body: FindBody, request: Request) -> Response:
        """Search the catalog (``find_tools``). Model-facing problems come back as `error`."""
        started = time.perf_counter()
        arguments = body.model_dump(exclude={"format", "session"}, exclude_none=True)
        try:
            formats.renderer(body.format)
        except InvalidRequest as exc:
            result = refused_find(arguments, exc)
        else:
            await _wait_for_sources(aggregator, cold_start_wait)
            result = gateway.find(arguments, edge(request, body.session)).render(body.format)
        observe("find", started, result.error, body.query)
        return JSONResponse(result.to_dict())

    @app.post(f"{API_PREFIX}/call", response_model=CallResponse, responses=ERRORS, tags=["tools"])
    async def call(body: CallBody, request: Request) -> Response:
        """Validate the arguments against the tool's schema and run it (``call_tool``)."""
        started = time.perf_counter()
        try:
            parsed = CallRequest.parse(body.name, body.arguments)
        except ToolscoutError as exc:
            result = CallResult.failure(body.name if isinstance(body.name, str) else shown(body.name), exc)
        else:
            ctx = edge_context(request.scope, edge(request, body.session))
            if body.approved is not None:
                ctx = ctx.replace(approve=_answered(body.approved))
            result = await gateway.execute(parsed, ctx)
        error = result.error or (None if result.ok else ErrorInfo(code="tool_error", message=result.text()[:300] or "isError"))
        observe("call", started, error, result.tool)
        return JSONResponse(result.to_dict())

    @app.get(
        f"{API_PREFIX}/tools/{{name:path}}",
        response_model=dict[str, Any],
        responses={
            400: {"model": ErrorResponse, "description": "Unknown format."},
            404: {"model": ErrorResponse, "description": "No such tool; `details.suggestions` has near names."},
        },
        tags=["tools"],
    )
    async def tool(
        request: Request,
        name: str,
        format: str = Query("generic", description="Tool format: " + ", ".join(formats.FORMATS)),
    ) -> Response:
        """One tool's definition, rendered in ``format`` (the name resolves as in a call)."""
        try:
            render = formats.renderer(format)
        except InvalidRequest as exc:
            return _error(400, exc.info())
        try:
            found = gateway.resolve(name, allow=edge(request).allow)
        except ToolscoutError as exc:
            info = exc.info()
            return _error(404 if info.code == "unknown_tool" else 403, info)
        return JSONResponse(render(found))

    @app.get(f"{API_PREFIX}/servers", response_model=ServersResponse, tags=["gateway"])
    async def servers(request: Request) -> Response:
        """Each upstream server's state and tool count (never its command, env or headers);
        only the servers this caller may see, counting only the tools they may see."""
        rows = aggregator.status() if aggregator is not None else {}
        seen = visible_servers(gateway, aggregator, edge(request).allow)
        out = {
            name: {k: row[k] for k in SERVER_FIELDS if k in row} | ({"tools": seen[name]} if seen is not None else {})
            for name, row in rows.items()
            if seen is None or name in seen
        }
        return JSONResponse({"servers": out})

    @app.get(f"{API_PREFIX}/capabilities", response_model=dict[str, Any], tags=["gateway"])
    async def capabilities(request: Request) -> Response:
        """Search backends, counts, limits and formats (the MCP capabilities resource, plus
        the formats this API renders), as this caller may see them."""
        allow = edge(request).allow
        body = dict(caps(allow))
        body["http"] = {"version": "v1", "formats": list(formats.FORMATS)}
        return JSONResponse(body)

    @app.get(f"{API_PREFIX}/health", response_model=HealthResponse, tags=["gateway"])
    async def health() -> Response:
        """Liveness: the process answers. Says nothing about upstreams (see ``/v1/ready``)."""
        return JSONResponse({"status": "ok"})

    @app.get(
        f"{API_PREFIX}/ready",
        response_model=ReadyResponse,
        responses={503: {"model": ReadyResponse, "description": "Some source is still on its first listing (starting), or a shared store is unreachable (unavailable)."}},
        tags=["gateway"],
    )
    async def ready() -> Response:
        """Readiness: 200 once every source has listed its tools once (or failed to, and is
        retried in the background: ``degraded``, naming each failed source with its reason and
        next retry) and the shared stores answer, else 503: ``starting``
        names the sources still loading, ``unavailable`` a store that cannot be reached
        (PostgreSQL: this replica no longer follows the shared catalog; Redis: stateful
        sessions fail). Recovers by itself when the store is back."""
        starting, failed = split_pending(pending())
        status = "starting" if starting else "degraded" if failed else "ready"  # degraded: serving, some source down
        body: dict[str, Any] = {"status": status, "tools": len(gateway.catalog)}
        body.update(pending=starting, failed=failed)
        down = False
        if isinstance(gateway.catalog, Follower):  # a catalog following a shared store
            state = gateway.catalog.status()
            held = state["sources"]
            body["store"] = {
                "kind": state["engine"],
                "where": state["store"],
                "reachable": state["connected"],
                "version": max(held.values(), default=0),
                "sources": held,
                "last_error": state["last_error"],
            }
            down = not state["connected"]
        if session_store is not None:
            try:
                alive = bool(await asyncio.wait_for(session_store.aping(), _PING_TIMEOUT))
            except Exception:  # a timeout, or a client that could not even be built
                alive = False
            body["sessions"] = {"kind": session_store.engine, "where": session_store.where, "reachable": alive}
            down = down or not alive
        if auth is not None:  # an issuer that cannot be reached: every token is refused (fail closed)
            body["auth"] = await auth.status()
            down = down or not body["auth"]["reachable"]
        if down:
            body["status"] = "unavailable"
        return JSONResponse(body, status_code=503 if down or starting else 200)

    @app.get(f"{API_PREFIX}/whoami", response_model=dict[str, Any], tags=["gateway"])
    async def whoami(request: Request) -> Response:
        """Who this gateway takes the caller to be, and whether they may read everyone's audit log."""
        principal = edge(request).principal
        claims = principal.claims
        shown_claims = {k: claims[k] for k in ("iss", "groups", "roles", "scope", "client_id", "name", "email") if k in claims}
        return JSONResponse(
            {"principal": principal.id, "kind": principal.kind, "claims": shown_claims, "admin": _admin(principal)}
        )

    def _admin(principal: Any) -> bool:
        """Signed-in callers are admins when ``auth.admins`` says so; the holder of the
        static token (or a caller of an unguarded loopback port) is the operator."""
        if principal.kind in ("user", "service"):
            return access is not None and bool(access.is_admin(principal))
        return True

    if audit_log is not None:

        @app.get(f"{API_PREFIX}/audit", response_model=dict[str, Any], tags=["gateway"])
        async def audit(
            request: Request,
            since: str = Query("1h", description="How far back: 30m, 1h, 7d or an ISO 8601 time."),
            principal: str | None = Query(None, description="Only this principal's calls."),
            tool: str | None = Query(None, description="Only calls of this tool."),
            limit: int = Query(200, ge=1, le=10_000),
        ) -> Response:
            """Audit records, newest first. Admins see everyone's; anyone else their own."""
            caller = edge(request).principal
            try:
                start = parse_since(since)
            except ValueError as exc:
                return _error(422, InvalidRequest(str(exc), hint="Pass since=1h (or 30m, 7d, 2026-01-01T00:00:00Z).").info())
            if not _admin(caller):
                if principal not in (None, caller.id):
                    info = ErrorInfo(code="denied", message="only admins read other callers' audit records",
                                     hint="Leave out principal= to read your own.")
                    return _error(403, info)
                principal = caller.id
            records = await asyncio.to_thread(audit_log.query, since=start, principal=principal, tool=tool, limit=limit)
            return JSONResponse({"records": [r.to_dict() for r in records]})

    if metrics is not None:

        @app.get("/metrics", include_in_schema=False)
        async def scrape() -> Response:
            body, content_type = metrics.render()
            return Response(body, media_type=content_type)

    return app


def mount(api: Any, other: Any, prefixes: Iterable[str] = (API_PREFIX, "/metrics")) -> Any:
    """One ASGI app: paths under ``prefixes`` go to ``api``, everything else (``/mcp``,
    and the lifespan, which the MCP session manager needs) to ``other``."""
    heads = tuple(prefixes)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if any(path == p or path.startswith(p + "/") for p in heads):
            await api(scope, receive, send)
        else:
            await other(scope, receive, send)

    return app


class _BodyLimit:
    """413 for a body over ``max_bytes``, declared or streamed, with the API's JSON error
    (FastAPI's own limit answers in plain text when Content-Length is too large)."""

    def __init__(self, app: Any, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = next((v for k, v in scope.get("headers") or [] if k == b"content-length"), b"")
        if declared.isdigit() and int(declared) > self.max_bytes:
            info = ErrorInfo(code="too_large", message="Content Too Large", hint=_TOO_LARGE)
            await _error(413, info)(scope, receive, send)
            return
        seen = 0

        async def limited() -> dict[str, Any]:
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.max_bytes:  # raised inside the handler: answered by http_error
                raise HTTPException(413, "Content Too Large")
            return message

        await self.app(scope, limited, send)


async def _wait_for_sources(aggregator: Any, timeout: float) -> None:
    """Cold start: give upstreams that have never listed their tools a bounded moment."""
    if aggregator is None or timeout <= 0 or not hasattr(aggregator, "wait_listed"):
        return
    waiting = aggregator.pending()
    if not any(v in _STARTING for v in waiting.values()):
        return
    try:
        await aggregator.wait_listed(timeout)
    except Exception as exc:  # a courtesy: the search answers regardless, naming what loads
        log.debug("cold-start wait failed: %s", exc)


def _answered(approved: bool) -> Callable[[Any, Any], Decision]:
    """An approver that gives the answer the caller brought with its request."""
    decision = Decision.allow("approved by the caller") if approved else Decision.deny("the caller's user declined")
    return lambda tool, arguments: decision


def _error(status: int, info: ErrorInfo, headers: Mapping[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": info.to_dict()}, status_code=status, headers=dict(headers or {}))


def _problem(p: Mapping[str, Any]) -> str:
    where = ".".join(str(x) for x in p.get("loc", ()) if x != "body") or "body"
    return f"{where}: {p.get('msg', 'invalid')}"


def _op(path: str) -> str:
    return path.removeprefix(API_PREFIX + "/").split("/", 1)[0] or "other"
