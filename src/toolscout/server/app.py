"""The composition root of ``toolscout serve``: a :class:`ServeConfig` in, a running gateway out.

This is the one module that knows how the parts fit: which store holds the tools and the
tool-list caches, the :class:`~toolscout.sources.mcp.aggregator.Aggregator` that fills the
catalog from the config's sources, the :class:`~toolscout.gateway.Gateway` that searches and
calls, the Redis session store, and the MCP server (with the HTTP API on the same port).
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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..access.audit import AuditLog, JsonLines
from ..access.auth import TokenVerifier
from ..access.credentials import Vault, load_keys
from ..access.guard import relay_through
from ..catalog import Catalog
from ..gateway import Gateway
from ..scaleout.replica import SharedCatalog
from ..security.classifier import HttpClassifier
from ..security.results import ResultScreen
from ..sessions.redis import DEFAULT_TTL, RedisSessionStore
from ..sources.mcp.aggregator import Aggregator
from ..sources.mcp.cache import ToolListCache
from ..sources.mcp.per_user import CredentialBroker
from ..storage import SharedStore, Store, is_store_url, open_store
from .mcp import GatewayServer
from .serve_config import ServeConfig

__all__ = ["App", "ServeConfig", "build_aggregator", "build_app", "run_with"]


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
        return self.server.http_app(
            host=c.host, token=c.token, allow_origins=c.allow_origin, allow_hosts=c.allow_host, metrics=c.metrics
        )

    async def serve(self, asgi: Any = None) -> None:
        """Serve on the configured transport until stopped (``asgi``: an HTTP app already
        made by :meth:`asgi`, so its errors can be reported before anything starts)."""
        c = self.config
        if c.transport == "stdio":
            await run_with(self.aggregator, lambda: self.server.serve_stdio(max_message_bytes=c.max_message_bytes))
            return
        # The HTTP transport only: the stdio path never loads the HTTP server (tests/cli/test_startup.py).
        import uvicorn

        app = self.asgi() if asgi is None else asgi
        # log_config=None: uvicorn's records reach the process's handlers (the CLI prints one line each)
        http = uvicorn.Server(
            uvicorn.Config(app, host=c.bind, port=c.port, log_level="warning", lifespan="on", log_config=None)
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
        max_revealed=config.max_revealed,
        use_tool=config.use_tool,
        session_store=sessions,
        stubs=config.stubs,
        threshold=config.defer,
        auto_pin=config.auto_pin,
        context_window=config.context_window,
        code_mode=config.code_mode,
        access=auth.access_rules() if auth is not None else None,
        verifier=TokenVerifier(auth, config.resource) if auth is not None else None,
    )
    _audit(config, gateway, server, store)
    return App(config, aggregator, gateway, server, sessions)


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
