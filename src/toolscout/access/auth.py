"""``serve`` as an OAuth 2.1 resource server: who is calling, established once at the edge.

The MCP specification (2026-07-28) makes an HTTP MCP server a resource server: it
publishes protected-resource metadata (RFC 9728) naming its authorization server, answers
a request without a usable token with 401 and ``WWW-Authenticate: Bearer
resource_metadata="..."``, accepts only tokens issued *for itself* (audience = its own
resource URL, RFC 8707) and never passes a caller's token on. :class:`TokenVerifier`
checks a token; :class:`IdentityGuard` turns each HTTP request into a
:class:`~toolscout.context.Principal` in the ASGI scope (``scope["toolscout.principal"]``),
which the MCP server, ``/v1`` and the console put into every call's
:class:`~toolscout.context.CallContext`.

What is checked, and why this way:

* JWT access tokens with ``pyjwt`` (``toolscout[auth]``), never by hand: the signing key
  comes from the issuer's JWKS (fetched once, cached, refetched when a token names an
  unknown ``kid``, at most every ``jwksRefresh`` seconds so a flood of made-up ``kid``\\ s
  cannot hammer the issuer); the algorithm must be one of the configured asymmetric ones
  and match the key (no ``none``, no HS256 keyed with a public key); issuer, audience,
  ``exp``/``nbf`` (``leeway`` seconds of clock skew) and the required scopes.
* Opaque tokens through the issuer's introspection endpoint (RFC 7662) when configured,
  each answer cached for at most a minute (or the token's life, if shorter).
* An issuer that cannot be reached fails closed (503 ``issuer_unavailable``, and
  ``/v1/ready`` says so); tokens are never logged, only why they were refused.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from ..context import Principal
from ..errors import (
    InsufficientScope,
    InvalidToken,
    IssuerUnavailable,
    MissingExtra,
    ToolscoutError,
)
from .credentials.vault import SUBJECT_TOKEN
from .identity import AccessRules, Rule, address_principal, principal_from_claims, token_principal
from .principal import CREDENTIALS_KEY, PRINCIPAL_KEY, established

__all__ = [
    "ASYMMETRIC",
    "PRINCIPAL_KEY",
    "AuthConfig",
    "IdentityGuard",
    "PolicyRule",
    "TokenVerifier",
    "principal_of_scope",
]

log = logging.getLogger("toolscout.auth")

METADATA_PATH = "/.well-known/oauth-protected-resource"
ASYMMETRIC = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)
"""Signature algorithms an access token may use: public-key ones only."""

App = Callable[..., Awaitable[None]]
_REMEMBERED = 4096
"""Checked JWTs remembered (by hash) until they expire."""


class _Model(BaseModel):
    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid", frozen=True)


class PolicyRule(_Model):
    """One rule of ``auth.policies``: whom it is for and what they may see and run."""

    match: dict[str, str | list[str]] = Field(default_factory=dict)
    tools: list[str] | None = None
    deny: list[str] = Field(default_factory=list)
    servers: list[str] | None = None
    permissions: list[str] | None = None
    approve: list[str] = Field(default_factory=list)

    def rule(self) -> Rule:
        return Rule.of(
            self.match, tools=self.tools, deny=self.deny, servers=self.servers,
            permissions=self.permissions, approve=self.approve,
        )


class AuthConfig(_Model):
    """The ``auth`` block of a gateway config (``--auth`` takes it as JSON or a file)."""

    issuer: str
    resource: str | None = None
    """This gateway's resource URL, the audience tokens must carry (default: its MCP URL)."""
    jwks_url: str | None = None
    introspection_url: str | None = None
    client_id: str | None = None
    client_secret: str | None = Field(default=None, repr=False)
    required_scopes: list[str] = Field(default_factory=list)
    algorithms: list[str] = Field(default_factory=lambda: ["RS256", "PS256", "ES256", "EdDSA"])
    leeway: float = Field(default=30.0, ge=0, le=300)
    jwks_refresh: float = Field(default=10.0, ge=0)
    id_claim: str = "sub"
    groups_claim: str = "groups"
    policies: list[PolicyRule] = Field(default_factory=list)
    admins: list[dict[str, str | list[str]]] = Field(default_factory=list)
    """Who may read everyone's audit log: match objects, as in a rule (``{"groups": "admins"}``)."""

    @field_validator("algorithms")
    @classmethod
    def _asymmetric(cls, value: list[str]) -> list[str]:
        wrong = [a for a in value if a not in ASYMMETRIC]
        if wrong or not value:
            raise ValueError(
                f"algorithms must be public-key ones ({', '.join(sorted(ASYMMETRIC))}); not {', '.join(wrong) or 'none'}"
            )
        return value

    @field_validator("issuer", "resource", "jwks_url", "introspection_url")
    @classmethod
    def _url(cls, value: str | None) -> str | None:
        if value is not None:
            parts = urlsplit(value)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ValueError(f"{value!r} is not an http(s) URL")
        return value

    def access_rules(self) -> AccessRules:
        return AccessRules([p.rule() for p in self.policies], admins=[Rule.of(m) for m in self.admins])


def _jwt() -> Any:
    try:
        import jwt  # the auth extra: pyjwt[crypto]
    except ImportError as exc:
        raise MissingExtra("checking OAuth access tokens", "auth") from exc
    return jwt


def _scopes(claims: dict[str, Any]) -> set[str]:
    raw = claims.get("scope", claims.get("scp", ()))
    return set(raw.split()) if isinstance(raw, str) else {str(s) for s in raw} if isinstance(raw, list) else set()


class TokenVerifier:
    """Checks bearer tokens for one resource against one issuer; ``verify`` returns the
    caller or raises :class:`InvalidToken`, :class:`InsufficientScope` or
    :class:`IssuerUnavailable` (never with the token in the message)."""

    def __init__(self, config: AuthConfig, resource: str, *, timeout: float = 5.0) -> None:
        self.config = config
        self.resource = resource
        self.issuer = config.issuer
        self.timeout = timeout
        self._jwt = _jwt()
        self._keys: dict[str | None, tuple[Any, str | None]] = {}
        self._fetched_at = float("-inf")
        self._tried_at = float("-inf")
        self._metadata: dict[str, Any] | None = None
        self._lock = asyncio.Lock()
        self.last_error: str | None = None
        self._introspected: OrderedDict[str, tuple[float, dict[str, Any]]] = OrderedDict()
        self._verified: OrderedDict[bytes, tuple[float, Principal]] = OrderedDict()

    # -- the one entry ----------------------------------------------------------------
    async def verify(self, token: str) -> Principal:
        """The caller ``token`` stands for. A JWT checked once is remembered (by its hash,
        until it expires): a client sends the same token with every request, and checking
        its signature again each time cost ~20x the static token's compare
        (docs/benchmarks.md)."""
        digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        known = self._verified.get(digest)
        if known is not None:
            if time.time() < known[0]:
                return known[1]
            del self._verified[digest]
        jwt_token = token.count(".") == 2
        claims = await (self._jwt_claims(token) if jwt_token else self._introspect(token))
        missing = [s for s in self.config.required_scopes if s not in _scopes(claims)]
        if missing:
            raise InsufficientScope(
                f"the token lacks the scope{'s' if len(missing) > 1 else ''} {' '.join(missing)}",
                hint="Ask the authorization server for a token with these scopes.",
                scope=" ".join(self.config.required_scopes),
            )
        principal = principal_from_claims(claims, id_claim=self.config.id_claim, groups_claim=self.config.groups_claim)
        exp = claims.get("exp")
        if jwt_token and isinstance(exp, int | float):
            self._verified[digest] = (float(exp) + self.config.leeway, principal)
            while len(self._verified) > _REMEMBERED:
                self._verified.popitem(last=False)
        return principal

    async def _jwt_claims(self, token: str) -> dict[str, Any]:
        jwt = self._jwt
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise InvalidToken("the token is not a well-formed JWT") from None
        alg = header.get("alg")
        if alg not in self.config.algorithms:
            raise InvalidToken(f"tokens signed with {str(alg)[:20]!r} are not accepted")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("the token's key id is not a string")
        key, declared = await self._key(kid)
        if declared is not None and declared != alg:  # the issuer said which algorithm this key signs with
            raise InvalidToken("the token's algorithm does not match its key")
        try:
            return dict(
                jwt.decode(
                    token,
                    key.key,
                    algorithms=[alg],
                    audience=self.resource,
                    issuer=self.issuer,
                    leeway=self.config.leeway,
                    options={"require": ["exp", "iss", "aud"]},
                )
            )
        except jwt.ExpiredSignatureError:
            raise InvalidToken("the token has expired", hint="Get a new token from the authorization server.") from None
        except jwt.ImmatureSignatureError:
            raise InvalidToken("the token is not valid yet (nbf/iat in the future)") from None
        except jwt.InvalidAudienceError:
            raise InvalidToken(
                "the token was issued for another resource",
                hint=f"Ask for a token with resource={self.resource} (RFC 8707).",
            ) from None
        except jwt.InvalidIssuerError:
            raise InvalidToken("the token comes from another issuer", hint=f"Use a token from {self.issuer}.") from None
        except jwt.InvalidSignatureError:
            raise InvalidToken("the token's signature does not verify") from None
        except (jwt.PyJWTError, ValueError, TypeError) as exc:
            raise InvalidToken(f"the token was refused ({type(exc).__name__})") from None

    # -- keys ---------------------------------------------------------------------------
    async def _key(self, kid: str | None) -> tuple[Any, str | None]:
        if not self._keys:
            await self._refresh(force=True)
        key = self._keys.get(kid) if kid is not None else (next(iter(self._keys.values())) if len(self._keys) == 1 else None)
        if key is None and kid is not None and await self._refresh(force=False):
            key = self._keys.get(kid)
        if key is None:
            raise InvalidToken("the token is signed with a key the issuer does not publish")
        return key

    async def _refresh(self, *, force: bool) -> bool:
        """Fetch the JWKS again (``force``: now, unless another task just did; else only
        when the last fetch is older than ``jwks_refresh``). Whether a fetch was made."""
        async with self._lock:
            now = time.monotonic()
            if now - self._tried_at < (0.0 if force and not self._keys else self.config.jwks_refresh):
                if not self._keys and self.last_error:
                    raise IssuerUnavailable(f"the issuer cannot be reached ({self.last_error})")
                return False
            self._tried_at = now
            try:
                jwks = await self._get_json(await self._jwks_url())
                found = self._usable_keys(jwks)
            except IssuerUnavailable:
                raise
            except Exception as exc:
                self.last_error = type(exc).__name__
                log.warning("the issuer's JWKS could not be read: %s", type(exc).__name__)
                if not self._keys:
                    raise IssuerUnavailable("the issuer's signing keys could not be read") from None
                return False
            self._keys = found
            self._fetched_at = now
            self.last_error = None
            return True

    def _usable_keys(self, jwks: dict[str, Any]) -> dict[str | None, tuple[Any, str | None]]:
        """kid -> (key, the algorithm the JWKS declares for it): signing keys this
        verifier can use; others (encryption keys, unknown types) are skipped."""
        entries = jwks.get("keys")
        if not isinstance(entries, list):
            raise ValueError("the JWKS has no keys list")
        out: dict[str | None, tuple[Any, str | None]] = {}
        for entry in entries:
            if not isinstance(entry, dict) or entry.get("use", "sig") != "sig":
                continue
            try:
                key = self._jwt.PyJWK(entry)
            except Exception:  # a key type or curve pyjwt cannot use
                continue
            alg = entry.get("alg")
            out[entry.get("kid") if isinstance(entry.get("kid"), str) else None] = (key, alg if isinstance(alg, str) else None)
        if not out:
            raise ValueError("the JWKS has no usable signing key")
        return out

    async def _jwks_url(self) -> str:
        if self.config.jwks_url:
            return self.config.jwks_url
        meta = await self.metadata()
        url = meta.get("jwks_uri")
        if not isinstance(url, str):
            raise IssuerUnavailable("the issuer's metadata names no jwks_uri")
        return url

    async def metadata(self) -> dict[str, Any]:
        """The issuer's metadata (OpenID discovery, else RFC 8414), fetched once."""
        if self._metadata is None:
            base = self.issuer.rstrip("/")
            last: Exception | None = None
            for path in ("/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"):
                try:
                    self._metadata = await self._get_json(base + path)
                    break
                except IssuerUnavailable as exc:
                    last = exc
            if self._metadata is None:
                raise last or IssuerUnavailable("the issuer publishes no metadata")
        return self._metadata

    async def _get_json(self, url: str) -> dict[str, Any]:
        import httpx  # on first use: importing it loads its CLI's rich and click, off the stdio path

        try:
            async with httpx.AsyncClient(timeout=self.timeout) as client:
                response = await client.get(url)
                response.raise_for_status()
                data = response.json()
        except (httpx.HTTPError, ValueError) as exc:
            self.last_error = type(exc).__name__
            raise IssuerUnavailable(f"the issuer cannot be reached ({type(exc).__name__})") from None
        if not isinstance(data, dict):
            raise IssuerUnavailable("the issuer answered something other than a JSON object")
        return data

    # -- opaque tokens ---------------------------------------------------------------
    async def _introspect(self, token: str) -> dict[str, Any]:
        url = self.config.introspection_url
        if url is None and self.config.client_id:
            url = (await self.metadata()).get("introspection_endpoint")
        if not url:
            raise InvalidToken("the token is not a JWT and this gateway does not introspect tokens")
        import httpx  # on first use, as in _get_json
        digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()
        now = time.time()
        cached = self._introspected.get(digest)
        if cached is not None and cached[0] > now:
            claims = cached[1]
        else:
            auth = (self.config.client_id or "", self.config.client_secret or "")
            try:
                async with httpx.AsyncClient(timeout=self.timeout) as client:
                    response = await client.post(url, data={"token": token, "token_type_hint": "access_token"}, auth=auth)
                    response.raise_for_status()
                    claims = response.json()
            except (httpx.HTTPError, ValueError) as exc:
                raise IssuerUnavailable(f"the introspection endpoint cannot be reached ({type(exc).__name__})") from None
            if not isinstance(claims, dict):
                raise IssuerUnavailable("the introspection endpoint answered something other than a JSON object")
            exp = claims.get("exp")
            until = min(now + 60, float(exp)) if isinstance(exp, int | float) else now + 60
            self._introspected[digest] = (until, claims)
            while len(self._introspected) > 4096:
                self._introspected.popitem(last=False)
        if claims.get("active") is not True:
            raise InvalidToken("the token is not active (expired, revoked or unknown)")
        if claims.get("iss") not in (None, self.issuer):
            raise InvalidToken("the token comes from another issuer")
        aud = claims.get("aud")
        audiences = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else None
        if audiences is not None and self.resource not in audiences:
            raise InvalidToken("the token was issued for another resource")
        return claims

    # -- readiness -------------------------------------------------------------------
    async def status(self) -> dict[str, Any]:
        """For ``/v1/ready``: whether the issuer's keys are at hand. Probes the issuer when
        it was not reached yet or the last attempt failed (at most every ``jwksRefresh`` s)."""
        if not self._keys or self.last_error is not None:
            with contextlib.suppress(ToolscoutError):
                await self._refresh(force=not self._keys)
        return {
            "issuer": self.issuer,
            "resource": self.resource,
            "reachable": self.last_error is None and bool(self._keys),
            "keys": len(self._keys),
            "last_error": self.last_error,
        }


def principal_of_scope(scope: dict[str, Any]) -> Principal | None:
    """The caller :class:`IdentityGuard` established for this request, if any (the one
    derivation: :func:`toolscout.access.principal.established`)."""
    return established(scope)


def metadata_path(resource: str) -> str:
    """Where RFC 9728 puts the metadata of ``resource``: the well-known path, then the
    resource's own path (``/mcp`` -> ``/.well-known/oauth-protected-resource/mcp``)."""
    path = urlsplit(resource).path.rstrip("/")
    return METADATA_PATH + path


class IdentityGuard:
    """Establish the caller of every HTTP request, or refuse it.

    A static ``token`` (``--token``) is one caller (known by the token's hash); a
    ``verifier`` checks OAuth access tokens; with both, either is accepted; with neither,
    the caller is known by its address only (for learning: one address, one voter). The
    protected-resource metadata is served without a token (clients read it to find out how
    to get one)."""

    def __init__(
        self,
        app: App,
        *,
        token: str | None = None,
        verifier: TokenVerifier | None = None,
        scopes: Sequence[str] = (),
    ) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode() if token else None
        self._static = token_principal(token) if token else None
        self.verifier = verifier
        self.scopes = list(scopes)
        self._metadata: bytes | None = None
        self._metadata_url = ""
        self._paths: frozenset[str] = frozenset()
        if verifier is not None:
            resource = verifier.resource
            parts = urlsplit(resource)
            path = metadata_path(resource)
            self._metadata_url = f"{parts.scheme}://{parts.netloc}{path}"
            self._paths = frozenset({METADATA_PATH, path})
            self._metadata = json.dumps(
                {
                    "resource": resource,
                    "authorization_servers": [verifier.issuer],
                    "scopes_supported": self.scopes,
                    "bearer_methods_supported": ["header"],
                    "resource_name": "toolscout gateway",
                }
            ).encode()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "websocket" and (self._expected is not None or self.verifier is not None):
            await send({"type": "websocket.close", "code": 1008})  # nothing is served over websockets
            return
        if scope["type"] != "http":  # the lifespan
            await self.app(scope, receive, send)
            return
        if self._metadata is not None and scope.get("path") in self._paths:
            await _send_json(send, 200, self._metadata, [(b"access-control-allow-origin", b"*")])
            return
        if self._expected is None and self.verifier is None:
            client = scope.get("client")
            # an application in front may have established the caller already: keep it
            scope.setdefault(PRINCIPAL_KEY, address_principal(client[0] if client else None))
            await self.app(scope, receive, send)
            return
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        if self._expected is not None and hmac.compare_digest(given, self._expected):
            scope.setdefault(PRINCIPAL_KEY, self._static)
            await self.app(scope, receive, send)
            return
        if self.verifier is None:  # the static token alone, refused as it always was
            body = json.dumps({"error": "unauthorized", "hint": "Send Authorization: Bearer <token>."}).encode()
            await _send_json(send, 401, body, [(b"www-authenticate", b"Bearer")])
            return
        scheme, _, token = given.decode("latin-1").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            await self._refuse(send, InvalidToken("this gateway needs a bearer token", hint="Send Authorization: Bearer <token>."), quiet=True)
            return
        try:
            principal = await self.verifier.verify(token.strip())
        except ToolscoutError as exc:
            log.info("refused a token: %s", exc.message)
            await self._refuse(send, exc)
            return
        scope[PRINCIPAL_KEY] = principal
        # The caller's own token travels only as the subject of an RFC 8693 exchange, for
        # upstreams in token-exchange mode (docs/credentials.md); it is never forwarded.
        scope[CREDENTIALS_KEY] = {SUBJECT_TOKEN: token.strip()}
        await self.app(scope, receive, send)

    async def _refuse(self, send: Any, exc: ToolscoutError, *, quiet: bool = False) -> None:
        """401 (no or bad token), 403 (too few scopes) or 503 (issuer unreachable), with the
        ``WWW-Authenticate`` challenge RFC 6750 and RFC 9728 ask for."""
        parts = ["Bearer"]
        params: list[str] = []
        if self._metadata_url:
            params.append(f'resource_metadata="{self._metadata_url}"')
        status = 401
        if isinstance(exc, InsufficientScope):
            status = 403
            params.insert(0, 'error="insufficient_scope"')
            params.append(f'scope="{exc.details.get("scope", " ".join(self.scopes))}"')
        elif isinstance(exc, IssuerUnavailable):
            status = 503
        elif not quiet:
            params.insert(0, 'error="invalid_token"')
            params.append(f'error_description="{_quoted(exc.message)}"')
        elif self.scopes:
            params.append(f'scope="{" ".join(self.scopes)}"')
        challenge = parts[0] + (" " + ", ".join(params) if params else "")
        body = json.dumps({"error": exc.code, "message": exc.message, "hint": exc.hint or ""}).encode()
        headers = [(b"www-authenticate", challenge.encode("latin-1", "replace"))] if status != 503 else []
        await _send_json(send, status, body, headers)


def _quoted(text: str) -> str:
    return "".join(c for c in text if c not in '"\\' and 0x20 <= ord(c) < 0x7F)


async def _send_json(send: Any, status: int, body: bytes, headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"application/json"), (b"cache-control", b"no-store"), *headers],
        }
    )
    await send({"type": "http.response.body", "body": body})
