"""Upstream calls made with the caller's own credential: resolving it, and one connection per user.

An upstream whose ``credentials`` mode is ``per-user`` or ``token-exchange`` is never
called through the gateway's shared connection. For each call, :class:`CredentialBroker`
finds the caller's credential (``ctx.principal`` from :func:`toolscout.context.current`):

1. ``ctx.credentials[server]``, when the surface or library put one there (a token string
   or a mapping with ``token``/``env``);
2. ``token-exchange``: the caller's own token (``ctx.credentials[SUBJECT_TOKEN]``, set by
   the edge that validated it) traded at the upstream's token endpoint (RFC 8693), cached
   per caller until shortly before it expires; the caller's token itself never leaves;
3. ``per-user``: the caller's record in the :class:`~toolscout.access.credentials.Vault`,
   refreshed when it expires within a minute; none yet -> ``authorization_required`` with
   the consent link (OAuth configured) or the ``PUT /v1/credentials`` hint.

:class:`UserConnections` then gives the caller their own :class:`Upstream`, configured
with that credential (the ``tokenHeader`` of an HTTP server, ``tokenEnv`` plus the
credential's ``env`` for a stdio server, which so runs as one process per user). The pool
is bounded per server (``maxUserConnections``); a connection idle for
``userIdleTimeout`` seconds is closed (a stdio process stopped). An upstream answering
401/403 with a user's credential is a revoked one: the broker refreshes it once if it can,
else forgets it and answers ``authorization_required`` asking to connect again.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...access.credentials import SUBJECT_TOKEN, Credential, OAuthClient, TokenEndpointError, Vault
from ...context import CallContext
from ...errors import AuthorizationRequired, UpstreamUnavailable
from .config import ServerConfig
from .upstream import Upstream
from .user_env import allowed_user_env

if TYPE_CHECKING:
    from ...storage import BlobStore

__all__ = ["CredentialBroker", "UserConnections"]

log = logging.getLogger("toolscout.mcp")

REFRESH_AHEAD = 60.0
"""A stored grant expiring within this many seconds is refreshed before the call."""


def user_config(cfg: ServerConfig, credential: Credential) -> ServerConfig:
    """``cfg`` as one user's connection: their token in the credential header (HTTP) or in
    ``tokenEnv`` plus their ``env`` (stdio). The gateway's own header of that name is
    replaced, never sent alongside. A stdio process gets only the user's variables the
    operator allows (``userEnv``), never one that steers it, and never over ``env``."""
    if cfg.command:
        env = {**allowed_user_env(cfg.user_env, cfg.env, credential.env), **cfg.env}
        if cfg.token_env and credential.token:
            env[cfg.token_env] = credential.token
        return cfg.model_copy(update={"env": env})
    headers = {k: v for k, v in cfg.headers.items() if k.lower() != cfg.token_header.lower()}
    if credential.token:
        bearer = cfg.token_header.lower() == "authorization" and " " not in credential.token
        headers[cfg.token_header] = f"Bearer {credential.token}" if bearer else credential.token
    return cfg.model_copy(update={"headers": headers})


@dataclass(eq=False)
class _Live:
    upstream: Upstream
    fingerprint: tuple[Any, ...]
    used: float
    busy: int = 0
    retired: bool = False


class UserConnections:
    """One server's connections, one per user, bounded, idle ones closed."""

    def __init__(self, name: str, config: ServerConfig) -> None:
        self.name = name
        self.config = config
        self._live: dict[str, _Live] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self._reaper: asyncio.Task[None] | None = None

    def __len__(self) -> int:
        return len(self._live)

    def acquire(self, principal: str, credential: Credential) -> _Live:
        """The caller's connection (made now if they have none, or theirs was made with an
        older credential); mark it busy until :meth:`release`."""
        now = time.monotonic()
        self.sweep(now)
        fingerprint = credential.fingerprint()
        live = self._live.get(principal)
        if live is not None and live.fingerprint != fingerprint:
            self._retire(principal)
            live = None
        if live is None:
            if len(self._live) >= self.config.max_user_connections and not self._evict_one():
                raise UpstreamUnavailable(
                    f"server '{self.name}' has {len(self._live)} users' connections open, all busy",
                    hint="Retry in a moment; the operator may raise maxUserConnections for this server.",
                    server=self.name,
                )
            live = _Live(Upstream(self.name, user_config(self.config, credential)), fingerprint, now)
            self._live[principal] = live
        live.busy += 1
        live.used = now
        if self._reaper is None or self._reaper.done():
            self._reaper = asyncio.ensure_future(self._reap())
        return live

    async def _reap(self) -> None:
        """Stop idle connections even when no call comes to notice them; ends with the pool."""
        period = max(min(self.config.user_idle_timeout / 2, 30.0), 0.05)
        while self._live:
            await asyncio.sleep(period)
            self.sweep()

    def release(self, live: _Live) -> None:
        live.busy -= 1
        live.used = time.monotonic()
        if live.retired and live.busy == 0:
            self._close(live)

    def drop(self, principal: str) -> None:
        """Close the caller's connection (their credential was refused or removed)."""
        self._retire(principal)

    def sweep(self, now: float | None = None) -> int:
        """Close connections idle for ``userIdleTimeout``; returns how many."""
        limit = (now or time.monotonic()) - self.config.user_idle_timeout
        idle = [p for p, live in self._live.items() if live.busy == 0 and live.used <= limit]
        for principal in idle:
            self._retire(principal)
        return len(idle)

    def _evict_one(self) -> bool:
        idle = [(live.used, p) for p, live in self._live.items() if live.busy == 0]
        if not idle:
            return False
        self._retire(min(idle)[1])
        return True

    def _retire(self, principal: str) -> None:
        live = self._live.pop(principal, None)
        if live is None:
            return
        live.retired = True
        if live.busy == 0:
            self._close(live)

    def _close(self, live: _Live) -> None:
        task = asyncio.ensure_future(live.upstream.aclose())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def aclose(self) -> None:
        if self._reaper is not None:
            self._reaper.cancel()
        for principal in list(self._live):
            live = self._live.pop(principal)
            live.retired = True
            self._close(live)
        if self._closing:
            await asyncio.gather(*self._closing, return_exceptions=True)


class CredentialBroker:
    """Finds each caller's credential for the upstreams that need one, and calls with it."""

    def __init__(
        self,
        servers: Mapping[str, ServerConfig],
        *,
        vault: Vault | None,
        store: BlobStore | None = None,
        redirect_uri: str | None = None,
    ) -> None:
        self.vault = vault
        self.store = store if store is not None else (vault.store if vault is not None else None)
        self.servers = {n: c for n, c in servers.items() if c.credentials != "gateway"}
        self.clients: dict[str, OAuthClient] = {}
        for name, cfg in self.servers.items():
            if cfg.oauth is not None:
                o = cfg.oauth
                self.clients[name] = OAuthClient(
                    server=name, token_url=o.token_url, client_id=o.client_id, client_secret=o.client_secret,
                    authorization_url=o.authorization_url, scopes=tuple(o.scopes), redirect_uri=redirect_uri,
                    resource=o.resource,
                )
        self.pools = {name: UserConnections(name, cfg) for name, cfg in self.servers.items()}
        self._exchanged: dict[tuple[str, str, str], Credential] = {}
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}

    def needs(self, server: str) -> bool:
        return server in self.servers

    # -- the call ------------------------------------------------------------------------
    async def call(
        self, server: str, tool: str, arguments: dict[str, Any], ctx: CallContext
    ) -> dict[str, Any]:
        """Run ``tool`` on ``server`` with the caller's credential; one retry after a
        refresh when the upstream refuses a stored grant that can be refreshed."""
        principal = self._principal(server, ctx)
        credential = await self.credential(server, ctx)
        for attempt in (1, 2):
            pool = self.pools[server]
            live = pool.acquire(principal, credential)
            try:
                return await live.upstream.call(tool, arguments, progress=ctx.progress)
            except UpstreamUnavailable as exc:
                pool.drop(principal)  # a failed user connection never retries in the background
                if exc.details.get("http_status") not in (401, 403):
                    raise
                credential = await self._refused(server, principal, credential, retry=attempt == 1)
            finally:
                pool.release(live)
        raise AssertionError("unreachable")  # pragma: no cover

    async def request(
        self, server: str, method: str, params: dict[str, Any] | None, ctx: CallContext
    ) -> dict[str, Any]:
        """Any other request (a resource read, a prompt, a completion) on ``server`` with the
        caller's own credential, as :meth:`call` runs a tool: a per-user server never answers
        one caller over the gateway's connection or another caller's."""
        principal = self._principal(server, ctx)
        credential = await self.credential(server, ctx)
        for attempt in (1, 2):
            pool = self.pools[server]
            live = pool.acquire(principal, credential)
            try:
                return await live.upstream.request(method, params)
            except UpstreamUnavailable as exc:
                pool.drop(principal)
                if exc.details.get("http_status") not in (401, 403):
                    raise
                credential = await self._refused(server, principal, credential, retry=attempt == 1)
            finally:
                pool.release(live)
        raise AssertionError("unreachable")  # pragma: no cover

    def _principal(self, server: str, ctx: CallContext) -> str:
        if ctx.principal.anonymous and server not in ctx.credentials:
            raise AuthorizationRequired(
                f"server '{server}' acts with each caller's own account, and this caller is anonymous",
                hint="Sign in to the gateway (a bearer token from its issuer), then connect your account.",
                server=server,
            )
        return ctx.principal.id

    async def credential(self, server: str, ctx: CallContext) -> Credential:
        """The credential this call carries (see the module's docstring for the order)."""
        given = ctx.credentials.get(server)
        if given is not None:
            return _given(given)
        cfg = self.servers[server]
        principal = self._principal(server, ctx)
        if cfg.credentials == "token-exchange":
            return await self._exchange(server, principal, ctx)
        if self.vault is None:
            raise AuthorizationRequired(
                f"server '{server}' needs your own credential and this gateway keeps none (no vault key)",
                hint="The operator sets TOOLSCOUT_VAULT_KEYS or --vault-keys (docs/credentials.md).",
                server=server,
            )
        try:  # a cached record costs no thread hop; a read goes off the loop
            known, stored = self.vault.cached(principal, server)
            if not known:
                stored = await asyncio.to_thread(self.vault.get, principal, server)
        except AuthorizationRequired as exc:  # unreadable: connecting again replaces it
            raise self._with_link(exc, server, principal) from None
        if stored is None:
            raise self.required(server, principal, f"server '{server}' needs your own account, and you have not connected one")
        if stored.expires_within(REFRESH_AHEAD) and server in self.clients:
            stored = await self._refresh(server, principal, stored)
        return stored

    async def _refresh(self, server: str, principal: str, stored: Credential) -> Credential:
        lock = self._locks.setdefault((principal, server), asyncio.Lock())
        async with lock:  # one refresh per caller and server, however many calls wait
            assert self.vault is not None
            current = await asyncio.to_thread(self.vault.get, principal, server, fresh=True)
            if current is not None and current.fingerprint() != stored.fingerprint() and not current.expires_within(REFRESH_AHEAD):
                return current  # another call (or replica) refreshed it meanwhile
            try:
                fresh = await self.clients[server].refresh(current or stored)
            except TokenEndpointError:
                await asyncio.to_thread(self.vault.delete, principal, server)
                raise self.required(server, principal, f"your connection to server '{server}' expired or was revoked",
                                    reason="revoked") from None
            await asyncio.to_thread(self.vault.put, principal, server, fresh)
            return fresh

    async def _refused(self, server: str, principal: str, credential: Credential, *, retry: bool) -> Credential:
        """The upstream answered 401/403 with this caller's credential."""
        cfg = self.servers[server]
        if cfg.credentials == "token-exchange":
            self._exchanged = {k: v for k, v in self._exchanged.items() if k[:2] != (principal, server)}
            raise AuthorizationRequired(
                f"server '{server}' refused the token exchanged for you", server=server, reason="refused",
                hint="Sign in to the gateway again; if it persists, the operator checks the exchange's audience.",
            )
        if credential.kind != "given" and self.vault is not None:
            if retry and credential.refresh_token and server in self.clients:
                log.info("upstream %s: credential of %s refused; refreshing once", server, principal)
                return await self._refresh(server, principal, credential.__class__(
                    token=credential.token, env=credential.env, refresh_token=credential.refresh_token,
                    expires_at=0.0, scope=credential.scope, kind=credential.kind, obtained_at=credential.obtained_at))
            await asyncio.to_thread(self.vault.delete, principal, server)
        raise self.required(server, principal, f"server '{server}' refused your credential (revoked or expired)",
                            reason="revoked")

    async def _exchange(self, server: str, principal: str, ctx: CallContext) -> Credential:
        subject = ctx.credentials.get(SUBJECT_TOKEN)
        if not isinstance(subject, str) or not subject:
            raise AuthorizationRequired(
                f"server '{server}' gets a token exchanged for the caller's own, and this call carries none",
                hint="Call through the gateway's HTTP endpoint with a bearer token from its issuer.",
                server=server,
            )
        key = (principal, server, hashlib.sha256(subject.encode()).hexdigest())
        cached = self._exchanged.get(key)
        if cached is not None and not cached.expires_within(30):
            return cached
        try:
            fresh = await self.clients[server].exchange(subject, audience=self.servers[server].oauth.audience)  # type: ignore[union-attr]
        except TokenEndpointError as exc:
            raise AuthorizationRequired(exc.message, hint="Sign in to the gateway again.", server=server,
                                        reason="exchange_refused") from None
        if len(self._exchanged) > 10_000:
            self._exchanged.clear()
        self._exchanged[key] = fresh
        return fresh

    # -- consent ---------------------------------------------------------------------------
    def consent_url(self, server: str, principal: str) -> str | None:
        """A new consent link for ``principal`` (``None``: this server has no OAuth flow)."""
        client = self.clients.get(server)
        if client is None or client.authorization_url is None or client.redirect_uri is None or self.store is None:
            return None
        return client.begin(self.store, principal)

    def required(self, server: str, principal: str, message: str, **details: Any) -> AuthorizationRequired:
        """``authorization_required`` for ``principal``, with a consent link when there is a flow."""
        return self._with_link(AuthorizationRequired(message, server=server, **details), server, principal)

    def _with_link(self, exc: AuthorizationRequired, server: str, principal: str) -> AuthorizationRequired:
        try:
            url = self.consent_url(server, principal)
        except Exception as problem:  # the store is down: the error still says what to do
            log.warning("upstream %s: cannot start a consent flow: %s", server, type(problem).__name__)
            url = None
        if url is not None:
            exc.details["authorization_url"] = url
            exc.hint = f"Show the user this link to connect their account, then retry the call: {url}"
        else:
            exc.hint = f"Register your token or API key with PUT /v1/credentials/{server}, then retry the call."
        exc.details.setdefault("server", server)
        return exc

    async def complete(self, state: str, code: str) -> tuple[str, str]:
        """The OAuth callback: ``(principal, server)`` whose new credential is now stored."""
        if self.store is None or self.vault is None:
            raise AuthorizationRequired("this gateway keeps no per-user credentials")
        record = await asyncio.to_thread(OAuthClient.claim, self.store, state)
        server, principal = str(record.get("server")), str(record.get("principal"))
        client = self.clients.get(server)
        if client is None:
            raise AuthorizationRequired(f"server '{server}' no longer uses OAuth", server=server)
        credential = await client.finish(record, code)
        await self.store_credential(principal, server, credential)
        return principal, server

    async def store_credential(self, principal: str, server: str, credential: Credential) -> None:
        """Keep ``credential`` for ``principal`` (replacing theirs) and drop their old connection."""
        assert self.vault is not None
        await asyncio.to_thread(self.vault.put, principal, server, credential)
        self.pools[server].drop(principal)

    async def forget(self, principal: str, server: str) -> bool:
        assert self.vault is not None
        self.pools[server].drop(principal)
        return await asyncio.to_thread(self.vault.delete, principal, server)

    async def aclose(self) -> None:
        await asyncio.gather(*(p.aclose() for p in self.pools.values()), return_exceptions=True)


def _given(value: Any) -> Credential:
    """A credential a surface or library put in ``ctx.credentials`` (never stored)."""
    if isinstance(value, Credential):
        return value
    if isinstance(value, str):
        return Credential(token=value, kind="given")
    if isinstance(value, Mapping):
        token = value.get("token")
        env = value.get("env") or {}
        return Credential(token=token if isinstance(token, str) else None,
                          env={str(k): str(v) for k, v in dict(env).items()}, kind="given")
    raise AuthorizationRequired(f"a credential in the call context is a {type(value).__name__}, not a token")
