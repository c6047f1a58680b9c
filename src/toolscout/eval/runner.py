"""Run an evaluation set through a :class:`~toolscout.search.index.ToolIndex` and score it.

Every query goes through the same entry as a model's ``find_tools``: parsed into a
:class:`~toolscout.request.FindRequest`, then :meth:`Gateway.find` (same analyzer,
filters, name resolution and exact-name rule a user gets), top 10 kept; AutoCut is off so the metrics see a full top 10 (AutoCut only
shortens a list, its effect is measured separately in benchmarks/search_quality.py).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..catalog_base import BaseCatalog
from ..errors import InvalidRequest
from ..gateway import Gateway
from ..progress import step
from ..request import MAX_LIMIT
from ..search.index import ToolIndex
from ..search.learning import UsageLearner, replay_log
from .dataset import EvalQuery, load_queries, load_tools, load_usage_log
from .metrics import complete_at, coverage_at, group_positions, hit_at, ndcg_at, recall_at

__all__ = ["EvalReport", "Metrics", "QueryRun", "by_size", "evaluate", "run_eval", "size_of"]

DEPTH = 10


@dataclass(slots=True)
class Metrics:
    """Percentages over ``queries`` queries, plus latency in milliseconds."""

    queries: int = 0
    r1: float = 0.0
    r5: float = 0.0
    ndcg10: float = 0.0
    hit1: float = 0.0
    latency_p50_ms: float = 0.0
    latency_p95_ms: float = 0.0
    complete10: float = 0.0
    coverage10: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "queries": self.queries,
            "R@1": round(self.r1, 2),
            "R@5": round(self.r5, 2),
            "nDCG@10": round(self.ndcg10, 2),
            "Hit@1": round(self.hit1, 2),
            "latency_p50_ms": round(self.latency_p50_ms, 3),
            "latency_p95_ms": round(self.latency_p95_ms, 3),
            "complete@10": round(self.complete10, 2),
            "coverage@10": round(self.coverage10, 2),
        }


@dataclass(frozen=True, slots=True)
class QueryRun:
    id: str
    ranked: list[str]
    r1: float
    r5: float
    ndcg10: float
    hit1: float
    ms: float
    split: str | None
    complete10: float = 0.0
    coverage10: float = 0.0
    needed: int = 1
    """How many tools (groups) the request needs: 1 single-tool, 2+ multi-tool."""


@dataclass(slots=True)
class EvalReport:
    dataset: str
    search_type: str
    tools: int
    overall: Metrics
    splits: dict[str, Metrics] = field(default_factory=dict)
    runs: list[QueryRun] = field(default_factory=list)
    sizes: dict[str, Metrics] = field(default_factory=dict)
    """``single`` (requests needing one tool) and ``multi`` (two or more), when present."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "search_type": self.search_type,
            "tools": self.tools,
            **self.overall.to_dict(),
            "splits": {k: v.to_dict() for k, v in sorted(self.splits.items())},
            "by_size": {k: v.to_dict() for k, v in sorted(self.sizes.items())},
        }

    def run_lines(self) -> Iterator[dict[str, Any]]:
        """One ``{"id", "ranked"}`` record per query (the ``--run-out`` format)."""
        for run in self.runs:
            yield {"id": run.id, "ranked": run.ranked}


def _percentile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _aggregate(runs: list[QueryRun]) -> Metrics:
    if not runs:
        return Metrics()
    n = len(runs)
    ms = [r.ms for r in runs]
    return Metrics(
        queries=n,
        r1=100.0 * sum(r.r1 for r in runs) / n,
        r5=100.0 * sum(r.r5 for r in runs) / n,
        ndcg10=100.0 * sum(r.ndcg10 for r in runs) / n,
        hit1=100.0 * sum(r.hit1 for r in runs) / n,
        latency_p50_ms=statistics.median(ms),
        latency_p95_ms=_percentile(ms, 0.95),
        complete10=100.0 * sum(r.complete10 for r in runs) / n,
        coverage10=100.0 * sum(r.coverage10 for r in runs) / n,
    )


def size_of(run: QueryRun) -> str:
    """``single`` for a request that needs one tool, ``multi`` for two or more."""
    return "multi" if run.needed > 1 else "single"


def by_size(runs: list[QueryRun]) -> dict[str, Metrics]:
    """The runs' metrics for single- and multi-tool requests apart (only the sizes present)."""
    parts: dict[str, list[QueryRun]] = {}
    for r in runs:
        parts.setdefault(size_of(r), []).append(r)
    return {k: _aggregate(v) for k, v in sorted(parts.items())}


def score_ranking(query: EvalQuery, ranked: list[str], ms: float = 0.0) -> QueryRun:
    groups = query.relevant_groups()
    pos = group_positions(ranked, groups)
    return QueryRun(
        id=query.id,
        ranked=ranked,
        r1=recall_at(pos, len(groups), 1),
        r5=recall_at(pos, len(groups), 5),
        ndcg10=ndcg_at(pos, len(groups), DEPTH),
        hit1=hit_at(pos, 1),
        ms=ms,
        split=query.split,
        complete10=complete_at(pos, len(groups), DEPTH),
        coverage10=coverage_at(pos, len(groups), DEPTH),
        needed=len(groups),
    )


Ranking = Callable[[str], list[str]]


def evaluate(queries: list[EvalQuery], rank: Ranking, *, dataset: str = "", search_type: str = "", tools: int = 0) -> EvalReport:
    """Score ``rank`` (query text -> names, best first) on ``queries``."""
    runs: list[QueryRun] = []
    with step(f"{dataset or 'eval'}: {len(queries):,} queries ({search_type or 'auto'})", total=len(queries)) as advance:
        for q in queries:
            start = time.perf_counter()
            ranked = rank(q.query)[:DEPTH]
            runs.append(score_ranking(q, ranked, (time.perf_counter() - start) * 1000.0))
            advance(1)
    by_split: dict[str, list[QueryRun]] = {}
    for r in runs:
        if r.split is not None:
            by_split.setdefault(r.split, []).append(r)
    return EvalReport(
        dataset=dataset,
        search_type=search_type,
        tools=tools,
        overall=_aggregate(runs),
        splits={k: _aggregate(v) for k, v in by_split.items()},
        runs=runs,
        sizes=by_size(runs),
    )


def index_ranker(index: ToolIndex, search_type: str, limit: int = DEPTH) -> Ranking:
    """Query text -> ranked names through ``index`` (a request error ranks nothing)."""
    gateway = Gateway(index.catalog, index=index, max_limit=max(limit, MAX_LIMIT))

    def rank(text: str) -> list[str]:
        return [t.name for t in gateway.find({"query": text, "limit": limit, "search_type": search_type}, autocut=False).found]

    return rank


def select_queries(queries: list[EvalQuery], *, split: str | None = None, every: int = 1, max_queries: int | None = None) -> list[EvalQuery]:
    chosen = [q for q in queries if split is None or q.split == split][:: max(every, 1)]
    return chosen[:max_queries] if max_queries is not None else chosen


def run_eval(
    directory: str | Path,
    *,
    search_type: str = "auto",
    limit: int = DEPTH,
    split: str | None = None,
    max_queries: int | None = None,
    every: int = 1,
    index_factory: Callable[[BaseCatalog], ToolIndex] = ToolIndex,
    learn: str | Path | None = None,
    learner: Any = None,
) -> EvalReport:
    """Evaluate toolscout's search on ``DIR/tools.jsonl`` + ``DIR/queries.jsonl``.

    ``split`` keeps only that split's queries, ``every`` every n-th query, ``max_queries``
    the first n after that. ``learn``: a usage log (``{"query", "called", "session"?}``
    per line) replayed into a fresh in-memory usage store before the queries run, which
    are then evaluated exactly as without it (``learner``: that store's
    :class:`~toolscout.search.learning.UsageLearner` settings, default ones otherwise). Raises ``DeclarationError`` for a malformed file and
    ``InvalidRequest`` for a split no query has (a typo would otherwise score all zeros).
    """
    d = Path(directory)
    tools = load_tools(d / "tools.jsonl")
    every_query = load_queries(d / "queries.jsonl")
    if split is not None and not any(q.split == split for q in every_query):
        splits = sorted({q.split for q in every_query if q.split is not None})
        raise InvalidRequest(
            f"no query in {d / 'queries.jsonl'} has split {split!r}",
            hint=f"Splits there: {', '.join(splits)}." if splits else "Its queries have no split field.",
            split=split,
        )
    queries = select_queries(every_query, split=split, every=every, max_queries=max_queries)
    index = index_factory(BaseCatalog(tools))
    index.resolve_mode(search_type)  # an unknown mode fails here, not as empty rankings
    index.refresh()
    ranker = index_ranker(index, search_type, limit)
    if learn is not None:
        log = load_usage_log(learn)
        learned = learner if learner is not None else UsageLearner()
        replay_log(learned, log, ranker)  # what each logged search showed, before learning
        index.usage = learned
    if queries:
        ranker(queries[0].query)  # warm-up: latency figures are for a ready index
    return evaluate(
        queries,
        ranker,
        dataset=d.name,
        search_type=search_type,
        tools=len(tools),
    )
