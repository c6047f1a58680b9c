"""The composition root of ``toolscout serve``: a :class:`ServeConfig` in, a running gateway out.

This is the one module that knows how the parts fit: which store holds the tools and the
tool-list caches, the :class:`~toolscout.sources.mcp.aggregator.Aggregator` that fills the
catalog from the config's sources, the :class:`~toolscout.gateway.Gateway` that searches and
calls, the Redis session store, the MCP server, and the HTTP stack around it (:func:`http_app`:
MCP, the HTTP API, the console, credentials, metrics, behind the identity and host guards).
The protocol modules (:mod:`.mcp`, :mod:`.http_api`) take what they serve as arguments and
build nothing themselves. :func:`run_with` is the run loop every transport shares.

    config = ServeConfig.load("servers.json", {"transport": "http"})
    app = build_app(config)
    asyncio.run(app.serve())
"""

from __future__ import annotations

import asyncio
import gc
import signal
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import asdict, dataclass
from typing import Any

from ..access.audit import AuditLog, JsonLines
from ..access.auth import IdentityGuard, TokenVerifier
from ..access.credentials import Vault, load_keys
from ..access.guard import relay_through
from ..accounting import telemetry
from ..catalog import Catalog
from ..gateway import Gateway
from ..scaleout.replica import SharedCatalog
from ..security.classifier import HttpClassifier
from ..security.results import ResultScreen
from ..sessions.redis import DEFAULT_TTL, RedisSessionStore
from ..sources.mcp.aggregator import Aggregator
from ..sources.mcp.cache import ToolListCache
from ..sources.mcp.per_user import CredentialBroker
from ..sources.open import open_catalog
from ..storage import SharedStore, Store, is_store_url, open_store
from .coalesced_http import coalesced_h11
from .guard import HostOriginGuard
from .lean_posts import lean_posts
from .mcp import GatewayServer
from .mcp_sessions import SessionOptions
from .metrics import Metrics
from .plain_answers import PlainAnswers
from .recent import RecentCalls
from .serve_config import ServeConfig
from .session_owners import SessionOwners
from .shared_sessions import accept_shared_sessions
from .stdio import serve_stdio
from .tracing import TraceContextMiddleware, trace_mcp

__all__ = ["App", "ServeConfig", "build_aggregator", "build_app", "http_app", "run_with", "session_options"]


@dataclass(eq=False)
class App:
    """A gateway ready to serve: what :func:`build_app` made from one :class:`ServeConfig`."""

    config: ServeConfig
    aggregator: Aggregator
    gateway: Gateway
    server: GatewayServer
    session_store: RedisSessionStore | None = None

    def asgi(self) -> Any:
        """The HTTP app (MCP at ``/mcp``, the HTTP API at ``/v1``, the console, ``/metrics``)
        behind the configured guards. Raises ``ValueError`` for a malformed ``allow_origin``
        or ``allow_host``, :class:`~toolscout.errors.MissingExtra` for ``metrics`` without
        its extra."""
        c = self.config
        app = http_app(
            self.server, host=c.host, token=c.token, allow_origins=c.allow_origin, allow_hosts=c.allow_host, metrics=c.metrics
        )
        trace_mcp(self.server)  # a client's trace context, from _meta or the headers (docs/telemetry.md)
        telemetry.enable_from_env()  # TOOLSCOUT_OTEL=1: stages as OpenTelemetry spans
        return app

    async def serve(self, asgi: Any = None) -> None:
        """Serve on the configured transport until stopped (``asgi``: an HTTP app already
        made by :meth:`asgi`, so its errors can be reported before anything starts)."""
        c = self.config
        if c.transport == "stdio":
            trace_mcp(self.server)
            telemetry.enable_from_env()
            await run_with(self.aggregator, lambda: serve_stdio(self.server.lowlevel, max_message_bytes=c.max_message_bytes))
            return
        # The HTTP transport only: the stdio path never loads the HTTP server (tests/cli/test_startup.py).
        import uvicorn

        app = self.asgi() if asgi is None else asgi
        # log_config=None: uvicorn's records reach the process's handlers (the CLI prints one line each)
        # http: a start and its body written in one turn leave in one send (.coalesced_http)
        http = uvicorn.Server(
            uvicorn.Config(
                app, host=c.bind, port=c.port, log_level="warning", lifespan="on", log_config=None, http=coalesced_h11()
            )
        )
        await run_with(self.aggregator, http.serve)


def build_app(config: ServeConfig) -> App:
    """Wire ``config`` into a ready-to-serve gateway: store, aggregator, gateway, session
    store, MCP server. Raises :class:`~toolscout.errors.ConfigError` (a bad source file,
    spec or module stops it before anything starts), ``MissingExtra`` for an extra a setting
    needs."""
    return _assemble(config, embeddings=config.embeddings)


def build_aggregator(config: ServeConfig) -> Aggregator:
    """The sources of ``config`` over its store, loaded (no upstream contacted yet): all
    ``toolscout servers`` needs, and the first step of :func:`build_app`."""
    if config.catalog is not None and config.config is None:  # `serve demo`: a catalog, no upstreams
        catalog, cache = open_catalog(config.catalog), None
    else:
        catalog, cache = _open_catalog_store(config.location, use_cache=not config.no_cache)
    aggregator = Aggregator(config.sources, catalog, cache=cache)
    if isinstance(catalog, SharedCatalog):  # tools another replica listed run on our upstreams
        catalog.handler_factory = aggregator.handler_for
        catalog.on_reconnected(aggregator.rewrite_unsaved)
    aggregator.sources.load(strict=True)  # a bad file, spec or module stops us before anything starts
    return aggregator


def _assemble(config: ServeConfig, *, embeddings: Any) -> App:
    aggregator = build_aggregator(config)
    store = aggregator.cache.store if aggregator.cache is not None else None
    _use_credentials(config, aggregator, store)
    gateway = Gateway(  # each upstream has its own timeout; vectors live beside the tool lists
        aggregator.catalog,
        call_timeout=None,
        embeddings=embeddings,
        vector_store=store,
        query_encoder=config.query_encoder,
        approve_kinds=config.approve_kinds,
        learn=False if config.no_learn else "auto",
        usage_store=store,
        meta_dialect=config.meta_dialect,
        result_cache=config.result_cache or None,
        list_names_below=config.list_names_below,
        trust_hints=config.trust_hints,
    )
    if isinstance(aggregator.catalog, SharedCatalog):  # the listener rebuilds the index: the loop never waits
        gateway.index.wait_for_rebuild = False
    if config.sources.screen_results:  # tool results pass the poisoning screen under their server's policy
        guard = config.sources.poisoning_classifier
        gateway.screen_results = ResultScreen(
            aggregator.poisoning_mode, classifier=HttpClassifier(guard) if guard else None
        )
    for name, upstream in aggregator.upstreams.items():  # an upstream's requests to the caller: through the guard
        upstream.relay_guard = relay_through(gateway.guard, name)
    sessions = None
    if config.sessions:
        sessions = RedisSessionStore(config.sessions, gateway, ttl=config.session_ttl or DEFAULT_TTL)
    auth = config.auth
    server = GatewayServer(
        gateway,
        aggregator,
        session_store=sessions,
        access=auth.access_rules() if auth is not None else None,
        verifier=TokenVerifier(auth, config.resource) if auth is not None else None,
        **asdict(session_options(config)),
    )
    _audit(config, gateway, server, store)
    return App(config, aggregator, gateway, server, sessions)


def session_options(config: ServeConfig) -> SessionOptions:
    """How the server's sessions behave, from the ``serve`` settings."""
    return SessionOptions(
        max_revealed=config.max_revealed,
        use_tool=config.use_tool,
        stubs=config.stubs,
        threshold=config.defer,
        auto_pin=config.auto_pin,
        context_window=config.context_window,
        code_mode=config.code_mode,
    )


def http_app(
    server: GatewayServer,
    *,
    host: str = "127.0.0.1",
    token: str | None = None,
    allow_origins: Iterable[str] = (),
    allow_hosts: Iterable[str] = (),
    metrics: bool = False,
    console: bool = True,
) -> Any:
    """The whole HTTP stack around ``server``: streamable HTTP MCP at ``/mcp`` with the HTTP
    API (``/v1``, see :mod:`.http_api`) on the same port; with ``token``, every request needs
    it. ``console`` adds the web console at ``/ui`` (:mod:`.console`: its data behind the
    token, its static files not).

    Host and Origin are checked by :class:`HostOriginGuard` for ``host`` (the bind
    address), which replaces the SDK's narrower check. ``metrics`` adds ``/metrics``
    (Prometheus; needs ``toolscout[metrics]``), counting MCP and HTTP requests alike.
    """
    from mcp.server.transport_security import TransportSecuritySettings

    from .http_api import create_app, mount  # fastapi: kept off the stdio start-up path

    gateway, aggregator, shared = server.gateway, server.aggregator, server.shared
    off = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    app = PlainAnswers(server.lowlevel.streamable_http_app(host=host, transport_security=off))
    lean_posts(server.lowlevel.session_manager)  # a stateful session's plain requests (.lean_posts)
    if shared is not None:  # any replica serves any session: no affinity needed
        accept_shared_sessions(server.lowlevel.session_manager, shared)
    app = SessionOwners(app, store=shared)  # a session id answers only its opener
    counters = None
    if metrics:
        counters = Metrics(aggregator=aggregator, catalog=gateway.catalog, find_cache=gateway.result_cache)
        counters.watch_mcp(server)
        if aggregator is not None:
            counters.watch_cache(aggregator)
    recent = None
    if console:
        recent = RecentCalls()
        recent.watch_mcp(server)
    api = create_app(
        gateway,
        aggregator=aggregator,
        capabilities=server.capabilities,
        metrics=counters,
        cold_start_wait=server.cold_start_wait,
        recent=recent,
        session_store=shared,
        auth=server.verifier,
        access=server.access,
        audit_log=server.audit_log,
    )
    app = mount(api, app)
    if console:
        from .console import CONSOLE_API, console_api, with_console  # fastapi, as above

        app = mount(console_api(gateway, aggregator=aggregator, recent=recent, access=server.access), app, (CONSOLE_API,))
    broker = getattr(aggregator, "credentials", None)
    if broker is not None:  # each caller's upstream accounts; fastapi, as above
        from .credentials_api import CALLBACK_PATH, CREDENTIALS_PATH, callback_app, credentials_app

        app = mount(credentials_app(broker), app, (CREDENTIALS_PATH,))
    scopes = server.verifier.config.required_scopes if server.verifier is not None else ()
    app = IdentityGuard(app, token=token, verifier=server.verifier, scopes=scopes)
    if broker is not None:  # a browser coming back from consent carries no bearer token
        app = mount(callback_app(broker), app, (CALLBACK_PATH,))
    if console:
        app = with_console(app)
    app = TraceContextMiddleware(app)  # the client's trace context, for requests the host guard lets in
    return HostOriginGuard(app, bind=host, allow_origins=allow_origins, allow_hosts=allow_hosts)


def _use_credentials(config: ServeConfig, aggregator: Aggregator, store: Store | None) -> None:
    """Per-user upstream credentials (docs/credentials.md), only when some server asks for
    them: a vault in the gateway's store, keys from ``vaultKeys`` or $TOOLSCOUT_VAULT_KEYS."""
    modes = {cfg.credentials for cfg in aggregator.config.enabled().values()}
    if modes <= {"gateway"}:
        return
    vault = None
    if "per-user" in modes:
        if store is None:
            store = open_store(config.location)
        vault = Vault(store, load_keys(config.vault_keys))
    aggregator.use_credentials(
        CredentialBroker(aggregator.config.enabled(), vault=vault, store=store, redirect_uri=config.callback_url)
    )


def _audit(config: ServeConfig, gateway: Gateway, server: GatewayServer, store: Any) -> None:
    """Audit every call (``--audit``, on with ``--auth``) into the store the tool lists use,
    and/or as JSON lines on stdout (``--audit-stdout``; HTTP only: on stdio, stdout is the
    protocol)."""
    gateway.audit_arguments = config.audit_arguments
    if (config.audit or config.auth is not None) and store is not None:
        server.audit_log = AuditLog(store)
        gateway.recorders.append(server.audit_log)
    if config.audit_stdout and config.transport == "http":
        gateway.recorders.append(JsonLines())


def _open_catalog_store(url: str, *, use_cache: bool) -> tuple[Catalog, ToolListCache | None]:
    """The catalog and the tool-list cache for ``url``. A store engine that replicas share
    (PostgreSQL) holds both: one catalog for every replica. Any other store holds only the
    cache; a file is not even opened when the cache is off."""
    if not is_store_url(url):
        return Catalog(), ToolListCache.open(url) if use_cache else None
    store = open_store(url)
    if isinstance(store, SharedStore):
        return SharedCatalog(store, kind="mcp"), ToolListCache(store) if use_cache else None
    return Catalog(), ToolListCache(store) if use_cache else None


async def run_with(aggregator: Aggregator | None, serve: Callable[[], Awaitable[None]]) -> None:
    """Load cached tool lists, fetch the rest in the background, serve, then close upstreams.
    ``SIGHUP`` reloads the config's declaration files and OpenAPI specs."""
    background: asyncio.Task[None] | None = None
    replicated = aggregator.catalog if aggregator is not None else None
    if isinstance(replicated, SharedCatalog):  # other replicas' changes apply on this loop
        replicated.bind_loop(asyncio.get_running_loop())
    hangup = False
    if aggregator is not None:
        aggregator.load_cached()
        background = asyncio.ensure_future(aggregator.start(lazy=True))
        hangup = _on_sighup(aggregator.sources.request_reload)
    # Everything loaded so far (modules, the catalog: ~1M objects at 10k tools) lives as long
    # as the server. Frozen, the cyclic GC stops walking it: a full collection went from about
    # 200 ms to a few, and a catalog change no longer sets off several of them at once.
    gc.collect()
    gc.freeze()
    try:
        await serve()
    finally:
        if hangup:
            asyncio.get_running_loop().remove_signal_handler(signal.SIGHUP)
        if background is not None:
            background.cancel()
        if aggregator is not None:
            await aggregator.aclose()
        if isinstance(replicated, SharedCatalog):
            replicated.close()


def _on_sighup(callback: Callable[[], None]) -> bool:
    """Run ``callback`` on SIGHUP (the usual "reload your files" signal); ``False`` where a
    handler cannot be set (Windows, a thread other than the main one)."""
    if not hasattr(signal, "SIGHUP"):
        return False
    try:
        asyncio.get_running_loop().add_signal_handler(signal.SIGHUP, callback)
    except (NotImplementedError, RuntimeError, ValueError):
        return False
    return True
