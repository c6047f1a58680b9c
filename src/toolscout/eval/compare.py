"""Comparing two search configurations on the same queries, and recall@k curves as a PNG.

Used by ``toolscout eval --compare`` and ``--plot``; kept apart from the eval runner so
the runner stays a stable contract. Pairing matters: both configurations rank the very same
queries, so the per-query differences (wins, losses, a sign test) say whether a change helps
beyond noise, which two averages alone cannot.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..catalog_base import BaseCatalog
from ..errors import InvalidRequest, MissingExtra
from ..request import SEARCH_TYPES
from ..search.hybrid import enable_hybrid
from ..search.index import ToolIndex
from ..storage import open_store
from ..storage.paths import cache_dir
from .dataset import EvalQuery, load_queries
from .metrics import group_positions, recall_at
from .runner import EvalReport, QueryRun, evaluate, run_eval, select_queries, size_of

if TYPE_CHECKING:
    from ..embed import Embedder

__all__ = ["Comparison", "compare", "compare_and_plot", "index_factory", "plot_recall", "recall_curve", "report_from_runs", "run_pair", "sign_test"]

SEMANTIC_MODES = ("hybrid", "semantic")


DEFAULT_VECTORS = Path("$XDG_CACHE_HOME/toolscout/eval-vectors.db")
"""Stands for :func:`default_vectors`, read when an index is made: a path fixed at import
time would ignore an ``XDG_CACHE_HOME`` set later (and did)."""


def default_vectors() -> Path:
    """``eval-vectors.db`` in the user's cache directory (``$XDG_CACHE_HOME/toolscout``)."""
    return cache_dir() / "eval-vectors.db"


def index_factory(
    search_type: str, embedder: Embedder | str = "default", store_path: str | Path | None = DEFAULT_VECTORS
) -> Callable[[BaseCatalog], ToolIndex]:
    """A ToolIndex factory for ``run_eval``: adds the embedding modes when they are asked for.

    Vectors are cached in ``store_path`` (default under ``$XDG_CACHE_HOME/toolscout``, else ``~/.cache/toolscout``), so a second
    evaluation of the same data embeds nothing; ``None`` keeps them in memory only.
    """
    def make(catalog: BaseCatalog) -> ToolIndex:
        index = ToolIndex(catalog)
        if search_type in SEMANTIC_MODES:
            path = default_vectors() if store_path == DEFAULT_VECTORS else store_path
            store = open_store(path) if path else None
            enable_hybrid(index, embedder, store=store)
        return index

    return make


def run_pair(directory: str | Path, type_a: str, type_b: str, **options: Any) -> tuple[EvalReport, EvalReport, Comparison]:
    """Evaluate two search types on the same queries of ``directory`` and compare them."""
    a = run_eval(directory, search_type=type_a, index_factory=index_factory(type_a), **options)
    b = run_eval(directory, search_type=type_b, index_factory=index_factory(type_b), **options)
    return a, b, compare(a, b, type_a, type_b)


@dataclass(slots=True)
class Comparison:
    """Per-split mean nDCG@10 of A and B (percent) with paired wins/losses and a sign test."""

    label_a: str
    label_b: str
    rows: list[dict[str, Any]]

    def to_dict(self) -> dict[str, Any]:
        return {"a": self.label_a, "b": self.label_b, "rows": self.rows}


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact sign test p-value (ties dropped)."""
    n = wins + losses
    if n == 0:
        return 1.0
    k = min(wins, losses)
    tail = sum(math.comb(n, i) for i in range(k + 1)) / 2**n
    return min(1.0, 2 * tail)


def compare(a: EvalReport, b: EvalReport, label_a: str = "A", label_b: str = "B") -> Comparison:
    """Pair the runs of ``a`` and ``b`` by query id (both must cover the same queries).

    Rows: every query, single- and multi-tool requests apart (when both occur), then each
    split. Besides nDCG@10 (paired wins, losses, sign test) each row has both sides'
    complete@10 and coverage@10 (``complete@10 A`` ...): the share of requests whose every
    needed tool is in the top 10, and the share of needed tools there."""
    b_runs = {r.id: r for r in b.runs}
    groups: dict[str, list[tuple[QueryRun, QueryRun]]] = {"all": []}
    sizes: dict[str, list[tuple[QueryRun, QueryRun]]] = {}
    for run in a.runs:
        other = b_runs.get(run.id)
        if other is None:
            continue
        pair = (run, other)
        groups["all"].append(pair)
        sizes.setdefault(f"{size_of(run)}-tool", []).append(pair)
        if run.split is not None:
            groups.setdefault(run.split, []).append(pair)
    ordered = [("all", groups.pop("all"))]
    if len(sizes) > 1:
        ordered += sorted(sizes.items())
    ordered += sorted(groups.items())
    rows = []
    for split, pairs in ordered:
        n = len(pairs)
        wins = sum(1 for x, y in pairs if y.ndcg10 > x.ndcg10 + 1e-9)
        losses = sum(1 for x, y in pairs if x.ndcg10 > y.ndcg10 + 1e-9)

        def mean(values: Sequence[float], n: int = n) -> float:
            return 100 * sum(values) / n if n else 0.0

        rows.append(
            {
                "split": split,
                "queries": n,
                label_a: mean([x.ndcg10 for x, _ in pairs]),
                label_b: mean([y.ndcg10 for _, y in pairs]),
                "delta": mean([y.ndcg10 - x.ndcg10 for x, y in pairs]),
                "b_wins": wins,
                "b_losses": losses,
                "p_sign": sign_test(wins, losses),
                "R@1 A": mean([x.r1 for x, _ in pairs]),
                "R@1 B": mean([y.r1 for _, y in pairs]),
                "complete@10 A": mean([x.complete10 for x, _ in pairs]),
                "complete@10 B": mean([y.complete10 for _, y in pairs]),
                "coverage@10 A": mean([x.coverage10 for x, _ in pairs]),
                "coverage@10 B": mean([y.coverage10 for _, y in pairs]),
            }
        )
    return Comparison(label_a, label_b, rows)


def recall_curve(report: EvalReport, queries: Sequence[EvalQuery], ks: Sequence[int] = tuple(range(1, 11))) -> list[float]:
    """Mean recall@k (percent) for each k, from the report's rankings."""
    by_id = {q.id: q for q in queries}
    totals = [0.0] * len(ks)
    n = 0
    for run in report.runs:
        q = by_id.get(run.id)
        if q is None:
            continue
        groups = q.relevant_groups()
        pos = group_positions(run.ranked, groups)
        for i, k in enumerate(ks):
            totals[i] += recall_at(pos, len(groups), k)
        n += 1
    return [100 * t / n if n else 0.0 for t in totals]


def plot_recall(curves: Mapping[str, Sequence[float]], path: str | Path, *, title: str = "", ks: Sequence[int] = tuple(range(1, 11))) -> Path:
    """Write recall@k curves (one line per configuration) as a PNG (needs the ``plot`` extra)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        raise MissingExtra("Plotting recall curves", "plot") from exc
    fig, ax = plt.subplots(figsize=(6, 4), dpi=120)
    for label, values in curves.items():
        ax.plot(list(ks), list(values), marker="o", label=label)
    ax.set_xlabel("k")
    ax.set_ylabel("recall@k (%)")
    ax.set_ylim(0, 100)
    ax.set_xticks(list(ks))
    ax.grid(alpha=0.3)
    ax.set_title(title or "recall@k")
    ax.legend()
    out = Path(path)
    fig.tight_layout()
    fig.savefig(out, format="png")
    plt.close(fig)
    return out


def report_from_runs(directory: str | Path, runs_path: str | Path, **options: Any) -> EvalReport:
    """Score a ``--run-out`` file against DIR's queries, as if it had just been ranked.

    Rankings saved by another version or configuration can then be paired with a fresh run.
    A query the file lacks counts as ranking nothing; ``InvalidRequest`` if no id matches.
    """
    queries = select_queries(
        load_queries(Path(directory) / "queries.jsonl"), split=options.get("split"), max_queries=options.get("max_queries")
    )
    ranked: dict[str, list[str]] = {}
    try:
        with Path(runs_path).open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    row = json.loads(line)
                    ranked[str(row["id"])] = [str(n) for n in row.get("ranked") or []]
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InvalidRequest(
            f"cannot read run file {runs_path}: {exc}", hint='Pass a file written by --run-out: one {"id", "ranked"} per line.'
        ) from None
    if not any(q.id in ranked for q in queries):
        raise InvalidRequest(
            f"no query id of {directory} is in {runs_path}", hint="Compare run files made from the same data set and split."
        )
    order = iter(queries)  # evaluate ranks the queries in order; ids, not texts, key the file
    report = evaluate(queries, lambda _text: ranked.get(next(order).id, []))
    report.search_type = Path(runs_path).name
    return report


def compare_and_plot(
    directory: str | Path,
    report: EvalReport,
    other_type: str | None,
    plot_path: Path | None,
    *,
    console: Any,
    **options: Any,
) -> None:
    """The ``--compare`` / ``--plot`` part of ``toolscout eval`` (prints with ``console``)."""
    from rich.table import Table

    reports = {report.search_type: report}
    if other_type is not None:
        if other_type in SEARCH_TYPES:
            other = run_eval(directory, search_type=other_type, index_factory=index_factory(other_type), **options)
            label = other_type if other_type != report.search_type else f"{other_type} (2nd run)"
        else:
            other = report_from_runs(directory, other_type, **options)
            label = Path(other_type).name
        reports[label] = other
        cmp = compare(report, other, report.search_type, label)
        sets = Table(title=f"R@1, complete@10, coverage@10: {cmp.label_a} (A) vs {cmp.label_b} (B)")
        for col in ("split", "queries", "R@1 A", "R@1 B", "complete@10 A", "complete@10 B", "coverage@10 A", "coverage@10 B"):
            sets.add_column(col, justify="left" if col == "split" else "right")
        for row in cmp.rows:
            sets.add_row(row["split"], str(row["queries"]), *(f"{row[k]:.1f}" for k in (
                "R@1 A", "R@1 B", "complete@10 A", "complete@10 B", "coverage@10 A", "coverage@10 B")))
        console.print(sets)
        table = Table(title=f"nDCG@10: {cmp.label_a} vs {cmp.label_b}, same queries (paired)")
        for col in ("split", "queries", cmp.label_a, cmp.label_b, "delta", "wins", "losses", "sign-test p"):
            table.add_column(col, justify="left" if col == "split" else "right")
        for row in cmp.rows:
            table.add_row(
                row["split"], str(row["queries"]), f"{row[cmp.label_a]:.1f}", f"{row[cmp.label_b]:.1f}",
                f"{row['delta']:+.1f}", str(row["b_wins"]), str(row["b_losses"]), f"{row['p_sign']:.3g}",
            )
        console.print(table)
    if plot_path is not None:
        split, max_queries = options.get("split"), options.get("max_queries")
        queries = select_queries(load_queries(Path(directory) / "queries.jsonl"), split=split, max_queries=max_queries)
        curves = {label: recall_curve(r, queries) for label, r in reports.items()}
        out = plot_recall(curves, plot_path, title=f"{Path(directory).name}: recall@k")
        console.print(f"wrote {out}", markup=False)
