"""An upstream MCP server that acts for each user with their own bearer token, and records which.

Streamable HTTP, built with the official SDK's low-level server, run in the test's own
event loop (``mcp_fixtures.asgi.serving``). Every request to ``/mcp`` must carry
``Authorization: Bearer <token>`` for a token this server issued or was given
(:meth:`PerUserUpstream.grant`), else 401 with ``WWW-Authenticate``. Every token it
receives is kept in ``seen``; every ``tools/call`` appends ``(tool, user, token)`` to
``calls``, so a test proves whose credential each call carried.

It is also the upstream's own OAuth authorization server, as a GitHub or Slack would be:
``/authorize`` (authorization code, PKCE S256 required; ``login_hint`` stands for the user
signing in there and approving), ``/token`` (``authorization_code`` with the verifier
checked, ``refresh_token``, and RFC 8693 ``token-exchange`` for subject tokens the test
registered with :meth:`trust_subject`).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import mcp_types as types
from mcp.server.lowlevel.server import Server
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

TOOLS = [
    {"name": "whoami", "description": "Say which account this server is acting for.",
     "inputSchema": {"type": "object", "properties": {}}},
    {"name": "echo", "description": "Echo text back.",
     "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}},
]


@dataclass
class PerUserUpstream:
    """The server's state: tokens it accepts, and what it saw."""

    lifetime: int = 3600
    tokens: dict[str, str] = field(default_factory=dict)  # access token -> user
    refresh: dict[str, str] = field(default_factory=dict)  # refresh token -> user
    subjects: dict[str, str] = field(default_factory=dict)  # token-exchange subject -> user
    codes: dict[str, dict[str, str]] = field(default_factory=dict)
    seen: list[str] = field(default_factory=list)  # every bearer token /mcp received
    calls: list[tuple[str, str, str]] = field(default_factory=list)  # (tool, user, token)
    grants: list[str] = field(default_factory=list)  # grant types /token honoured
    _n: Any = field(default_factory=itertools.count)

    def grant(self, user: str, token: str | None = None) -> str:
        token = token or f"at-{user}-{next(self._n)}-{secrets.token_hex(4)}"
        self.tokens[token] = user
        return token

    def revoke(self, token: str) -> None:
        self.tokens.pop(token, None)

    def trust_subject(self, subject: str, user: str) -> None:
        self.subjects[subject] = user

    # -- the app -------------------------------------------------------------------
    def app(self) -> Any:
        server = Server("per-user-upstream", version="1.0", on_list_tools=self._list, on_call_tool=self._call)
        routes = [Route("/authorize", self._authorize), Route("/token", self._token, methods=["POST"])]
        inner = server.streamable_http_app(host="127.0.0.1", custom_starlette_routes=routes)
        return _Guard(inner, self)

    async def _list(self, ctx: Any, params: types.PaginatedRequestParams | None) -> dict[str, Any]:
        return {"tools": TOOLS}

    async def _call(self, ctx: Any, params: types.CallToolRequestParams) -> dict[str, Any]:
        token = _bearer(dict(ctx.request.headers)) if getattr(ctx, "request", None) is not None else ""
        user = self.tokens.get(token, "?")
        self.calls.append((params.name, user, token))
        text = user if params.name == "whoami" else str((params.arguments or {}).get("text"))
        return {"content": [{"type": "text", "text": text}]}

    async def _authorize(self, request: Request) -> Response:
        q = request.query_params
        if q.get("response_type") != "code" or q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
            return JSONResponse({"error": "invalid_request"}, status_code=400)
        code = secrets.token_urlsafe(16)
        self.codes[code] = {"user": q.get("login_hint", "nobody"), "challenge": q["code_challenge"],
                            "redirect_uri": q.get("redirect_uri", ""), "client_id": q.get("client_id", "")}
        target = q["redirect_uri"] + "?" + urlencode({"code": code, "state": q.get("state", "")})
        return RedirectResponse(target, status_code=302)

    async def _token(self, request: Request) -> Response:
        form = await request.form()
        grant = form.get("grant_type")
        user: str | None = None
        if grant == "authorization_code":
            entry = self.codes.pop(str(form.get("code")), None)
            verifier = str(form.get("code_verifier", ""))
            digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
            if entry and digest == entry["challenge"] and form.get("redirect_uri") == entry["redirect_uri"]:
                user = entry["user"]
        elif grant == "refresh_token":
            user = self.refresh.pop(str(form.get("refresh_token")), None)
        elif grant == "urn:ietf:params:oauth:grant-type:token-exchange":
            user = self.subjects.get(str(form.get("subject_token")))
        if user is None:
            return JSONResponse({"error": "invalid_grant"}, status_code=400)
        self.grants.append(str(grant))
        body: dict[str, Any] = {"access_token": self.grant(user), "token_type": "Bearer", "expires_in": self.lifetime}
        if grant != "urn:ietf:params:oauth:grant-type:token-exchange":
            refresh = f"rt-{user}-{secrets.token_hex(6)}"
            self.refresh[refresh] = user
            body["refresh_token"] = refresh
        return JSONResponse(body)


def _bearer(headers: dict[str, str]) -> str:
    value = headers.get("authorization", "")
    return value[7:] if value.lower().startswith("bearer ") else ""


class _Guard:
    """401 for ``/mcp`` without a token this server accepts; records every token it sees."""

    def __init__(self, app: Any, state: PerUserUpstream) -> None:
        self.app = app
        self.state = state

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/mcp"):
            headers = {k.decode().lower(): v.decode() for k, v in scope.get("headers") or []}
            token = _bearer(headers)
            if token:
                self.state.seen.append(token)
            if token not in self.state.tokens:
                body = json.dumps({"error": "invalid_token"}).encode()
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"), (b"www-authenticate", b'Bearer error="invalid_token"')]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
