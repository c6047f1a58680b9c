"""Each caller's upstream accounts over HTTP: ``/v1/credentials`` and the OAuth callback.

``GET /v1/credentials`` lists the upstreams that act with the caller's own credential and
whether the caller has connected each (never a secret); ``PUT /v1/credentials/{server}``
registers a token or API key (or a stdio server's environment: only the names the
operator lists in its ``userEnv``, see :mod:`toolscout.sources.mcp.user_env`); ``DELETE`` forgets it;
``POST /v1/credentials/{server}/authorize`` starts the OAuth consent flow and answers the
link. ``GET /oauth/callback`` is where the upstream's authorization server sends the
user's browser back: it sits outside the bearer guard (a browser redirect carries no
token), and what it stores is bound to the principal that started the flow through the
single-use, expiring ``state``.

The caller is the principal the ASGI scope names (:mod:`.edge`); an anonymous caller
keeps nothing here.
"""

from __future__ import annotations

import html
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, StrictStr

from ..access.credentials import Credential
from ..access.principal import principal_of
from ..errors import ErrorInfo, ToolscoutError
from ..sources.mcp.per_user import CredentialBroker
from ..sources.mcp.user_env import EnvNotAllowed, check_user_env

__all__ = ["CALLBACK_PATH", "CREDENTIALS_PATH", "callback_app", "credentials_app"]

CREDENTIALS_PATH = "/v1/credentials"
CALLBACK_PATH = "/oauth/callback"
MAX_SECRET = 16_384


class CredentialBody(BaseModel):
    """A token or API key for one upstream, and/or environment for its stdio process."""

    model_config = ConfigDict(extra="forbid", json_schema_extra={"examples": [{"token": "ghp_..."}]})
    token: StrictStr | None = Field(None, min_length=1, max_length=MAX_SECRET)
    env: dict[StrictStr, StrictStr] | None = Field(None, max_length=64)
    """Only names the server's ``userEnv`` lists (checked in :func:`register`)."""


def _error(status: int, code: str, message: str, hint: str = "", **details: Any) -> JSONResponse:
    info = ErrorInfo(code=code, message=message, hint=hint, details=details)
    return JSONResponse({"error": info.to_dict()}, status_code=status)


def credentials_app(broker: CredentialBroker) -> FastAPI:
    """The ``/v1/credentials`` endpoints over ``broker`` (mounted in front of ``/v1``)."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)

    @app.exception_handler(RequestValidationError)
    async def unreadable(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems = [f"{'.'.join(str(p) for p in e.get('loc', ())[1:]) or 'body'}: {e.get('msg')}" for e in exc.errors()[:5]]
        return _error(422, "invalid_request", "; ".join(problems) or "the body does not match its schema",
                      'Send {"token": "<your token or API key>"} and/or {"env": {"NAME": "value"}}.')

    def caller(request: Request) -> str | JSONResponse:
        principal = principal_of(request.scope)
        if principal.anonymous:
            return _error(403, "anonymous", "per-user credentials belong to a signed-in caller, and this request names none",
                          "Send a bearer token from the gateway's issuer (docs/team-gateway.md).")
        return principal.id

    def unknown(server: str) -> JSONResponse:
        return _error(404, "unknown_server", f"no upstream named {server!r} uses per-user credentials",
                      "GET /v1/credentials lists the ones that do.", servers=sorted(broker.servers))

    @app.get(CREDENTIALS_PATH)
    async def listing(request: Request) -> Response:
        who = caller(request)
        if isinstance(who, JSONResponse):
            return who
        try:
            connected = {row["server"]: row for row in broker.vault.connected(who)} if broker.vault else {}
        except ToolscoutError as exc:
            return JSONResponse({"error": exc.to_dict()}, status_code=503)
        rows = []
        for name, cfg in sorted(broker.servers.items()):
            row = connected.get(name, {})
            rows.append({
                "server": name,
                "mode": cfg.credentials,
                "connected": cfg.credentials == "token-exchange" or name in connected,
                "kind": row.get("kind"),
                "expires_at": row.get("expires_at"),
                "connected_at": row.get("connected_at"),
                "oauth": broker.clients.get(name) is not None and broker.clients[name].authorization_url is not None,
            })
        return JSONResponse({"principal": who, "servers": rows})

    @app.put(CREDENTIALS_PATH + "/{server}")
    async def register(server: str, body: CredentialBody, request: Request) -> Response:
        who = caller(request)
        if isinstance(who, JSONResponse):
            return who
        if broker.servers.get(server) is None or broker.servers[server].credentials != "per-user":
            return unknown(server)
        if broker.vault is None:
            return _error(503, "no_vault", "this gateway keeps no per-user credentials (no vault key)",
                          "The operator sets TOOLSCOUT_VAULT_KEYS or --vault-keys (docs/credentials.md).")
        if body.token is None and not body.env:
            return _error(422, "invalid_request", "give 'token' or 'env'", "e.g. {\"token\": \"<your API key>\"}")
        if body.token is not None and "\x00" in body.token:
            return _error(422, "invalid_request", "the token holds a NUL byte", "Send the token as plain text.")
        try:
            check_user_env(server, broker.servers[server].user_env, body.env or {})
        except EnvNotAllowed as exc:
            return JSONResponse({"error": exc.to_dict()}, status_code=422)
        await broker.store_credential(who, server, Credential(token=body.token, env=body.env or {}, kind="token"))
        return JSONResponse({"server": server, "connected": True})

    @app.delete(CREDENTIALS_PATH + "/{server}")
    async def forget(server: str, request: Request) -> Response:
        who = caller(request)
        if isinstance(who, JSONResponse):
            return who
        if server not in broker.servers or broker.vault is None:
            return unknown(server)
        return JSONResponse({"server": server, "removed": await broker.forget(who, server)})

    @app.post(CREDENTIALS_PATH + "/{server}/authorize")
    async def authorize(server: str, request: Request) -> Response:
        who = caller(request)
        if isinstance(who, JSONResponse):
            return who
        if server not in broker.servers:
            return unknown(server)
        url = broker.consent_url(server, who)
        if url is None:
            return _error(409, "no_oauth", f"server {server!r} has no OAuth consent flow configured",
                          f"Register a token instead: PUT {CREDENTIALS_PATH}/{server}.")
        return JSONResponse({"server": server, "authorization_url": url})

    return app


def callback_app(broker: CredentialBroker) -> FastAPI:
    """``GET /oauth/callback``: finish a consent flow, answer a short page for the browser."""
    app = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)

    @app.get(CALLBACK_PATH)
    async def callback(request: Request) -> Response:
        query = request.query_params
        if query.get("error"):  # the user declined, or the server refused the request
            reason = html.escape(query.get("error_description") or query["error"])[:300]
            return _page(400, "Not connected", f"The authorization server answered: {reason}.")
        state, code = query.get("state", ""), query.get("code", "")
        if not state or not code:
            return _page(400, "Not connected", "This address needs the 'code' and 'state' the authorization server sends.")
        try:
            principal, server = await broker.complete(state, code)
        except ToolscoutError as exc:
            return _page(400, "Not connected", html.escape(exc.message) + ". " + html.escape(exc.hint or ""))
        return _page(200, "Connected", f"Your account at <b>{html.escape(server)}</b> is now connected for "
                     f"<b>{html.escape(principal)}</b>. You can close this page and retry the call.")

    return app


def _page(status: int, title: str, body: str) -> HTMLResponse:
    text = (f"<!doctype html><meta charset=utf-8><title>{title}</title>"
            f"<h1>{title}</h1><p>{body}</p>")
    return HTMLResponse(text, status_code=status, headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"})
