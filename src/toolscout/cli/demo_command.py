"""``toolscout demo``: search and call the bundled catalog, with token savings (offline)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

from ..demo.runner import run_demo
from . import app
from .catalog_commands import DEFAULT_FORMAT, FormatOpt


@app.command()
def demo(
    format: FormatOpt = DEFAULT_FORMAT,
    query: Annotated[
        str | None, typer.Option("--query", "-q", help="Run your own find_tools query instead of the script.")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-n", min=1, help="How many tools --query returns.")] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole run as JSON.")] = False,
) -> None:
    """Search and call a bundled catalog of ~300 tools the way a model would; offline, no key.

    \b
    Example: toolscout demo --query "open a jira ticket" --format anthropic
    """
    run = run_demo(format=format, query=query, limit=limit)
    if as_json:
        typer.echo(json.dumps(run, ensure_ascii=False, indent=2))
        return
    from rich.console import Console

    from ..demo.view import show_demo  # rich, ~75 ms: kept off the CLI's start-up

    show_demo(run, Console())
