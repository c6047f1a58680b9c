"""audit: which tools of a catalog, or of a config's upstream servers, look poisoned.

The JSON output is a fixed contract other tooling reads::

    {"tools": <count>, "flagged": [{"name": ..., "findings": [{"code": ..., "severity":
    "high"|"medium"|"low", "field": ..., "evidence": ...}]}]}

Exit code 1 when any finding is high, 2 when the catalog or config cannot be read, else 0.
"""

from __future__ import annotations

import asyncio
import contextlib
import fnmatch
import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..catalog import Catalog
from ..errors import ToolscoutError
from ..security import findings_of
from ..sources.open import open_catalog
from ..storage import open_store
from . import app
from ._console import err, out
from ._exits import USAGE, fail

if TYPE_CHECKING:
    from ..model import Tool
    from ..security import Finding, Screen

_RANK = {"low": 2, "medium": 1, "high": 0}


@contextlib.contextmanager
def _quiet_scan_log() -> Iterator[None]:
    """The report is the output; the screen's per-tool warnings would repeat it on stderr."""
    logger = logging.getLogger("toolscout.security")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        yield
    finally:
        logger.setLevel(level)


def _screen(pins: str | None, store: Any) -> Screen:
    from ..security import Screen  # audit's own stack: the screen's rules, ~50 ms

    if pins:
        return Screen.on_store(open_store(pins))
    return Screen.on_store(store)


def _scan_catalog(spec: str, pins: str | None) -> tuple[Catalog, Screen]:
    """Open a catalog argument and attach findings, grouped by source (a tool may name its
    siblings without that being shadowing)."""
    cat = open_catalog(spec)
    screen = _screen(pins, cat.store)
    groups: dict[str, list[Tool]] = {}
    for tool in cat:
        groups.setdefault(tool.source_id or tool.category or tool.source, []).append(tool)
    with _quiet_scan_log():
        reviewed = [t for group in groups.values() for t in screen.review(group, mode="warn", source="audit")]
    order = {name: i for i, name in enumerate(cat.names())}
    return Catalog(sorted(reviewed, key=lambda t: order[t.name])), screen


def _scan_config(
    config: Path, cache: str | None, pins: str | None, connect: bool, timeout: float
) -> tuple[Catalog, Screen]:
    """Load (and, with ``connect``, refresh) every configured upstream with scanning forced to
    ``warn``: an audit reports every tool, whatever the configured policy."""
    # audit --config's own stack (MCP upstreams, config models): ~110 ms no other command needs
    from ..sources.mcp.aggregator import Aggregator
    from ..sources.mcp.cache import ToolListCache, default_cache_path
    from ..sources.mcp.config import load_config

    cfg = load_config(config)
    cfg.poisoning = "warn"
    for server in [*cfg.servers.values(), *cfg.sources().values()]:
        server.poisoning = None
    tool_cache = ToolListCache.open(cache or cfg.cache or default_cache_path(config))
    aggregator = Aggregator(cfg, Catalog(), cache=tool_cache)
    if pins:
        aggregator.screen = _screen(pins, None)

    async def load() -> None:
        aggregator.load_cached()
        if connect:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(aggregator.start(lazy=False), timeout)
        await aggregator.aclose()

    with _quiet_scan_log():
        asyncio.run(load())
    for name, row in aggregator.status().items():
        if row.get("state") == "failed" and not row.get("tools"):
            err().print(f"warning: server '{name}' failed and has no cached tools: {row.get('last_error')}", markup=False)
    return aggregator.catalog, aggregator.screen


def _approve(catalog: Catalog, screen: Screen, patterns: list[str]) -> list[str]:
    """Pin matching tools at their current content (a person accepts a change)."""
    chosen = [t for t in catalog if any(fnmatch.fnmatchcase(t.name, p) for p in patterns)]
    screen.pins.approve((t.name, t) for t in chosen)
    return [t.name for t in chosen if any(f.code == "rug_pull" for f in findings_of(t))]


def report(catalog: Catalog, *, min_severity: str = "low", approved: tuple[str, ...] = ()) -> dict[str, Any]:
    """The audit's JSON object (see the module docstring)."""
    flagged = []
    for tool in catalog:
        findings: list[Finding] = [
            f for f in findings_of(tool)
            if _RANK[f.severity] <= _RANK[min_severity] and not (f.code == "rug_pull" and tool.name in approved)
        ]
        if findings:
            flagged.append({"name": tool.name, "findings": [f.to_dict() for f in findings]})
    return {"tools": len(catalog), "flagged": flagged}


def _print_table(result: dict[str, Any], versions: dict[str, str]) -> None:
    from rich.markup import escape
    from rich.table import Table

    if not result["flagged"]:
        out().print(f"no findings in {result['tools']} tools")
        return
    colour = {"high": "bold red", "medium": "yellow", "low": "dim"}
    table = Table(
        title=f"{len(result['flagged'])} of {result['tools']} tools flagged",
        caption="name@version allows exactly this content (poisoningAllow); --approve accepts a rug pull",
    )
    for column in ("tool", "severity", "code", "field", "evidence"):
        table.add_column(column, overflow="fold")
    for row in result["flagged"]:
        for i, f in enumerate(row["findings"]):
            table.add_row(
                f"{escape(row['name'])}\n[dim]@{versions.get(row['name'], '?')}[/]" if i == 0 else "",
                f"[{colour[f['severity']]}]{f['severity']}[/]",
                f["code"],
                escape(f["field"]),
                escape(f["evidence"]),
            )
    out().print(table)


@app.command()
def audit(
    catalog: Annotated[
        str | None, typer.Argument(metavar="CATALOG", help="Declaration file, store file, data directory, or 'demo'.")
    ] = None,
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="Audit the upstream servers of an mcpServers JSON file.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object (a fixed shape).")] = False,
    min_severity: Annotated[str, typer.Option("--min-severity", help="low, medium or high.")] = "low",
    pins: Annotated[
        str | None,
        typer.Option(help="Store file for rug-pull pins (default: the catalog's store, or the config's cache)."),
    ] = None,
    approve: Annotated[
        list[str] | None, typer.Option(help="Accept the current content of these tools (glob; repeatable).")
    ] = None,
    cache: Annotated[str | None, typer.Option(help="With --config: the tool-list cache file.")] = None,
    connect: Annotated[
        bool, typer.Option(help="With --config: connect to the servers (else their cached lists only).")
    ] = True,
    timeout: Annotated[float, typer.Option(help="With --config: seconds to wait for all servers.")] = 30.0,
) -> None:
    """Scan tool names, descriptions and schemas for poisoning (instructions aimed at the
    model, requests for secrets, orders about other tools, hidden characters, encoded
    payloads) and for tools that changed since they were first seen (rug pulls).

    \b
    Example: toolscout audit --config servers.json --json
    """
    if (catalog is None) == (config is None):
        raise fail("usage_error", "give a CATALOG or --config servers.json (one of them)", "toolscout audit demo, or toolscout audit --config servers.json", status=USAGE)
    if min_severity not in _RANK:
        raise fail("usage_error", f"--min-severity {min_severity!r}; use one of: low, medium, high", status=USAGE)
    try:
        if config is not None:
            cat, screen = _scan_config(config, cache, pins, connect, timeout)
        else:
            assert catalog is not None
            cat, screen = _scan_catalog(catalog, pins)
    except ToolscoutError as exc:
        raise fail(exc.code, exc.message, exc.hint, status=USAGE) from None
    approved = tuple(_approve(cat, screen, approve)) if approve else ()
    result = report(cat, min_severity=min_severity, approved=approved)
    if as_json:
        typer.echo(json.dumps(result, ensure_ascii=False))
    else:
        _print_table(result, {t.name: t.version for t in cat})
        for name in approved:
            err().print(f"approved the current content of {name}", markup=False)
    if any(f["severity"] == "high" for row in result["flagged"] for f in row["findings"]):
        raise typer.Exit(1)
