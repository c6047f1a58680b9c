"""``toolscout eval DIR``: search quality on a data set (a stable contract, see docs/evaluation.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from ..errors import ToolscoutError
from ..eval import EvalReport, run_eval
from . import app
from ._console import err as _err
from ._console import out as _out

if TYPE_CHECKING:
    from rich.table import Table


def _table(report: EvalReport) -> Table:
    from rich.table import Table

    table = Table(title=f"{report.dataset}: {report.tools} tools, search_type={report.search_type}")
    for col in ("split", "queries", "R@1", "R@5", "nDCG@10", "Hit@1", "p50 ms", "p95 ms"):
        table.add_column(col, justify="left" if col == "split" else "right")
    rows = [("all", report.overall), *sorted(report.splits.items())]
    for label, m in rows:
        table.add_row(
            label,
            str(m.queries),
            f"{m.r1:.1f}",
            f"{m.r5:.1f}",
            f"{m.ndcg10:.1f}",
            f"{m.hit1:.1f}",
            f"{m.latency_p50_ms:.2f}",
            f"{m.latency_p95_ms:.2f}",
        )
    return table


@app.command("eval")
def eval_command(
    directory: Annotated[Path, typer.Argument(help="Directory holding tools.jsonl and queries.jsonl.")],
    type: Annotated[str, typer.Option("--type", "-t", help="auto, keyword, regex, semantic or hybrid (embed extra).")] = "auto",
    run_out: Annotated[
        Path | None, typer.Option("--run-out", help='Write {"id", "ranked": [top-10 names]} per query (JSONL).')
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as one JSON object.")] = False,
    split: Annotated[str | None, typer.Option("--split", help="Only queries of this split.")] = None,
    max_queries: Annotated[int | None, typer.Option("--max-queries", help="Only the first N queries.", min=1)] = None,
    compare_with: Annotated[
        str | None, typer.Option("--compare", help="Also run this search type on the same queries; print the paired difference.")
    ] = None,
    plot: Annotated[Path | None, typer.Option("--plot", help="Write recall@k curves as a PNG (plot extra).")] = None,
) -> None:
    """Rank every query of DIR and print R@1, R@5, nDCG@10, Hit@1 (percent) and latency.

    Example: toolscout eval path/to/sealtools --type keyword --run-out runs.jsonl
    """
    try:
        if type in ("semantic", "hybrid"):  # embedding modes need the embed extra, set up here
            from ..eval_compare import index_factory

            report = run_eval(
                directory, search_type=type, split=split, max_queries=max_queries, index_factory=index_factory(type)
            )
        else:
            report = run_eval(directory, search_type=type, split=split, max_queries=max_queries)
        if not as_json:
            _out().print(_table(report))
        if compare_with is not None or plot is not None:
            from ..eval_compare import compare_and_plot

            compare_and_plot(directory, report, compare_with, plot, console=_err() if as_json else _out(), split=split, max_queries=max_queries)
    except ToolscoutError as exc:
        _err().print(f"[red]{exc.code}[/red]: {exc.message}", markup=True, highlight=False)
        if exc.hint:
            _err().print(exc.hint, markup=False, highlight=False)
        raise typer.Exit(2) from None
    if run_out is not None:
        with run_out.open("w", encoding="utf-8") as fh:
            for line in report.run_lines():
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    if as_json:
        typer.echo(json.dumps(report.to_dict(), ensure_ascii=False))
