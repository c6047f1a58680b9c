"""Embedding speed: model load, throughput, restart from cached vectors, hybrid query latency.

Run: .venv/bin/python benchmarks/embed_speed.py [--texts 1000] [--encoders model,blockwise,int8,static]
        [--main-src DIR]
Needs the ``embed`` extra and ../shared/data (toolpool, 13.6k tools). Vectors are cached in
``~/.cache/toolscout-bench/vectors.db`` (outside the repo) so reruns skip the 2-minute embed.

Query encoders (``enable_hybrid(..., query_encoder=...)``) are compared at the full pool:
new-query latency (wall and CPU time of the process: the model's threads included), how much of it the encoder
takes, repeated-query latency and toolpool nDCG@10 of the same queries. ``--main-src``
names the ``src/`` of another checkout (e.g. ``git archive HEAD src | tar -x -C /tmp/main``)
measured the same way in a subprocess of this run, as the baseline.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from _report import query_encoder, write_section
from search_quality import DEFAULT_DATA
from toolscout.catalog import Catalog
from toolscout.embed.onnx import default_embedder
from toolscout.embed.text import tool_text
from toolscout.eval.dataset import EvalQuery, load_queries, load_tools
from toolscout.eval.metrics import group_positions, ndcg_at
from toolscout.search.dense import DenseBackend
from toolscout.search.hybrid import enable_hybrid
from toolscout.search.index import ToolIndex
from toolscout.storage import SQLiteStore as Store

CACHE = Path.home() / ".cache" / "toolscout-bench" / "vectors.db"


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(values, q))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--texts", type=int, default=1000, help="texts for the cold throughput run")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--encoders", default="model,blockwise,int8,static", help="query encoders to compare at the full pool")
    parser.add_argument("--main-src", type=Path, help="src/ of a baseline checkout, measured in a subprocess")
    parser.add_argument("--no-write", action="store_true", help="print, do not touch docs/benchmarks.md")
    parser.add_argument("--worker", help=argparse.SUPPRESS)  # subprocess mode: one encoder, JSON out
    args = parser.parse_args()
    if args.worker:
        tools = load_tools(DEFAULT_DATA / "toolpool" / "tools.jsonl")
        evalq = load_queries(DEFAULT_DATA / "toolpool" / "queries.jsonl")[: args.queries]
        print(json.dumps(_encoder_run(default_embedder(), tools, evalq, args.worker)))
        return

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

    evalq = load_queries(DEFAULT_DATA / "toolpool" / "queries.jsonl")[: args.queries]
    queries = [q.query for q in evalq]
    model_cpu: list[float] = []
    model_ms = _timed(lambda q: embedder.embed([q]), queries, model_cpu)  # the model alone, one query at a time
    sizes = [n for n in (10_000, len(tools)) if n <= len(tools)]
    latency = {n: _latency(embedder, _subset(tools, n, rng), queries) for n in sizes}
    runs: dict[str, dict] = {}
    if args.main_src:
        runs["main"] = _subprocess_run(args.main_src, "main", args.queries)
    for enc in filter(None, args.encoders.split(",")):
        runs[enc] = _encoder_run(embedder, tools, evalq, enc)
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
clauses) with the default query encoder; a repeated one takes its vectors from the query cache. Each
catalog size has its own index, so every query is new to it once.

Query encoders at {len(tools):,} tools, same run, same {len(queries)} queries (ms; "encoder" = CPU time
inside the query encoder, "rest" = the new query's CPU time minus it; nDCG@10 of these toolpool
queries with AutoCut off, as in evaluations{f"; `main` = {args.main_src}, run in a subprocess" if args.main_src else ""}; the default is `blockwise`):

| query encoder | new query wall p50 / p95 | new query CPU p50 / p95 | encoder CPU p50 | rest CPU p50 / p95 | repeated wall p50 / p95 (CPU p50) | nDCG@10 |
|---|---|---|---|---|---|---|
{"".join(_encoder_row(name, r) for name, r in runs.items())}
"""
    print(body)
    if args.no_write:
        return
    write_section("embed_speed", "Embedding speed and hybrid latency", "python benchmarks/embed_speed.py", body)


def _subset(tools: list, n: int, rng: np.random.Generator) -> list:
    """``n`` tools of the pool (all of it when ``n`` is its size), in pool order."""
    if n >= len(tools):
        return tools
    return [tools[i] for i in sorted(rng.choice(len(tools), n, replace=False))]


def _timed(run: Callable[[str], object], queries: list[str], cpu: list[float] | None = None) -> list[float]:
    """Wall ms per query; with ``cpu``, also the process's CPU ms (the calling thread and the
    model's worker thread), which shared cores do not inflate: what the query costs."""
    out = []
    for q in queries:
        c0, t0 = time.process_time(), time.perf_counter()
        run(q)
        out.append((time.perf_counter() - t0) * 1000)
        if cpu is not None:
            cpu.append((time.process_time() - c0) * 1000)
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


def _encoder_run(embedder: object, tools: list, evalq: list[EvalQuery], encoder: str) -> dict:
    """Timings and toolpool nDCG@10 of hybrid search with ``encoder`` embedding the queries.
    ``main``: the installed toolscout's defaults (a baseline checkout without the option)."""
    index = ToolIndex(Catalog(tools))
    if encoder == "main":
        search = enable_hybrid(index, embedder, store=Store(CACHE), progress=False)  # type: ignore[arg-type]
    else:
        search = enable_hybrid(index, embedder, store=Store(CACHE), progress=False, query_encoder=query_encoder(encoder))  # type: ignore[arg-type]
    index.search("warm up", limit=5)
    dense = search.dense
    encode = getattr(dense, "query_embedder", dense.embedder)
    spent: list[float] = []

    def timed_embed(texts: list[str], _embed: Callable = encode.embed) -> object:
        c0 = time.process_time()
        try:
            return _embed(texts)
        finally:
            spent.append((time.process_time() - c0) * 1000)

    encode.embed = timed_embed  # type: ignore[method-assign]
    queries = [q.query for q in evalq]
    fresh_cpu: list[float] = []
    enc_cpu: list[float] = []
    fresh: list[float] = []
    for q in queries:
        spent.clear()
        fresh += _timed(lambda q: index.search(q, limit=10, mode="hybrid"), [q], fresh_cpu)
        enc_cpu.append(sum(spent))
    rep_cpu: list[float] = []
    repeated = _timed(lambda q: index.search(q, limit=10, mode="hybrid"), queries, rep_cpu)
    ndcg = []
    for q in evalq:
        ranked = [h.tool.name for h in index.search(q.query, limit=10, mode="hybrid", autocut=False).hits]
        groups = q.relevant_groups()
        ndcg.append(ndcg_at(group_positions(ranked, groups), len(groups), 10))
    del encode.embed
    rest = [a - b for a, b in zip(fresh_cpu, enc_cpu, strict=True)]
    return {"fresh": fresh, "fresh_cpu": fresh_cpu, "enc_cpu": enc_cpu, "rest_cpu": rest,
            "repeated": repeated, "repeated_cpu": rep_cpu, "ndcg10": 100 * statistics.mean(ndcg)}


def _subprocess_run(src: Path, encoder: str, queries: int) -> dict:
    """``_encoder_run`` with the toolscout under ``src`` (another checkout), in a subprocess."""
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{Path(__file__).parent}"}
    cmd = [sys.executable, __file__, "--worker", encoder, "--queries", str(queries)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def _encoder_row(name: str, r: dict) -> str:
    p = _pct
    return (
        f"| {name} | {p(r['fresh'], 50):.1f} / {p(r['fresh'], 95):.1f} | {p(r['fresh_cpu'], 50):.1f} / {p(r['fresh_cpu'], 95):.1f} "
        f"| {p(r['enc_cpu'], 50):.1f} | {p(r['rest_cpu'], 50):.1f} / {p(r['rest_cpu'], 95):.1f} "
        f"| {p(r['repeated'], 50):.1f} / {p(r['repeated'], 95):.1f} ({p(r['repeated_cpu'], 50):.1f}) | {r['ndcg10']:.1f} |\n"
    )


def _blob(path: Path, model_id: str) -> tuple[bytes, dict]:
    entry = Store(path).get("embeddings", model_id)
    assert entry is not None
    return entry.value, entry.meta  # type: ignore[return-value]


if __name__ == "__main__":
    main()
