"""serve, servers: run the MCP gateway over an ``mcpServers`` config, or inspect its upstreams."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import logging
import socket
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..access.audit import DECISIONS, AuditLog, parse_since
from ..errors import ToolscoutError
from ..server.stdio import DEFAULT_MAX_MESSAGE_BYTES
from ..storage import open_store
from . import _logs, app
from ._console import err
from ._exits import LAST_FAILURE, USAGE, choice, fail, fail_with, kinds_counted, warn
from ._stdio_refusal import refuse_over_stdio
from ._tables import Column, CsvOpt, Grid, NlOpt, emit
from .catalog_commands import QueryEncoderOpt

ConfigOpt = Annotated[Path, typer.Option("--config", "-c", help="JSON file in the mcpServers shape.")]
CacheOpt = Annotated[
    str | None, typer.Option("--cache", help="Tool-list cache file (default: ~/.cache/toolscout/mcp-<config>-<path hash>.db).")
]
if TYPE_CHECKING:
    from ..server.app import App
    from ..server.serve_config import ServeConfig
    from ..sources.mcp.aggregator import Aggregator

GIVEN = frozenset({"COMMANDLINE", "ENVIRONMENT"})
"""Where a flag's value must come from to override the config file (not a default); by
name, as typer may bring its own copy of click's ``ParameterSource``."""


def settings_of(ctx: typer.Context, *, only: tuple[str, ...] | None = None, rules: bool = True) -> ServeConfig:
    """The config file's serve settings under the flags the user gave (a flag's environment
    variable counts as given), ``only`` those named if given; a problem exits with status 2."""
    from ..server.serve_config import ServeConfig  # serve's own stack: config models, ~65 ms

    given = {
        name: value
        for name, value in ctx.params.items()
        if getattr(ctx.get_parameter_source(name), "name", None) in GIVEN and (only is None or name in only)
    }
    path, catalog = ctx.params.get("config"), ctx.params.get("catalog")
    try:
        if path is None and catalog:  # `serve demo`: the catalog alone, no config file
            return ServeConfig.merge({}, given, source=catalog, rules=rules)
        if path is None:
            raise fail(
                "usage_error", "give a catalog to serve (serve demo, serve tools.yaml) or --config servers.json",
                "toolscout serve demo", status=USAGE,
            )
        if catalog:
            raise fail("usage_error", f"give either CATALOG ({catalog}) or --config, not both", status=USAGE)
        return ServeConfig.load(path, given, rules=rules)
    except ToolscoutError as exc:
        raise fail_with(exc) from None


@app.command()
def serve(
    ctx: typer.Context,
    catalog: Annotated[
        str | None,
        typer.Argument(
            metavar="[CATALOG]",
            help="Serve this catalog without a config file: a declaration file, store, data directory or 'demo'.",
        ),
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="JSON file in the mcpServers shape (or give a CATALOG).")
    ] = None,
    transport: Annotated[str, typer.Option(callback=choice(("stdio", "http")), help="stdio or http.")] = "stdio",
    host: Annotated[str, typer.Option(help="HTTP bind address; non-loopback needs --token.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="HTTP port (1-65535).")] = 8765,
    token: Annotated[
        str | None, typer.Option(help="Bearer token HTTP clients must send.", envvar="TOOLSCOUT_TOKEN")
    ] = None,
    cache: CacheOpt = None,
    no_cache: Annotated[bool, typer.Option("--no-cache", help="Do not read or write the tool-list cache.")] = False,
    verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log upstream events to stderr.")] = False,
    embed: Annotated[
        bool, typer.Option("--embed", help="Hybrid search with embeddings (toolscout[embed]); vectors cached.")
    ] = False,
    model: Annotated[
        str,
        typer.Option(
            "--model",
            callback=choice(("default", "multilingual", "multilingual-e5")),
            help="Embedding model: default (English), multilingual (requests in 16 languages) or "
            "multilingual-e5 (~100 languages, slower); both toolscout[multilingual], imply --embed.",
        ),
    ] = "default",
    query_encoder: QueryEncoderOpt = "auto",
    allow_origin: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-origin",
            help="HTTP: a browser Origin to accept (repeatable), e.g. https://app.example.com or http://host:*.",
        ),
    ] = None,
    allow_host: Annotated[
        list[str] | None,
        typer.Option("--allow-host", help="HTTP: a Host header name[:port] to accept besides loopback (repeatable)."),
    ] = None,
    max_message_bytes: Annotated[
        int,
        typer.Option(min=1, help="stdio: largest message (one line) in bytes; longer ones get an error."),
    ] = DEFAULT_MAX_MESSAGE_BYTES,
    use_tool: Annotated[
        bool,
        typer.Option("--use-tool", help="Also offer use_tool (RFC 0001): find and run in one step."),
    ] = False,
    store: Annotated[
        str | None,
        typer.Option(
            "--store",
            help="Where tools and tool-list caches live: postgresql://user@host:port/db (one catalog for every "
            "replica, toolscout[postgres]) or an SQLite file (default: the --cache file).",
            envvar="TOOLSCOUT_STORE",
        ),
    ] = None,
    sessions: Annotated[
        str | None,
        typer.Option(
            "--sessions",
            help="HTTP: keep stateful sessions in Redis (redis://host:6379/0, toolscout[redis]) so any replica serves them.",
            envvar="TOOLSCOUT_SESSIONS",
        ),
    ] = None,
    session_ttl: Annotated[
        float, typer.Option("--session-ttl", min=1, help="Seconds an unused session is kept in Redis.")
    ] = 86400.0,
    metrics: Annotated[
        bool,
        typer.Option("--metrics", help="HTTP: serve Prometheus metrics at /metrics (toolscout[metrics])."),
    ] = False,
    approve_kinds: Annotated[
        str,
        typer.Option(
            "--approve-kinds",
            help="Permission kinds whose calls need the user's approval (MCP elicitation; clients without it get "
            "approval_required): comma-separated read, write, execute, network, dangerous, or none.",
        ),
    ] = "dangerous",
    stubs: Annotated[
        bool,
        typer.Option("--stubs", help="Stateful clients: list tools not yet found as name + one line (no schema)."),
    ] = False,
    no_learn: Annotated[
        bool,
        typer.Option("--no-learn", help="Do not record which found tools sessions call, nor rank with it."),
    ] = False,
    max_revealed: Annotated[
        int,
        typer.Option(min=1, max=1000, help="Tools revealed per stateful session at most (oldest dropped first)."),
    ] = 64,
    vault_keys: Annotated[
        str | None,
        typer.Option(
            "--vault-keys",
            help="File of keys (one per line, first encrypts) for per-user upstream credentials; default: "
            "$TOOLSCOUT_VAULT_KEYS (comma-separated). See docs/credentials.md.",
        ),
    ] = None,
    oauth_callback_url: Annotated[
        str | None,
        typer.Option(
            "--oauth-callback-url",
            help="HTTP: the public URL of this gateway's /oauth/callback, registered with upstreams' OAuth clients "
            "(default: http://HOST:PORT/oauth/callback).",
        ),
    ] = None,
    meta_dialect: Annotated[
        str,
        typer.Option(
            "--meta-dialect",
            help="How the search meta-tool is named: rfc (find_tools), seed001 (tool_search_tool, max_results, "
            "category_filter) or spring (toolSearchTool, maxResults, categoryFilter).",
        ),
    ] = "rfc",
    result_cache: Annotated[
        int,
        typer.Option(min=0, help="Search results kept for repeated queries (0: off); any catalog change invalidates."),
    ] = 1024,
    list_names_below: Annotated[
        int,
        typer.Option(min=0, help="When nothing matches and a caller sees at most this many tools, list their names (0: off)."),
    ] = 0,
    defer: Annotated[
        str,
        typer.Option(
            help="When sessions defer tools: 0 (always search, default), a tool count, or auto[:N%] (when the "
            "visible tools' definitions exceed N% of --context-window; 10% by default).",
        ),
    ] = "0",
    context_window: Annotated[
        int | None,
        typer.Option(min=1, help="The clients' model context window in tokens, for --defer auto (default 128000)."),
    ] = None,
    auto_pin: Annotated[
        int,
        typer.Option(min=0, max=20, help="Pin the N most-used tools (learned usage) in every new session (0: off)."),
    ] = 0,
    trust_hints: Annotated[
        bool,
        typer.Option(
            "--trust-hints/--distrust-hints",
            help="Whether upstreams' MCP hints (readOnlyHint, destructiveHint) decide a tool's kind for approval; "
            "with --distrust-hints a tool whose kind the config does not set needs approval (docs/overrides.md).",
        ),
    ] = True,
    log_json: Annotated[
        bool, typer.Option("--log-json", help="Log one JSON object per line on stderr (for a log collector).")
    ] = False,
    code_mode: Annotated[
        bool,
        typer.Option("--code-mode", help="Also offer execute: a Python program that calls tools, run in a sandbox (toolscout[code])."),
    ] = False,
    auth: Annotated[
        str | None,
        typer.Option(
            "--auth",
            envvar="TOOLSCOUT_AUTH",
            help="OAuth resource-server settings (issuer, policies, ...) as JSON or a JSON file; see docs/team-gateway.md.",
        ),
    ] = None,
    audit: Annotated[
        bool, typer.Option("--audit", help="Keep an audit record of every call in the store (on with --auth).")
    ] = False,
    audit_stdout: Annotated[
        bool, typer.Option("--audit-stdout", help="Also print each audit record as a JSON line on stdout (HTTP only).")
    ] = False,
    audit_arguments: Annotated[
        bool, typer.Option("--audit-arguments", help="Keep call arguments in audit records (secrets masked).")
    ] = False,
) -> None:
    """Serve find_tools and call_tool over MCP in front of every server in the config.

    Every option but --config can also be set in the config file, at its top level, under its
    camelCase name (--use-tool: "useTool", --allow-origin: a list); an option given here (or
    through its environment variable) wins over the file.

    \b
    Example: toolscout serve --config servers.json --transport http --port 8765
    Example: toolscout serve demo
    """
    try:
        settings = settings_of(ctx)  # every option above, through ServeConfig: each flag is also a config-file key
        _logs.setup(logging.WARNING, json_lines=settings.log_json, verbose=settings.verbose)
        if settings.transport == "http":  # before anything is built or printed: one line, no banner
            _check_port(settings.bind, settings.port)
        served = built(settings)
    except typer.Exit as stop:
        if transport == "stdio" and not _on_terminal() and LAST_FAILURE:  # a client started us: tell it why
            refuse_over_stdio(*LAST_FAILURE[0])
        raise stop from None
    _warn_degraded(served)
    if settings.transport == "stdio":
        if _on_terminal():  # a person started it; a client talking over the pipe sees nothing
            _stdio_banner(config, catalog, served.aggregator)
        asyncio.run(served.serve())
        return
    try:
        asgi = served.asgi()
    except ValueError as exc:
        raise fail("config_error", str(exc)) from None
    except ToolscoutError as exc:  # metrics without toolscout[metrics]
        raise fail_with(exc) from None
    base = settings.url.removesuffix("/mcp")
    bearer = ", header 'Authorization: Bearer <token>'" if settings.token or settings.auth else ""
    err().print(
        f"toolscout MCP gateway on {settings.url}, HTTP API under /v1, web console at {base}/ui\n"
        f"Serving find_tools and call_tool for {_served(served)} from {config or catalog}.\n"
        f"Connect a client: streamable HTTP at {settings.url}{bearer}. Ctrl-C stops.",
        markup=False, highlight=False, soft_wrap=True,
    )
    asyncio.run(served.serve(asgi))


def built(settings: ServeConfig) -> App:
    """The gateway ``settings`` describe (serve, and ``call --config``); a problem exits 2."""
    from ..server.app import build_app  # serve's own stack: MCP server, upstreams, screen, ~150 ms

    try:
        return build_app(settings)
    except ToolscoutError as exc:
        raise fail_with(exc) from None


def _check_port(host: str, port: int) -> None:
    """A port another process holds is a usage error (exit 2) reported in one line before
    the banner: uvicorn would only find out after the banner, with a multi-line log."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            probe.bind((host, port))
    except OSError as exc:
        where = f"[{host}]:{port}" if family == socket.AF_INET6 else f"{host}:{port}"
        busy = exc.errno == errno.EADDRINUSE
        what = "is in use by another process" if busy else f"cannot be bound ({exc.strerror or exc})"
        raise fail("address_in_use" if busy else "config_error", f"{where} {what}; pick another --port.", status=USAGE) from None


def _warn_degraded(served: App) -> None:
    """What serves, but not as asked: a session store that does not answer yet, embeddings
    without their extra."""
    shared = served.session_store
    if shared is not None and not shared.ping():
        warn(f"session store {shared.where} does not answer yet; stateful calls get session_store_unavailable until it does.")
    if served.config.embed and served.gateway.hybrid is None:
        warn("--embed needs toolscout[embed] (pip install 'toolscout[embed]'); serving keyword search.")
    auth = served.config.auth
    if auth is not None:
        problem = _issuer_problem(auth.issuer)
        if problem:
            warn(
                f"the issuer {auth.issuer} cannot be reached ({problem}): every request with a token gets 503 "
                "issuer_unavailable until it answers (/v1/ready says so). To try the team gateway on one machine, "
                "start a local issuer: python3 scripts/local_issuer.py (docs/team-gateway.md)."
            )


def _issuer_problem(issuer: str, timeout: float = 3.0) -> str | None:
    """Why the issuer's metadata cannot be read now (``None``: it answers). A placeholder
    issuer (``https://login.example.com``) would otherwise only show as 401s and 503s."""
    import httpx  # pulls in rich: only for a gateway with auth

    base = issuer.rstrip("/")
    problem = "no answer"
    for path in ("/.well-known/openid-configuration", "/.well-known/oauth-authorization-server"):
        try:
            reply = httpx.get(base + path, timeout=timeout)
        except httpx.HTTPError as exc:
            return f"{type(exc).__name__}: {exc}"[:200]
        if reply.status_code == 200:
            return None
        problem = f"{path} answered HTTP {reply.status_code}"
    return problem


def _on_terminal() -> bool:
    return sys.stdin.isatty()


def _upstreams(aggregator: Aggregator) -> str:
    """``2 sources (github: mcp, crm: declarations)``: the enabled ones, each with its kind."""
    rows = [(name, row.get("kind", "mcp")) for name, row in aggregator.status().items() if row.get("state") != "disabled"]
    shown = ", ".join(f"{name}: {kind}" for name, kind in rows[:8]) + (", ..." if len(rows) > 8 else "")
    return f"{len(rows)} source{'' if len(rows) == 1 else 's'}" + (f" ({shown})" if rows else "")


def _served(served: App) -> str:
    """What the gateway serves: its upstreams, or a catalog's tools (``serve demo``)."""
    if served.config.config is None:
        return kinds_counted(served.gateway.catalog)
    return _upstreams(served.aggregator)


def _stdio_banner(config: Path | None, catalog: str | None, aggregator: Aggregator) -> None:
    """What a person who ran ``serve`` by hand needs: stdio is for a client to start the
    gateway itself, so say how to register it (on stderr: stdout is the protocol)."""
    me = Path(sys.argv[0])  # the client may not have this venv on its PATH: name the file
    command = str(me.absolute()) if me.name == "toolscout" else "toolscout"
    if config is not None:
        args, source, what = ["serve", "--config", str(config.resolve())], f"--config {config}", _upstreams(aggregator)
    else:
        spec = str(catalog) if catalog == "demo" or "://" in str(catalog) else str(Path(str(catalog)).resolve())
        args, source, what = ["serve", spec], spec, kinds_counted(aggregator.catalog)
    entry = {"mcpServers": {"toolscout": {"command": command, "args": args}}}
    err().print(
        f"toolscout MCP gateway on stdio: find_tools and call_tool for {what} from {config or catalog}.\n"
        "It is waiting for an MCP client on stdin. Let your client start it; add to the client's MCP config:\n"
        f"  {json.dumps(entry)}\n"
        f"Or serve over HTTP: toolscout serve {source} --transport http. Ctrl-C stops.",
        markup=False, highlight=False, soft_wrap=True,
    )


@app.command()
def servers(
    ctx: typer.Context,
    config: ConfigOpt,
    cache: CacheOpt = None,
    connect: Annotated[bool, typer.Option(help="Connect to each server (else report the cache only).")] = True,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for all servers.")] = 30.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
    nl: NlOpt = False,
    as_csv: CsvOpt = False,
) -> None:
    """Show each upstream server's state, tool count and last error.

    \b
    Example: toolscout servers --config servers.json
    """
    _logs.setup(logging.ERROR)
    from ..server.app import build_aggregator  # serve's own stack: upstreams, screen, ~150 ms

    try:  # the store serve would use: --cache, else the file's store or cache
        settings = settings_of(ctx, only=("cache",), rules=False)
        aggregator = build_aggregator(settings)
    except ToolscoutError as exc:
        raise fail_with(exc) from None

    async def probe() -> dict:
        aggregator.load_cached()
        if connect:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(aggregator.start(lazy=False), timeout)
        rows = aggregator.status()
        await aggregator.aclose()
        return rows

    rows = asyncio.run(probe())
    failed = any(r["state"] == "failed" for r in rows.values())
    if as_json:
        typer.echo(json.dumps(rows, indent=2, default=str))
        if failed:  # as the table does: scripts check the exit code, not the JSON
            raise typer.Exit(1)
        return
    columns = [Column("server"), Column("transport"), Column("state"), Column("tools", right=True),
               Column("tool_list", "tool list"), Column("last_error", "last error")]
    cached = "no cache (--no-cache)" if aggregator.cache is None else f"tool lists cached in {settings.location}"
    grid = Grid(columns, notes=[cached])
    for name, row in rows.items():
        fetched = row.get("fetched_at")
        age = f"{'cache' if row.get('from_cache') else 'live'}, {_age(fetched)}" if fetched else "-"
        tools = str(row.get("tools", 0)) + (f" ({row['metadata_only']} metadata only)" if row.get("metadata_only") else "")
        grid.rows.append([name, row.get("transport"), row["state"], tools, age, row.get("last_error") or ""])
    emit(grid, nl=nl, as_csv=as_csv)  # names and upstream errors whole, never markup
    if failed:
        raise typer.Exit(1)


def _age(ts: float) -> str:
    seconds = max(0, time.time() - ts)
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit} ago"
    return f"{seconds:.0f} s ago"


@app.command("audit-log")
def audit_log(
    ctx: typer.Context,
    config: ConfigOpt,
    cache: CacheOpt = None,
    store: Annotated[str | None, typer.Option("--store", help="The store serve used (a file or postgresql:// URL).")] = None,
    since: Annotated[str, typer.Option(help="How far back: 30m, 1h, 7d, or an ISO 8601 time.")] = "1h",
    principal: Annotated[str | None, typer.Option(help="Only this caller's calls (the token's subject).")] = None,
    tool: Annotated[str | None, typer.Option(help="Only calls of this tool.")] = None,
    decision: Annotated[
        str | None, typer.Option(callback=choice(DECISIONS, optional=True), help="allowed, approved, denied or refused.")
    ] = None,
    limit: Annotated[int, typer.Option(min=1, help="At most this many records (newest first).")] = 200,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object per line instead of a table.")] = False,
) -> None:
    """Show the audit record of calls a gateway served (serve --audit, or --auth).

    Reads the store serve keeps them in: the config's store or cache, or --store.

    \b
    Example: toolscout audit-log --config servers.json --since 1h --principal alice --json
    """
    settings = settings_of(ctx, only=("cache", "store"), rules=False)
    try:
        start = parse_since(since)
    except ValueError as exc:
        raise fail("invalid_request", str(exc), "Pass --since 1h (or 30m, 7d, 2026-01-01T00:00:00Z).") from None
    try:
        with open_store(settings.location) as opened:
            records = AuditLog(opened).query(since=start, principal=principal, tool=tool, decision=decision, limit=limit)
    except ToolscoutError as exc:
        raise fail_with(exc) from None
    if as_json:
        for record in records:
            typer.echo(json.dumps(record.to_dict(), ensure_ascii=False))
        return
    columns = [Column("time", "time (UTC)"), Column("principal"), Column("tool"), Column("decision"),
               Column("outcome"), Column("ms", right=True), Column("replica")]
    grid = Grid(columns)  # boxed on a terminal; plain, whole values when piped (| cat, | grep)
    for r in records:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(r.time))
        grid.rows.append([when, r.principal, r.tool, r.decision, r.outcome, f"{r.duration_ms:.0f}", r.replica])
    emit(grid)
    if not records:
        err().print(f"no audit records since {since}", markup=False, highlight=False)
