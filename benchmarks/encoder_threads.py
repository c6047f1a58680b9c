"""The query encoder on one thread or two: new-query latency of hybrid search, interleaved.

Two hybrid indexes over toolpool (13.6k tools, the same cached tool vectors), one whose query
encoder (the default, ``blockwise``) runs on one onnxruntime thread, one on ``"auto"`` (up to
two threads that sleep between runs, the default). Each query is new to both; they answer it
one after the other, alternating which goes first, so load drifts alike for both. Reports wall
time and the process's CPU time (both threads) per query, on two samples: the first N toolpool
queries, and every 10th query (the sample benchmarks/peers.py times, where more requests are
multi-part and embed several texts).

    .venv/bin/python benchmarks/encoder_threads.py [--queries 300] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import DATA, write_section
from toolscout.catalog import Catalog
from toolscout.embed.quantized import default_query_embedder
from toolscout.eval.dataset import load_queries, load_tools
from toolscout.search.hybrid import enable_hybrid
from toolscout.search.index import ToolIndex
from toolscout.storage import SQLiteStore as Store

CACHE = Path.home() / ".cache" / "toolscout-bench" / "vectors.db"
SETTINGS = {"1 thread": 1, "\"auto\" (up to 2: a call's batches in parallel; the default)": "auto"}


def _index(tools: list, threads: int | str) -> ToolIndex:
    index = ToolIndex(Catalog(tools))
    encoder = default_query_embedder("blockwise", threads=threads)
    enable_hybrid(index, "default", store=Store(CACHE), progress=False, query_encoder=encoder)
    index.search("warm up", limit=10, mode="hybrid")
    return index


def _sample(indexes: dict[str, ToolIndex], queries: list[str]) -> dict[str, tuple[list[float], list[float]]]:
    out: dict[str, tuple[list[float], list[float]]] = {label: ([], []) for label in indexes}
    for i, q in enumerate(queries):
        order = list(indexes) if i % 2 == 0 else list(reversed(indexes))
        for label in order:
            c0, t0 = time.process_time(), time.perf_counter()
            indexes[label].search(q, limit=10, mode="hybrid")
            out[label][0].append((time.perf_counter() - t0) * 1000)
            out[label][1].append((time.process_time() - c0) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    tools = load_tools(DATA / "toolpool" / "tools.jsonl")
    every = [q.query for q in load_queries(DATA / "toolpool" / "queries.jsonl")]
    samples = {f"first {args.queries}": every[: args.queries], "every 10th (peers.py's)": every[::10]}
    load0 = os.getloadavg()[0]
    rows = []
    for name, queries in samples.items():
        indexes = {label: _index(tools, threads) for label, threads in SETTINGS.items()}  # fresh caches
        for label, (wall, cpu) in _sample(indexes, queries).items():
            rows.append(
                f"| {name} | {label} | {np.percentile(wall, 50):.1f} / {np.percentile(wall, 95):.1f} "
                f"| {np.percentile(cpu, 50):.1f} / {np.percentile(cpu, 95):.1f} |"
            )
    body = (
        f"Hybrid search, {len(tools):,} toolpool tools, every query new (embedded), the two settings "
        f"interleaved query by query; load average {load0:.1f} at start, {os.getloadavg()[0]:.1f} at end "
        "on 2 shared cores.\n\n| queries | query encoder threads | wall ms p50 / p95 | process CPU ms p50 / p95 |\n"
        "|---|---|---|---|\n" + "\n".join(rows)
    )
    print(body)
    if not args.no_write:
        write_section("encoder_threads", "Query encoder: one thread or two", "python benchmarks/encoder_threads.py", body)


if __name__ == "__main__":
    main()
