"""console: the web console over a local catalog, on 127.0.0.1 only.

``serve --transport http`` already serves the console at ``/ui`` for a gateway; this is the
same page for a catalog that has no gateway yet (a declaration file, a store, ``demo``), to
browse it and try searches before serving it.
"""

from __future__ import annotations

import asyncio
import secrets
import socket
from typing import Annotated

import typer

from ..errors import ToolscoutError
from ..gateway import Gateway
from . import app
from ._exits import kinds_counted
from .catalog_commands import CatalogArg, open_catalog

HOST = "127.0.0.1"


@app.command()
def console(
    catalog: CatalogArg,
    port: Annotated[int, typer.Option(min=0, max=65535, help="Port on 127.0.0.1; 0 picks a free one.")] = 8766,
    token: Annotated[
        str | None,
        typer.Option(
            help="Bearer token the page and API clients must send (default: a new random one, put in the printed link).",
            envvar="TOOLSCOUT_TOKEN",
        ),
    ] = None,
) -> None:
    """Open the web console on a catalog: its tools, a search playground showing why each
    tool ranked, every format's schema, token savings, recent calls. Serves /ui and the
    /v1 HTTP API on 127.0.0.1 only; stop it with Ctrl-C.

    \b
    Example: toolscout console demo --port 8766
    """
    import uvicorn  # the HTTP server, ~60 ms no other command needs

    from ..server.console import local_app  # fastapi, ~250 ms: kept off the CLI's start-up

    try:
        cat = open_catalog(catalog)
    except ToolscoutError as exc:
        typer.echo(f"{exc.code}: {exc.message}" + (f"\n{exc.hint}" if exc.hint else ""), err=True)
        raise typer.Exit(2) from None
    if not len(cat):
        raise typer.BadParameter(f"{catalog} holds no tools", param_hint="CATALOG")
    secret = token or secrets.token_urlsafe(24)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((HOST, port))
        sock.listen(128)  # connections queue from now on: the printed link works at once
    except OSError as exc:
        sock.close()
        typer.echo(f"config_error: cannot listen on {HOST}:{port}: {exc.strerror or exc}", err=True)
        raise typer.Exit(2) from None
    bound = sock.getsockname()[1]
    asgi = local_app(Gateway(cat), token=secret, host=HOST)
    server = uvicorn.Server(uvicorn.Config(asgi, log_level="warning", lifespan="on"))
    base = f"http://{HOST}:{bound}"
    typer.echo(f"toolscout console for {catalog} ({kinds_counted(cat)}): {base}/ui/#token={secret}", color=False)
    typer.echo(f"HTTP API under {base}/v1 (Authorization: Bearer <token>); Ctrl-C stops.", color=False)
    try:
        asyncio.run(server.serve(sockets=[sock]))
    except KeyboardInterrupt:  # pragma: no cover - interactive stop
        pass
    finally:
        sock.close()
