"""``toolscout eval DIR``: search quality on a data set (a stable contract, see docs/evaluation.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ..embed import Embedder, load_embedder
from ..errors import MissingExtra, ToolscoutError
from ..eval import EvalReport, run_eval
from ..eval.compare import compare_and_plot, index_factory
from ..request import SEARCH_TYPES
from . import app
from ._console import err as _err
from ._console import out as _out
from ._exits import check_writable, choice, fail_with, plural
from ._tables import Column, CsvOpt, Grid, NlOpt, emit

SEMANTIC_MODES = ("semantic", "hybrid")


def _grid(report: EvalReport) -> Grid:
    pct, ms = (lambda v: f"{v:.1f}"), (lambda v: f"{v:.2f}")
    columns = [Column("split"), Column("queries", right=True), Column("R@1", right=True, show=pct),
               Column("R@5", right=True, show=pct), Column("nDCG@10", right=True, show=pct),
               Column("Hit@1", right=True, show=pct), Column("p50_ms", "p50 ms", right=True, show=ms),
               Column("p95_ms", "p95 ms", right=True, show=ms),
               Column("complete10", "complete@10", right=True, show=pct),
               Column("coverage10", "coverage@10", right=True, show=pct)]
    grid = Grid(columns, title=f"{report.dataset}: {plural(report.tools, 'tool')}, search_type={report.search_type}")
    sizes = [(f"{k}-tool", m) for k, m in report.sizes.items()] if len(report.sizes) > 1 else []
    for label, m in [("all", report.overall), *sizes, *sorted(report.splits.items())]:
        grid.rows.append([label, m.queries, round(m.r1, 2), round(m.r5, 2), round(m.ndcg10, 2), round(m.hit1, 2),
                          round(m.latency_p50_ms, 3), round(m.latency_p95_ms, 3), round(m.complete10, 2),
                          round(m.coverage10, 2)])
    return grid


@app.command("eval")
def eval_command(
    directory: Annotated[Path, typer.Argument(metavar="DIR", help="Directory holding tools.jsonl and queries.jsonl.")],
    type: Annotated[
        str,
        typer.Option(
            "--type", "-t", callback=choice(SEARCH_TYPES), help="auto, keyword, regex, semantic or hybrid (embed extra)."
        ),
    ] = "auto",
    run_out: Annotated[
        Path | None,
        typer.Option(
            "--run-out", callback=check_writable, help='Write {"id", "ranked": [top-10 names]} per query (JSONL).'
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the summary as one JSON object.")] = False,
    split: Annotated[str | None, typer.Option("--split", help="Only queries of this split.")] = None,
    max_queries: Annotated[int | None, typer.Option("--max-queries", help="Only the first N queries.", min=1)] = None,
    compare_with: Annotated[
        str | None,
        typer.Option(
            "--compare",
            callback=_search_type_or_runs,
            help="Also run this search type on the same queries, or score a run file an earlier "
            "--run-out wrote (another version or configuration); print the paired difference.",
        ),
    ] = None,
    learn: Annotated[
        Path | None,
        typer.Option(
            "--learn",
            help='Replay this usage log ({"query", "called": [names], "session"?} per line) into a fresh '
            "usage store first, then evaluate as usual.",
        ),
    ] = None,
    plot: Annotated[
        Path | None,
        typer.Option("--plot", callback=check_writable, help="Write recall@k curves as a PNG (plot extra)."),
    ] = None,
    nl: NlOpt = False,
    as_csv: CsvOpt = False,
) -> None:
    """Rank every query of DIR and print R@1, R@5, nDCG@10, Hit@1 (percent) and latency.
    Output paths, extras and search types are checked before the first query runs.

    \b
    Example: toolscout eval path/to/sealtools --type keyword --run-out runs.jsonl
    """
    try:
        embedder = _check_extras(type, compare_with, plot)
        if type in SEMANTIC_MODES:  # embedding modes need the embed extra, set up here
            report = run_eval(
                directory, search_type=type, split=split, max_queries=max_queries,
                index_factory=index_factory(type, embedder), learn=learn,
            )
        else:
            report = run_eval(directory, search_type=type, split=split, max_queries=max_queries, learn=learn)
        if not as_json:
            emit(_grid(report), nl=nl, as_csv=as_csv)
        if compare_with is not None or plot is not None:
            compare_and_plot(directory, report, compare_with, plot, console=_err() if as_json else _out(), split=split, max_queries=max_queries)
    except ToolscoutError as exc:
        raise fail_with(exc) from None
    if run_out is not None:
        with run_out.open("w", encoding="utf-8") as fh:
            for line in report.run_lines():
                fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    if as_json:
        typer.echo(json.dumps(report.to_dict(), ensure_ascii=False))


def _search_type_or_runs(value: str | None) -> str | None:
    """A search type, or the path of an existing ``--run-out`` file (usage error otherwise)."""
    if value is None or value in SEARCH_TYPES or Path(value).is_file():
        return value
    return choice(SEARCH_TYPES)(value)


def _check_extras(type: str, compare_with: str | None, plot: Path | None) -> Embedder | str:
    """Load what the options need before any query runs: a missing extra found after a
    long first evaluation would waste it. Returns the embedder for the embedding modes."""
    if plot is not None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            raise MissingExtra("--plot", "plot") from None
    if type in SEMANTIC_MODES or compare_with in SEMANTIC_MODES:
        return load_embedder("default")
    return "default"
