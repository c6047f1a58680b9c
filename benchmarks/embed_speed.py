"""Embedding speed: model load, throughput, restart from cached vectors, hybrid query latency.

Run: .venv/bin/python benchmarks/embed_speed.py [--texts 1000]
Needs the ``embed`` extra and ../shared/data (toolpool, 13.6k tools). Vectors are cached in
``~/.cache/toolscout-bench/vectors.db`` (outside the repo) so reruns skip the 2-minute embed.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from _report import write_section
from search_quality import DEFAULT_DATA
from toolscout.catalog import Catalog
from toolscout.embed.onnx import default_embedder
from toolscout.embed.text import tool_text
from toolscout.eval.dataset import load_queries, load_tools
from toolscout.search.dense import DenseBackend
from toolscout.search.hybrid import enable_hybrid
from toolscout.search.index import ToolIndex
from toolscout.store import Store

CACHE = Path.home() / ".cache" / "toolscout-bench" / "vectors.db"


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--texts", type=int, default=1000, help="texts for the cold throughput run")
    parser.add_argument("--queries", type=int, default=500)
    args = parser.parse_args()

    t0 = time.perf_counter()
    embedder = default_embedder()
    load_s = time.perf_counter() - t0

    tools = load_tools(DEFAULT_DATA / "toolpool" / "tools.jsonl")
    rng = np.random.default_rng(0)
    sample = [tool_text(tools[i]) for i in rng.choice(len(tools), args.texts, replace=False)]
    t0 = time.perf_counter()
    embedder.embed(sample)
    throughput = args.texts / (time.perf_counter() - t0)

    # Warm the on-disk cache (a no-op after the first run), then time a restart from it.
    DenseBackend(embedder, Store(CACHE), progress=True).rebuild(tools)
    with tempfile.TemporaryDirectory() as tmp:  # restart = new process state, same store file
        store_path = Path(tmp) / "v.db"
        Store(store_path).put("embeddings", embedder.model_id, *_blob(CACHE, embedder.model_id))
        t0 = time.perf_counter()
        dense = DenseBackend(embedder, Store(store_path), progress=False)
        dense.rebuild(tools)
        restart_s = time.perf_counter() - t0
        assert dense.cache.stats["embedded"] == 0, dense.cache.stats

    queries = [q.query for q in load_queries(DEFAULT_DATA / "toolpool" / "queries.jsonl")[: args.queries]]
    model_cpu: list[float] = []
    model_ms = _timed(lambda q: embedder.embed([q]), queries, model_cpu)  # the model alone, one query at a time
    sizes = [n for n in (10_000, len(tools)) if n <= len(tools)]
    latency = {n: _latency(embedder, _subset(tools, n, rng), queries) for n in sizes}
    load_avg = os.getloadavg()[0]
    body = f"""
Default model all-MiniLM-L6-v2 int8 (ONNX, onnxruntime CPU), toolpool catalog ({len(tools):,} tools).
Load average during the run: {load_avg:.1f} on 2 shared cores; the model runs on one thread (its default).

| measure | value |
|---|---|
| model load (hash checks included) | {load_s:.2f} s |
| embedding throughput, {args.texts} tool texts, cold | {throughput:.0f} texts/s |
| restart: rebuild dense index of {len(tools):,} tools from cached vectors | {restart_s:.2f} s |
| model alone, one new query, p50 / p95 (CPU time p50) | {_pct(model_ms, 50):.1f} / {_pct(model_ms, 95):.1f} ms ({_pct(model_cpu, 50):.1f}) |
{"".join(_rows(n, *latency[n]) for n in sizes)}
{len(queries)} toolpool queries, limit 10. A new query embeds the query (and, for a multi-part request, its
clauses) with the model; a repeated one takes its vectors from the query cache. Each catalog size
has its own index, so every query is new to it once.
"""
    print(body)
    write_section("embed_speed", "Embedding speed and hybrid latency", "python benchmarks/embed_speed.py", body)


def _subset(tools: list, n: int, rng: np.random.Generator) -> list:
    """``n`` tools of the pool (all of it when ``n`` is its size), in pool order."""
    if n >= len(tools):
        return tools
    return [tools[i] for i in sorted(rng.choice(len(tools), n, replace=False))]


def _timed(run: Callable[[str], object], queries: list[str], cpu: list[float] | None = None) -> list[float]:
    """Wall ms per query; with ``cpu``, also this thread's CPU ms (the model runs on it), which
    shared cores do not inflate: what the query costs on an idle core."""
    out = []
    for q in queries:
        c0, t0 = time.thread_time(), time.perf_counter()
        run(q)
        out.append((time.perf_counter() - t0) * 1000)
        if cpu is not None:
            cpu.append((time.thread_time() - c0) * 1000)
    return out


def _latency(embedder: object, tools: list, queries: list[str]) -> tuple[list[float], ...]:
    """(new, new CPU, repeated, keyword) query latencies in ms on an index of ``tools``."""
    index = ToolIndex(Catalog(tools))
    enable_hybrid(index, embedder, store=Store(CACHE), progress=False)  # type: ignore[arg-type]
    index.search("warm up", limit=5)
    fresh_cpu: list[float] = []
    fresh = _timed(lambda q: index.search(q, limit=10, mode="hybrid"), queries, fresh_cpu)
    cached = _timed(lambda q: index.search(q, limit=10, mode="hybrid"), queries)
    keyword = _timed(lambda q: index.search(q, limit=10, mode="keyword"), queries)
    return fresh, fresh_cpu, cached, keyword


def _rows(n: int, fresh: list[float], fresh_cpu: list[float], cached: list[float], keyword: list[float]) -> str:
    return (
        f"| {n:,} tools: hybrid, new query (embeds it), p50 / p95 (mean) | {_pct(fresh, 50):.1f} / {_pct(fresh, 95):.1f} ms ({statistics.mean(fresh):.1f}) |\n"
        f"| {n:,} tools: hybrid, new query, CPU time p50 / p95 | {_pct(fresh_cpu, 50):.1f} / {_pct(fresh_cpu, 95):.1f} ms |\n"
        f"| {n:,} tools: hybrid, repeated query (cached vectors), p50 / p95 | {_pct(cached, 50):.1f} / {_pct(cached, 95):.1f} ms |\n"
        f"| {n:,} tools: keyword, p50 / p95 | {_pct(keyword, 50):.1f} / {_pct(keyword, 95):.1f} ms |\n"
    )


def _blob(path: Path, model_id: str) -> tuple[bytes, dict]:
    entry = Store(path).get("embeddings", model_id)
    assert entry is not None
    return entry.value, entry.meta  # type: ignore[return-value]


if __name__ == "__main__":
    main()
