"""Prometheus metrics for ``toolscout serve --metrics``: counted at the surfaces, plus the
stage timings toolscout's code reports (:mod:`toolscout.accounting.telemetry`).

Find and call latency and errors are observed where a request enters and leaves (the
HTTP API's handlers, the MCP server's dispatch); upstream states and tool counts are read
from the aggregator when ``/metrics`` is scraped, so nothing is counted on the hot path.
Each :class:`Metrics` has its own registry, so two gateways in one process never clash.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from ..accounting import telemetry
from ..errors import MissingExtra
from ..meta_tools import FIND_NAMES

__all__ = ["BUCKETS", "STAGE_BUCKETS", "Metrics"]

BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)
"""Seconds: a find takes about a millisecond, a call to a slow upstream up to its timeout."""
STAGE_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 30.0)
"""Seconds: a search stage takes tens of microseconds to milliseconds, an upstream call up to its timeout."""
STATES = ("idle", "connecting", "ready", "failed", "closed", "disabled")


class Metrics:
    """The gateway's counters and histograms in one registry; :meth:`render` is the scrape."""

    def __init__(self, *, aggregator: Any = None, catalog: Any = None, find_cache: Any = None) -> None:
        try:
            from prometheus_client import CollectorRegistry, Counter, Histogram
        except ImportError:  # pragma: no cover - the extra is installed with [all]
            raise MissingExtra("--metrics", "metrics") from None

        self.registry = CollectorRegistry(auto_describe=True)
        self.aggregator = aggregator
        self.catalog = catalog
        self.find_cache = find_cache
        """The gateway's search-result cache (``None`` when off): its hits, misses and hit
        rate are read at scrape time."""
        self.latency = {
            "find": Histogram(
                "toolscout_find_seconds",
                "Time to answer a find (find_tools or POST /v1/find), by surface.",
                ["surface"],
                buckets=BUCKETS,
                registry=self.registry,
            ),
            "call": Histogram(
                "toolscout_call_seconds",
                "Time to answer a tool call (call_tool, a revealed tool, POST /v1/call), by surface.",
                ["surface"],
                buckets=BUCKETS,
                registry=self.registry,
            ),
            "use": Histogram(
                "toolscout_use_seconds",
                "Time to answer use_tool, by surface.",
                ["surface"],
                buckets=BUCKETS,
                registry=self.registry,
            ),
        }
        self.errors = Counter(
            "toolscout_errors",
            "Finds and calls answered with an error, by surface, operation and error code.",
            ["surface", "op", "code"],
            registry=self.registry,
        )
        self.cache_loads = Counter(
            "toolscout_tool_list_cache_loads",
            "Upstream tool lists looked up in the cache at start-up: result=hit or miss.",
            ["result"],
            registry=self.registry,
        )
        self.stages = Histogram(
            "toolscout_stage_seconds",
            "Time spent in each stage of a request (parse, search, embedding, dense, fusion, render, "
            "visibility, validation, approval, credentials, upstream, screening, audit).",
            ["stage"],
            buckets=STAGE_BUCKETS,
            registry=self.registry,
        )
        self.registry.register(_StateCollector(self))
        # Every stage toolscout times (toolscout.accounting.telemetry), for as long as these
        # metrics live: held weakly, so a discarded app stops the timing it turned on.
        telemetry.add_hook(self.observe_stage, weak=True)

    # -- observing --------------------------------------------------------------------
    def observe(self, surface: str, op: str, seconds: float, code: str | None = None) -> None:
        """One answered find/call/use; ``code`` is its error code, if it failed."""
        histogram = self.latency.get(op)
        if histogram is not None:
            histogram.labels(surface).observe(seconds)
        if code:
            self.error(surface, op, code)

    def observe_stage(self, name: str, seconds: float) -> None:
        """One stage of a request ended (the telemetry hook)."""
        self.stages.labels(name).observe(seconds)

    def error(self, surface: str, op: str, code: str) -> None:
        self.errors.labels(surface, op, code).inc()

    def watch_mcp(self, server: Any) -> None:
        """Time every tool call the MCP server dispatches (find_tools, call_tool, use_tool,
        revealed tools), from the dict it answers with. Rewatching replaces, never stacks."""
        dispatch = getattr(server._dispatch, "__wrapped__", server._dispatch)

        async def timed(ctx: Any, params: Any) -> dict[str, Any]:
            started = time.perf_counter()
            raw = await dispatch(ctx, params)
            name = getattr(params, "name", "")
            op = "find" if name in FIND_NAMES else "use" if name == "use_tool" else "call"
            self.observe("mcp", op, time.perf_counter() - started, _mcp_error(op, raw))
            return raw

        timed.__wrapped__ = dispatch  # type: ignore[attr-defined]
        server._dispatch = timed

    def watch_cache(self, aggregator: Any) -> None:
        """Count the aggregator's cache hits and misses when it loads its cached tool lists
        (call before serving: ``load_cached`` runs once, at start-up)."""
        load = getattr(aggregator.load_cached, "__wrapped__", aggregator.load_cached)

        def counted() -> list[str]:
            hits = load()
            if aggregator.cache is not None:
                self.cache_loads.labels("hit").inc(len(hits))
                self.cache_loads.labels("miss").inc(max(0, len(aggregator.upstreams) - len(hits)))
            return hits

        counted.__wrapped__ = load  # type: ignore[attr-defined]
        aggregator.load_cached = counted

    # -- scraping ---------------------------------------------------------------------
    def render(self) -> tuple[bytes, str]:
        """The Prometheus text exposition and its content type."""
        from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

        return generate_latest(self.registry), CONTENT_TYPE_LATEST


def _mcp_error(op: str, raw: Any) -> str | None:
    """The error code in an MCP tool result: toolscout's own, else ``tool_error`` for an
    upstream result flagged ``isError``. A find with no match is not ``isError`` but counts."""
    if not isinstance(raw, dict):
        return None
    structured = raw.get("structuredContent")
    error = structured.get("error") if isinstance(structured, dict) else None
    if isinstance(error, dict) and isinstance(error.get("code"), str):
        return error["code"]
    return "tool_error" if raw.get("isError") and op != "find" else None


class _StateCollector:
    """Upstream states and tool counts, read from the aggregator at scrape time."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def describe(self) -> list[Any]:
        return []  # unchecked collector: its families depend on the configured servers

    def collect(self) -> Iterator[Any]:
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        aggregator, catalog = self.metrics.aggregator, self.metrics.catalog
        if catalog is not None:
            yield GaugeMetricFamily("toolscout_catalog_tools", "Tools in the catalog.", value=len(catalog))
        cache = self.metrics.find_cache
        if cache is not None:
            stats = cache.stats()
            lookups = CounterMetricFamily(
                "toolscout_find_cache_lookups", "Search-result cache lookups: result=hit or miss.", labels=["result"]
            )
            lookups.add_metric(["hit"], float(stats.hits))
            lookups.add_metric(["miss"], float(stats.misses))
            yield lookups
            yield GaugeMetricFamily(
                "toolscout_find_cache_hit_ratio", "Share of searches answered from the result cache.", value=stats.hit_rate
            )
            yield GaugeMetricFamily("toolscout_find_cache_entries", "Entries in the search-result cache.", value=stats.size)
        if aggregator is None:
            return
        state = GaugeMetricFamily(
            "toolscout_upstream_state", "1 for each upstream server's current state.", labels=["server", "state"]
        )
        tools = GaugeMetricFamily("toolscout_upstream_tools", "Tools listed by each upstream server.", labels=["server"])
        for name, row in aggregator.status().items():
            current = str(row.get("state"))
            for s in (*STATES, *(() if current in STATES else (current,))):
                state.add_metric([name, s], 1.0 if s == current else 0.0)
            tools.add_metric([name], float(row.get("tools") or 0))
        yield state
        yield tools
