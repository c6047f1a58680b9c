"""The web console at ``/ui``: look at a served gateway the way the MCP Inspector looks at
one server (its upstreams, its catalog, why a query ranked what it did, what it saves, what
just failed).

Three plain files (``static/``: HTML, CSS, vanilla JS; no build step, no framework, nothing
fetched from elsewhere) and read-only JSON endpoints under ``/ui/api``; the page also reads
``/v1/servers`` and ``/v1/capabilities``. Its call panel runs a tool through ``POST /v1/call``
(the one call path, with its validation, policy and approval: the person at the console
answers the approval prompt, sent as the call's ``approved``). That POST carries the page's
``Origin``: on a loopback bind it passes the Host/Origin guard; on another bind the console's
origin must be allowed (``--allow-origin``), as for any browser client.

Auth: the static files hold no data and are served to anyone the Host/Origin guard admits
(a browser cannot attach a bearer token to a page load). ``/ui/api`` sits behind the same
:class:`~toolscout.server.guard.BearerGuard` as ``/v1``: the page asks for the token, keeps
it in the tab's ``sessionStorage`` (never a cookie, so no other site can make the browser
send it) and sends it as ``Authorization: Bearer``. Tool names and descriptions come from
upstream servers and may be hostile: the page only ever sets ``textContent``, and a strict
Content-Security-Policy (scripts from this origin only, no inline script) backs that up.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from importlib import resources
from typing import TYPE_CHECKING, Any

from fastapi import FastAPI, Query, Request
from fastapi.responses import Response

from ... import formats
from ...access.auth import principal_of_scope
from ...accounting.tokens import count_tool_tokens, gateway_savings
from ...context import CallContext
from ...errors import ToolscoutError
from ...security import findings_of
from ..capabilities import visible_servers
from ..guard import BearerGuard, HostOriginGuard
from ..http_api import EDGE, SERVER_FIELDS, JSONResponse, create_app, mount
from ..recent import RecentCalls

if TYPE_CHECKING:
    from ...gateway import Gateway
    from ...model import Tool
    from ...search.ranking import ScoredTool

__all__ = ["CONSOLE_API", "CONSOLE_PATH", "console_api", "local_app", "with_console"]

CONSOLE_PATH = "/ui"
CONSOLE_API = "/ui/api"
MAX_PAGE = 500
"""Catalog rows one request returns at most: a 10,000-tool catalog is paged, not shipped."""
_STATIC = {
    "index.html": "text/html; charset=utf-8",
    "console.js": "text/javascript; charset=utf-8",
    "console.css": "text/css; charset=utf-8",
}
_CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)
_HEADERS = {
    "content-security-policy": _CSP,
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "x-frame-options": "DENY",
    "cache-control": "no-store",
}
_FIELDS = ("name", "description", "param_names", "param_text", "labels", "i18n")
"""BM25F fields in the order the playground shows them (see :mod:`toolscout.search.keyword`)."""


# -- what the endpoints compute (plain functions: tested without HTTP) ----------------------
def server_of(tool: Tool) -> str:
    """The source a tool came from: its upstream server or source id, else its kind."""
    return tool.source_id or tool.source


def tool_row(tool: Tool) -> dict[str, Any]:
    """One catalog line: what the filters and the table need, not the whole record."""
    found = findings_of(tool) if tool.meta else []
    serious = [f for f in found if f.severity != "low"]
    return {
        "name": tool.name,
        "summary": tool.summary(),
        "server": server_of(tool),
        "kind": tool.source,
        "category": tool.category,
        "permission": tool.permission,
        "flagged": bool(serious),
        "severity": found[0].severity if found else None,
        "findings": len(found),
        "available": tool.available,
        "searchable": tool.searchable,
        "defer": tool.defer.value,
    }


def catalog_page(
    tools: list[Tool],
    *,
    server: str | None = None,
    category: str | None = None,
    kind: str | None = None,
    permission: str | None = None,
    flagged: bool = False,
    text: str | None = None,
    offset: int = 0,
    limit: int = 100,
) -> dict[str, Any]:
    """The catalog filtered, one page of it, and each filter's values with counts (over
    the whole catalog, so a filter never hides the other choices)."""
    rows = [tool_row(t) for t in tools]
    facets: dict[str, Any] = {
        key: dict(sorted(Counter(str(r[key]) if r[key] is not None else "(none)" for r in rows).items()))
        for key in ("server", "category", "kind", "permission")
    }
    facets["flagged"] = sum(r["flagged"] for r in rows)
    needle = (text or "").strip().lower()

    def keep(r: dict[str, Any]) -> bool:
        for key, want in (("server", server), ("category", category), ("kind", kind), ("permission", permission)):
            if want and (str(r[key]) if r[key] is not None else "(none)") != want:
                return False
        if flagged and not r["flagged"]:
            return False
        return not needle or needle in r["name"].lower() or needle in r["summary"].lower()

    matched = [r for r in rows if keep(r)]
    sources: dict[str, dict[str, Any]] = {}
    for r in rows:
        entry = sources.setdefault(r["server"], {"server": r["server"], "kinds": [], "tools": 0, "flagged": 0})
        entry["tools"] += 1
        entry["flagged"] += r["flagged"]
        if r["kind"] not in entry["kinds"]:
            entry["kinds"].append(r["kind"])
    limit = max(0, min(limit, MAX_PAGE))
    offset = max(0, offset)
    return {
        "total": len(rows),
        "matched": len(matched),
        "offset": offset,
        "limit": limit,
        "facets": facets,
        "sources": sorted(sources.values(), key=lambda s: s["server"]),
        "tools": matched[offset : offset + limit],
    }


def renderings(tool: Tool) -> dict[str, dict[str, Any]]:
    """The tool as each host format sends it, with what each costs (o200k tokens)."""
    out: dict[str, dict[str, Any]] = {}
    for fmt in formats.FORMATS:
        try:
            definition = formats.render(tool, fmt)
        except Exception as exc:  # one odd schema must not break the page
            out[fmt] = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        out[fmt] = {"definition": definition, "tokens": count_tool_tokens([definition])}
    return out


def _ASKS(tool: Tool, arguments: dict[str, Any]) -> bool:
    """The console stands for an approver (its person answers the prompt): the kinds gated
    for a caller who has one are the kinds the call panel asks about."""
    return False


def tool_detail(gateway: Gateway, tool: Tool) -> dict[str, Any]:
    """Everything the console shows about one tool: record, findings, every format."""
    record = tool.to_dict()
    record["meta"] = {k: v for k, v in record["meta"].items() if k != "toolscout.findings"}
    reason = formats.strict_refusal(tool.input_schema)
    kind = tool.effective_permission
    return {
        "approval": kind if kind is not None and kind in gateway.gated_kinds(_ASKS) else None,
        "row": tool_row(tool),
        "record": record,
        "findings": [f.to_dict() for f in findings_of(tool)],
        "visible": gateway.visibility.admits(tool),
        "openai_strict": reason or None,
        "formats": renderings(tool),
    }


def backends_of(why: str) -> list[str]:
    """The signals a hit's ``why`` names: ``keyword``, ``semantic``, ``name`` (close to an
    identifier in the query), ``regex``, ``exact name`` or ``select``."""
    head, _, rest = why.partition(": ")
    if head == "hybrid":
        return rest.split("+") if rest else ["hybrid"]
    return [head] if head else []


def score_parts(gateway: Gateway, text: str, hit: ScoredTool | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """A hit's score as the console shows it: its named parts (they add up to the score,
    :attr:`~toolscout.search.ranking.ScoredTool.parts`) and the keyword part taken apart
    over the query's terms and the fields holding them (BM25F of ``text``, what word
    matching read, scaled to the keyword part: in a fused mode it is the keyword side's share)."""
    if hit is None:
        return [], []
    parts = [{"signal": name, "score": value} for name, value in (hit.parts or (("score", hit.score),))]
    keyword = sum(p["score"] for p in parts if p["signal"] == "keyword")
    explained = gateway.index.explain(text, hit.tool.name) if keyword else []
    total = sum(score for _, score, _ in explained)
    scale = keyword / total if total > 0 else 0.0
    terms = [
        {"term": term, "score": score * scale, "fields": {f: v * scale for f, v in fields.items()}}
        for term, score, fields in explained
    ]
    return parts, terms


def explain_search(gateway: Gateway, arguments: dict[str, Any], format: str, ctx: CallContext = EDGE) -> dict[str, Any]:
    """A ``find_tools`` call as the model would get it (``result``, rendered in ``format``)
    and, per hit, the parts of its score: each signal's share (they add up to the score),
    the keyword share split over the query's terms and the fields holding them, and its
    schema in every format."""
    try:
        formats.renderer(format)
    except ToolscoutError as exc:
        return {"result": {"error": exc.info().to_dict()}, "hits": []}
    result = gateway.find(arguments, ctx)
    request = result.request
    if request is None:  # the arguments could not be parsed
        return {"result": {"error": result.error.to_dict() if result.error else {}}, "hits": []}
    hits: list[dict[str, Any]] = []
    text = gateway.index.matching_text(request.query)
    if result.error is None:
        scored = {s.tool.name: s for s in result.hits}
        for ref, tool in zip(result.tool_references, result.found, strict=True):
            hit = scored.get(tool.name)
            why = hit.why if hit is not None else ""
            parts, terms = score_parts(gateway, text, hit)
            hits.append(
                {
                    **tool_row(tool),
                    "relevance": ref.relevance_score,
                    "score": hit.score if hit is not None else None,
                    "why": why,
                    "signals": backends_of(why),
                    "parts": parts,
                    "terms": terms,
                    "findings": [dict(f) for f in ref.findings],
                    "formats": renderings(tool),
                }
            )
    return {"result": result.render(format).to_dict(), "hits": hits, "fields": list(_FIELDS), "matched_text": text}


class _TokenCache:
    """Savings reports by (catalog generation, settings): counting 10,000 schemas takes a
    second, and the page asks again on every visit."""

    def __init__(self) -> None:
        self._key: tuple[Any, ...] | None = None
        self._value: dict[str, Any] = {}

    def get(self, gateway: Gateway, format: str, searches: int, per_search: int, call_tool: bool) -> dict[str, Any]:
        key = (id(gateway.catalog), gateway.catalog.generation, format, searches, per_search, call_tool)
        if key != self._key:
            report = gateway_savings(gateway, format, searches=searches, found_per_search=per_search, call_tool=call_tool)
            self._value = {
                **report.to_dict(),
                "rows": [{"label": label, "tokens": n, "share": share} for label, n, share in report.rows()],
            }
            self._key = key
        return self._value


# -- the ASGI pieces --------------------------------------------------------------------------
def console_api(
    gateway: Gateway,
    *,
    aggregator: Any = None,
    recent: RecentCalls | None = None,
    call_tool: bool = True,
    access: Any = None,
) -> FastAPI:
    """The console's JSON endpoints under ``/ui/api`` (mount them behind the token guard).
    ``call_tool``: the meta-tools the gateway offers include ``call_tool`` (the MCP server
    does), which the token savings count. ``access``
    (:class:`~toolscout.access.identity.AccessRules`): each signed-in person sees only their own
    tools, and recent activity only if an admin."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    tokens = _TokenCache()

    def caller(request: Request) -> CallContext:
        """The signed-in person (the identity guard's principal), limited to their tools."""
        principal = principal_of_scope(request.scope)
        if principal is None or access is None:
            return EDGE
        return CallContext(principal=principal, allow=access.allow_for(principal))

    def sees_everyone(ctx: CallContext) -> bool:
        return access is None or ctx.principal.kind not in ("user", "service") or bool(access.is_admin(ctx.principal))

    def reply(body: Any, status: int = 200) -> Response:
        return JSONResponse(body, status_code=status, headers={"cache-control": "no-store", "x-content-type-options": "nosniff"})

    @app.get(f"{CONSOLE_API}/catalog")
    async def catalog(
        request: Request,
        server: str | None = None,
        category: str | None = None,
        kind: str | None = None,
        permission: str | None = None,
        flagged: bool = False,
        text: str | None = None,
        offset: int = Query(0, ge=0),
        limit: int = Query(100, ge=0),
    ) -> Response:
        ctx = caller(request)
        page = catalog_page(
            [t for t in gateway.catalog if (ctx.allow is None and gateway.policy is None) or gateway.visibility.admits(t, ctx.allow)], server=server, category=category, kind=kind, permission=permission,
            flagged=flagged, text=text, offset=offset, limit=limit,
        )
        page["servers"] = _servers(aggregator, visible_servers(gateway, aggregator, ctx.allow))
        return reply(page)

    @app.get(f"{CONSOLE_API}/tool")
    async def tool(request: Request, name: str) -> Response:
        ctx = caller(request)
        try:  # a tool the caller may not see (policy or their own rule) is answered as if it did not exist
            found = gateway.resolve(name, allow=ctx.allow)
        except ToolscoutError as exc:
            return reply({"error": exc.info().model_dump()}, 404)
        return reply(tool_detail(gateway, found))

    @app.get(f"{CONSOLE_API}/search")
    async def search(
        request: Request,
        q: str = "",
        limit: int | None = None,
        type: str | None = None,
        category: str | None = None,
        format: str = "generic",
    ) -> Response:
        arguments: dict[str, Any] = {"query": q}
        for key, value in (("limit", limit), ("search_type", type), ("category", category)):
            if value not in (None, ""):
                arguments[key] = value
        started = time.perf_counter()
        body = explain_search(gateway, arguments, format, caller(request))
        body["console_ms"] = round((time.perf_counter() - started) * 1000, 3)
        return reply(body)

    @app.get(f"{CONSOLE_API}/tokens")
    async def token_savings(
        format: str = "openai",
        searches: int = Query(3, ge=0, le=100),
        per_search: int = Query(5, ge=1, le=20),
    ) -> Response:
        try:
            formats.renderer(format)
        except ToolscoutError as exc:
            return reply({"error": exc.info().to_dict()}, 400)
        return reply(tokens.get(gateway, format, searches, per_search, call_tool))

    @app.get(f"{CONSOLE_API}/calls")
    async def calls(request: Request, limit: int = Query(200, ge=1, le=10_000)) -> Response:
        if recent is None or not sees_everyone(caller(request)):  # everyone's queries: admins only
            return reply({"calls": [], "total": 0, "errors": 0, "capacity": 0})
        body = {"calls": recent.snapshot(limit), "total": recent.total, "errors": recent.errors, "capacity": recent.capacity}
        return reply(body)

    return app


def _servers(aggregator: Any, seen: dict[str, int] | None) -> dict[str, dict[str, Any]]:
    """Upstream states as ``/v1/servers`` serves them (the same allow-list of fields, the
    same rule: only servers the caller may see, only their tools counted)."""
    rows = aggregator.status() if aggregator is not None else {}
    return {
        name: {k: row[k] for k in SERVER_FIELDS if k in row} | ({"tools": seen[name]} if seen is not None else {})
        for name, row in rows.items()
        if seen is None or name in seen
    }


def static_file(name: str) -> bytes:
    return resources.files(__package__).joinpath("static", name).read_bytes()


def with_console(guarded: Any) -> Any:
    """``guarded`` (the token-checked app) plus the console's static files at ``/ui``,
    which need no token: they hold no data (``/ui/api`` goes to ``guarded``)."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        api = path == CONSOLE_API or path.startswith(CONSOLE_API + "/")
        if api or not (path == CONSOLE_PATH or path.startswith(CONSOLE_PATH + "/")):
            await guarded(scope, receive, send)
            return
        await _serve_static(scope, send, path)

    return app


async def _serve_static(scope: dict[str, Any], send: Any, path: str) -> None:
    headers = [(k.encode(), v.encode()) for k, v in _HEADERS.items()]
    if scope.get("method") not in ("GET", "HEAD"):
        status, body, kind = 405, json.dumps({"error": "method_not_allowed"}).encode(), "application/json"
        headers.append((b"allow", b"GET, HEAD"))
    elif path == CONSOLE_PATH:  # relative links need the slash; a relative Location keeps a proxy's prefix
        status, body, kind = 308, b"", "text/plain"
        headers.append((b"location", b"ui/"))
    else:
        name = path[len(CONSOLE_PATH) + 1 :] or "index.html"
        if name in _STATIC:
            status, body, kind = 200, static_file(name), _STATIC[name]
        else:
            status, body, kind = 404, json.dumps({"error": "not_found"}).encode(), "application/json"
    headers.append((b"content-type", kind.encode()))
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": b"" if scope.get("method") == "HEAD" else body})


def local_app(gateway: Gateway, *, token: str | None, host: str = "127.0.0.1", recent: RecentCalls | None = None) -> Any:
    """``toolscout console``: the console and the ``/v1`` API over one local catalog (no
    MCP), behind the same guards as ``serve --transport http``."""
    recent = recent if recent is not None else RecentCalls()
    api = create_app(gateway, recent=recent)
    app = mount(console_api(gateway, recent=recent, call_tool=False), api, prefixes=(CONSOLE_API,))
    if token:
        app = BearerGuard(app, token)
    return HostOriginGuard(with_console(app), bind=host)
