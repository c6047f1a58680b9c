"""search, show, tokens: commands over a catalog (a declaration file, a store, a data
directory holding ``tools.jsonl``, or ``demo`` for the catalog that ships with toolscout)."""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Annotated

import typer

from .. import formats
from ..accounting.tokens import count_tool_tokens, gateway_savings
from ..catalog import Catalog
from ..errors import EmbeddingUnavailable, MissingExtra, ToolscoutError
from ..gateway import Gateway
from ..request import DEFAULT_LIMIT, MAX_LIMIT, SEARCH_TYPES
from ..scaleout.replica import sync_source
from ..session import DEFAULT_THRESHOLD
from ..sources.open import open_catalog
from ..storage import SharedStore, Store, is_store_url, open_store
from ..storage.paths import cache_dir
from . import app
from ._console import err, out
from ._exits import OneStyleGroup, check_format, choice, fail, fail_with, plural, warn
from ._tables import Column, CsvOpt, Grid, NlOpt, emit

if TYPE_CHECKING:
    from ..gateway import FindResult


CatalogArg = Annotated[
    str, typer.Argument(metavar="CATALOG", help="Declaration file, store file, data directory, postgresql:// store, or 'demo'.")
]
DEFAULT_FORMAT = "openai"
QueryEncoderOpt = Annotated[
    str,
    typer.Option(
        "--query-encoder",
        callback=choice(("auto", "blockwise", "int8", "model", "static")),
        help="How requests are embedded with --embed: auto (= blockwise: int8 products, as good as the "
        "model), int8 (faster, slightly less exact), model, static (fastest, far less exact).",
    ),
]
"""One default for search, tokens and demo: Chat Completions is the format most hosts speak,
and the only one whose o200k token counts are exact rather than estimates."""
FormatOpt = Annotated[
    str,
    typer.Option(
        "--format", "-f", callback=check_format, help="openai, openai-responses, anthropic, gemini, mcp or generic."
    ),
]


def _vector_cache() -> Store:
    """Embeddings of catalogs that have no store of their own: ``$XDG_CACHE_HOME/toolscout``."""
    return open_store(cache_dir() / "vectors.db")


def load_catalog(spec: str) -> Catalog:
    try:
        cat = open_catalog(spec)
    except ToolscoutError as exc:
        raise fail_with(exc) from None
    if not len(cat):  # else every search would answer no_match, as if the query were wrong
        raise typer.BadParameter(f"{spec} holds no tools", param_hint="CATALOG")
    return cat


@app.command()
def search(
    catalog: CatalogArg,
    query: Annotated[str, typer.Argument(metavar="QUERY", help="What the tool should do, a tool name, or select:a,b.")],
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, help=f"How many tools, at least 1 (more than {MAX_LIMIT} is capped).")
    ] = DEFAULT_LIMIT,
    type: Annotated[
        str, typer.Option("--type", "-t", callback=choice(SEARCH_TYPES), help="auto, keyword, regex, semantic or hybrid.")
    ] = "auto",
    category: Annotated[str | None, typer.Option("--category", "-c", help="Only this category.")] = None,
    format: FormatOpt = DEFAULT_FORMAT,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole result as JSON.")] = False,
    embed: Annotated[
        bool,
        typer.Option("--embed", help="Use embeddings (toolscout[embed]); implied by --type semantic|hybrid."),
    ] = False,
    kinds: Annotated[
        str | None,
        typer.Option("--kinds", "-k", help="Kinds of entry: tool, skill, agent, comma-separated, or all."),
    ] = None,
    model: Annotated[
        str,
        typer.Option(
            "--model",
            "-m",
            callback=choice(("default", "multilingual", "multilingual-e5")),
            help="Embedding model: default (English), multilingual (requests in 16 languages) or "
            "multilingual-e5 (~100 languages, slower); both toolscout[multilingual], imply --embed.",
        ),
    ] = "default",
    query_encoder: QueryEncoderOpt = "auto",
    nl: NlOpt = False,
    as_csv: CsvOpt = False,
) -> None:
    """Search a catalog the way a model's find_tools call would. The table shows each tool
    by the name the model sees in --format and what its definition costs in tokens; the
    time is the search's alone (loading and indexing the catalog is reported apart).

    \b
    Example: toolscout search demo "post a message to a slack channel" --limit 3
    """
    started = time.perf_counter()
    cat = load_catalog(catalog)
    gateway = _gateway(cat, embed or type in ("semantic", "hybrid") or model != "default", model, query_encoder)
    extra = {"kinds": kinds} if kinds else {}

    def find() -> FindResult:
        return gateway.find_tools(query, limit, search_type=type, category=category, format=format, **extra)

    find()  # builds the index (and the embeddings): a one-off, timed apart from the search
    built_ms = (time.perf_counter() - started) * 1000
    result = find()
    if as_json:
        out().print_json(json.dumps(result.to_dict(), ensure_ascii=False))
    elif result.error is None:
        _print_found(result, min(limit, MAX_LIMIT), format, built_ms, nl=nl, as_csv=as_csv)
    if result.error is not None:
        code, message = result.error.code, result.error.message
        raise fail(code, message, "\n".join(result.error.text().splitlines()[1:]))


def _gateway(cat: Catalog, embed: bool, model: str = "default", query_encoder: str = "auto") -> Gateway:
    """Hybrid when asked and possible; otherwise keyword search with a warning that says
    why (a silent fallback would look like embeddings finding nothing better)."""
    if not embed:
        return Gateway(cat)
    try:
        embeddings = model if model != "default" else True
        return Gateway(cat, embeddings=embeddings, vector_store=cat.store or _vector_cache(), query_encoder=query_encoder)
    except (MissingExtra, EmbeddingUnavailable) as exc:
        warn(f"{exc.message} {exc.hint}".strip() + "; searching by keyword only.")
        return Gateway(cat)


def _print_found(result: FindResult, limit: int, format: str, built_ms: float, *, nl: bool, as_csv: bool) -> None:
    refs = result.tool_references
    shown, total = len(refs), result.total_matches
    head = plural(total, "matching tool") if shown == total else f"{shown} of {plural(total, 'matching tool')}"
    notes = []
    cut = min(limit, total) - shown
    if cut > 0:
        notes.append(f"AutoCut removed {plural(cut, 'weaker result')} below a score cliff.")
    sizes = [count_tool_tokens([d]) for d in result.tools]
    if result.tools:
        sent = plural(len(result.tools), f"{format} definition")
        notes.append(f"{sent} sent: {sum(sizes):,} tokens (o200k); --json prints them.")
    notes.append(f"Catalog loaded and indexed in {built_ms:,.0f} ms, once; a server pays that at start.")
    size = dict(zip((t.name for t in result.to_send()), sizes, strict=True))
    wire = [formats.wire_name(ref.tool_name, format) for ref in refs]
    renamed = any(w != ref.tool_name for w, ref in zip(wire, refs, strict=True))
    columns = [
        Column("tool", f"tool (as {format} names it)", style="bold cyan"),
        *([Column("catalog_name", "catalog name")] if renamed else []),
        Column("score", right=True, show=lambda v: f"{v:.2f}"),
        Column("tokens", right=True, show=lambda v: "loaded" if v is None else f"{v:,}"),
        Column("summary"),
    ]
    rows = [
        [w, *([ref.tool_name] if renamed else []), round(ref.relevance_score, 4), size.get(ref.tool_name), ref.summary]
        for w, ref in zip(wire, refs, strict=True)
    ]
    title = f"{head} for {result.query!r}, search {result.execution_time_ms:.2f} ms ({result.search_type})"
    emit(Grid(columns, rows, title=title, notes=notes), nl=nl, as_csv=as_csv)
    for warning in result.warnings:
        warn(warning)


@app.command()
def show(
    catalog: CatalogArg,
    name: Annotated[str, typer.Argument(metavar="NAME", help="Exact tool name.")],
    format: Annotated[
        str | None,
        typer.Option(
            "--format", "-f", callback=check_format, help="Render for one host API instead of the full record."
        ),
    ] = None,
) -> None:
    """Print one tool: its full record, or its definition in a host API's format.

    \b
    Example: toolscout show demo slack_send_message --format anthropic
    """
    from rich.text import Text

    cat = load_catalog(catalog)
    tool = cat.get(name)
    if tool is None:
        suggestions = Gateway(cat).suggest(name)
        hint = f"Did you mean: {', '.join(suggestions)}?" if suggestions else ""
        raise fail("unknown_tool", f"no tool named {name!r}.", hint)
    data = formats.render(tool, format) if format else tool.to_dict()
    out().print_json(json.dumps(data, ensure_ascii=False))
    if format in ("openai", "openai-responses", "openai-chat", "responses"):
        reason = formats.strict_refusal(tool.input_schema)
        if reason:
            convertible = formats.openai_strict(tool.input_schema) is not None
            line = Text("not strict", style="yellow")
            line.append(f": {reason}" + ("; formats.openai_strict() can convert it." if convertible else "."))
            err().print(line, soft_wrap=True, highlight=False)


@app.command()
def tokens(
    catalog: CatalogArg,
    format: FormatOpt = DEFAULT_FORMAT,
    searches: Annotated[int, typer.Option(min=0, help="Searches in the conversation (0 or more).")] = 3,
    per_search: Annotated[int, typer.Option(min=1, help="Tools each search reveals (1 or more).")] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    nl: NlOpt = False,
    as_csv: CsvOpt = False,
) -> None:
    """Count tool-definition tokens (o200k, offline): static list vs find_tools vs searches.

    \b
    Example: toolscout tokens demo --format anthropic
    """
    cat = load_catalog(catalog)
    gateway = Gateway(cat)
    report = gateway_savings(gateway, format, searches=searches, found_per_search=per_search)
    if as_json:
        out().print_json(json.dumps(report.to_dict()))
        return
    columns = [Column("sent", "what is sent"), Column("tokens", right=True, show=lambda v: f"{v:,}"),
               Column("share", "of the static list", right=True)]
    title = f"Tool-definition tokens, {plural(report.tools, 'tool')}, {format} format (o200k)"
    emit(Grid(columns, [list(row) for row in report.rows()], title=title), nl=nl, as_csv=as_csv)
    if nl or as_csv:
        return
    if report.to_dict()["estimate"]:
        out().print(f"{format} counts are o200k estimates of the JSON definitions.", style="dim")
    if report.tools < DEFAULT_THRESHOLD or report.meta_only >= report.static:
        out().print(
            f"Tool search does not pay off below about {DEFAULT_THRESHOLD} tools: the meta-tools alone cost "
            f"{report.meta_only:,} tokens, the whole list {report.static:,}. Send these tools directly "
            f"(a Session does so below {DEFAULT_THRESHOLD} tools).",
            style="yellow", markup=False, highlight=False,
        )


catalog_app = typer.Typer(
    help="The shared catalog in PostgreSQL (what every replica serves).\n\n"
    "\b\nExample: toolscout catalog sync tools.yaml --store postgresql://toolscout@db/toolscout --prefix crm",
    no_args_is_help=True,
    rich_markup_mode=None,
    cls=OneStyleGroup,
)
app.add_typer(catalog_app, name="catalog")


@catalog_app.command("sync")
def sync(
    source: Annotated[str, typer.Argument(metavar="SOURCE", help="Declaration file, OpenAPI document, or directory holding tools.jsonl.")],
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

    \b
    Example: toolscout catalog sync tools.yaml --store postgresql://toolscout@db/toolscout --prefix crm
    """
    needs = "catalog sync needs a PostgreSQL store: --store postgresql://user@host:port/dbname"
    if not is_store_url(store):  # a file path: never create an SQLite file for this
        raise fail("config_error", needs)
    try:
        with open_store(store) as shared:
            if not isinstance(shared, SharedStore):
                raise fail("config_error", needs)
            where = shared.where
            done = sync_source(source, shared, prefix=prefix, source_id=source_id, base_url=base_url, skip_invalid=skip_invalid)
    except ToolscoutError as exc:
        raise fail_with(exc) from None
    if as_json:
        report = {"source": done.source, "version": done.version, "store": where, "added": list(done.added),
                  "changed": list(done.changed), "removed": list(done.removed)}
        typer.echo(json.dumps(report))
        return
    out().print(
        f"synced {source} into source '{done.source}' on {where}: {len(done.added)} added, "
        f"{len(done.changed)} changed, {len(done.removed)} removed (version {done.version})",
        markup=False,
    )
