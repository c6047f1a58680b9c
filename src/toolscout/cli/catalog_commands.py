"""search, show, tokens: commands over a catalog (a declaration file, a store, a data
directory holding ``tools.jsonl``, or ``demo`` for the catalog that ships with toolscout)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..catalog import Catalog
from ..errors import ToolscoutError
from ..gateway import Gateway
from . import app
from ._console import err, out

if TYPE_CHECKING:
    from ..store import Store


CatalogArg = Annotated[
    str, typer.Argument(help="Declaration file, store file, data directory, postgresql:// store, or 'demo'.")
]
FormatOpt = Annotated[
    str, typer.Option("--format", "-f", help="openai, openai-responses, anthropic, gemini, mcp or generic.")
]


def open_catalog(spec: str) -> Catalog:
    """Resolve a CLI catalog argument to a loaded catalog (with handlers for the demo)."""
    if spec == "demo":
        from ..demo import demo_catalog

        return demo_catalog()
    from ..pgstore import is_postgres_url

    if is_postgres_url(spec):  # the shared catalog, as every replica on it serves it
        from ..replica import SharedCatalog

        return SharedCatalog(spec, listen=False)
    path = Path(spec)
    if path.is_dir():
        path = path / "tools.jsonl"
    if not path.exists():
        raise typer.BadParameter(f"no catalog at {spec!r}", param_hint="CATALOG")
    return Catalog.open(path)


def _vector_cache() -> Store:
    """Embeddings of catalogs that have no store of their own: ``$XDG_CACHE_HOME/toolscout``."""
    from ..store import Store

    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "toolscout"
    return Store(base / "vectors.db")


def _load(spec: str) -> Catalog:
    try:
        return open_catalog(spec)
    except ToolscoutError as exc:
        err().print(f"[red]{exc.code}[/red]: {exc.message}")
        if exc.hint:
            err().print(exc.hint)
        raise typer.Exit(2) from None


@app.command()
def search(
    catalog: CatalogArg,
    query: Annotated[str, typer.Argument(help="What the tool should do, a tool name, or select:a,b.")],
    limit: Annotated[int, typer.Option("--limit", "-n", help="How many tools (capped at 20).")] = 5,
    type: Annotated[str, typer.Option("--type", "-t", help="auto, keyword, regex, semantic or hybrid.")] = "auto",
    category: Annotated[str | None, typer.Option("--category", "-c", help="Only this category.")] = None,
    format: FormatOpt = "generic",
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole result as JSON.")] = False,
    embed: Annotated[
        bool,
        typer.Option("--embed", help="Use embeddings (toolscout[embed]); implied by --type semantic|hybrid."),
    ] = False,
) -> None:
    """Search a catalog the way a model's find_tools call would.

    Example: toolscout search demo "post a message to a slack channel" --limit 3
    """
    cat = _load(catalog)
    if embed or type in ("semantic", "hybrid"):
        gateway = Gateway(cat, embeddings="auto", vector_store=cat.store or _vector_cache())
    else:
        gateway = Gateway(cat)
    result = gateway.find_tools(query, limit, search_type=type, category=category, format=format)
    if as_json:
        out().print_json(json.dumps(result.to_dict(), ensure_ascii=False))
    elif result.error is not None:
        err().print(f"[red]{result.text()}[/red]")
    else:
        from rich.table import Table

        table = Table(title=f"{result.total_matches} matches, {result.execution_time_ms:.2f} ms ({result.search_type})")
        table.add_column("tool", style="bold cyan")
        table.add_column("score", justify="right")
        table.add_column("summary")
        for ref in result.tool_references:
            table.add_row(ref.tool_name, f"{ref.relevance_score:.2f}", ref.summary)
        out().print(table)
        for warning in result.warnings:
            err().print(f"[yellow]warning:[/yellow] {warning}")
    if result.error is not None:
        raise typer.Exit(1)


@app.command()
def show(
    catalog: CatalogArg,
    name: Annotated[str, typer.Argument(help="Exact tool name.")],
    format: Annotated[
        str | None, typer.Option("--format", "-f", help="Render for one host API instead of the full record.")
    ] = None,
) -> None:
    """Print one tool: its full record, or its definition in a host API's format.

    Example: toolscout show demo slack_send_message --format anthropic
    """
    from .. import formats

    cat = _load(catalog)
    tool = cat.get(name)
    if tool is None:
        suggestions = Gateway(cat).suggest(name)
        hint = f" Did you mean: {', '.join(suggestions)}?" if suggestions else ""
        err().print(f"[red]unknown_tool[/red]: no tool named {name!r}.{hint}")
        raise typer.Exit(1)
    data = formats.render(tool, format) if format else tool.to_dict()
    out().print_json(json.dumps(data, ensure_ascii=False))
    if format in ("openai", "openai-responses", "openai-chat", "responses"):
        reason = formats.strict_refusal(tool.input_schema)
        if reason:
            convertible = formats.openai_strict(tool.input_schema) is not None
            err().print(
                f"[yellow]not strict[/yellow]: {reason}"
                + ("; formats.openai_strict() can convert it." if convertible else ".")
            )


@app.command()
def tokens(
    catalog: CatalogArg,
    format: FormatOpt = "openai",
    searches: Annotated[int, typer.Option(help="Searches in the conversation.")] = 3,
    per_search: Annotated[int, typer.Option(help="Tools each search reveals.")] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Count tool-definition tokens (o200k, offline): static list vs find_tools vs searches.

    Example: toolscout tokens demo --format anthropic
    """
    from ..tokens import savings_report

    cat = _load(catalog)
    gateway = Gateway(cat)
    report = savings_report(
        list(cat), gateway.meta_tools(format), format, found_per_search=per_search, searches=searches
    )
    if as_json:
        out().print_json(json.dumps(report.to_dict()))
        return
    from rich.table import Table

    table = Table(title=f"Tool-definition tokens, {len(cat)} tools, {format} format (o200k)")
    table.add_column("what is sent")
    table.add_column("tokens", justify="right")
    table.add_column("of the static list", justify="right")
    for label, count, share in report.rows():
        table.add_row(label, f"{count:,}", share)
    out().print(table)
    if report.to_dict()["estimate"]:
        out().print(f"[dim]{format} counts are o200k estimates of the JSON definitions.[/dim]")


catalog_app = typer.Typer(help="The shared catalog in PostgreSQL (what every replica serves).", no_args_is_help=True)
app.add_typer(catalog_app, name="catalog")


@catalog_app.command("sync")
def sync(
    source: Annotated[str, typer.Argument(help="Declaration file, OpenAPI document, or directory holding tools.jsonl.")],
    store: Annotated[str, typer.Option("--store", help="postgresql://user@host:port/dbname")],
    prefix: Annotated[str | None, typer.Option("--prefix", help="Name tools {prefix}_{name}; also the source id.")] = None,
    source_id: Annotated[
        str | None, typer.Option("--source-id", help="The source to replace (default: the prefix, else the file name).")
    ] = None,
    base_url: Annotated[str | None, typer.Option("--base-url", help="OpenAPI: base URL (default: servers[0].url).")] = None,
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help="Skip malformed entries instead of failing.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print what changed as JSON.")] = False,
) -> None:
    """Replace what SOURCE held in the shared catalog, in one transaction; replicas follow.

    Example: toolscout catalog sync tools.yaml --store postgresql://toolscout@db/toolscout --prefix crm
    """
    from ..pgstore import describe_dsn, is_postgres_url
    from ..replica import sync_source

    if not is_postgres_url(store):
        err().print("[red]config_error[/red]: catalog sync needs a PostgreSQL store: --store postgresql://user@host:port/dbname")
        raise typer.Exit(2)
    try:
        done = sync_source(source, store, prefix=prefix, source_id=source_id, base_url=base_url, skip_invalid=skip_invalid)
    except ToolscoutError as exc:
        err().print(f"[red]{exc.code}[/red]: {exc.message}")
        if exc.hint:
            err().print(exc.hint)
        raise typer.Exit(2) from None
    where = describe_dsn(store)
    if as_json:
        report = {"source": done.source, "version": done.version, "store": where, "added": list(done.added),
                  "changed": list(done.changed), "removed": list(done.removed)}
        typer.echo(json.dumps(report))
        return
    out().print(
        f"synced {source} into source '{done.source}' on {where}: {len(done.added)} added, "
        f"{len(done.changed)} changed, {len(done.removed)} removed (version {done.version})"
    )
