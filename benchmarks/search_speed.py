"""Keyword search speed and memory: find p50/p99 at 10k tools, p50 at 100k, build, RSS.

Tools come from ../shared/data/toolpool (13.6k real tools); 10k is its first 10,000 and
100k replicates it with name suffixes (``name__r1``...). Queries are toolpool's 2,500. Each
query goes through ``ToolIndex.search`` (mask, exact-name check, BM25F, AutoCut), which is
what ``find_tools`` adds its rendering to. Memory is measured in a fresh subprocess so this
process's own data does not count.

    .venv/bin/python benchmarks/search_speed.py [--data ../shared/data] [--no-write]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import replicate, write_section
from toolscout.catalog import Catalog
from toolscout.eval.dataset import load_queries, load_tools
from toolscout.model import Tool
from toolscout.search.index import ToolIndex
from toolscout.storage import SQLiteStore as Store

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def _pair(wall: list[float], cpu: list[float], q: float) -> str:
    return f"{percentile(wall, q):.3f} ms wall / {percentile(cpu, q):.3f} ms CPU"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def time_queries(index: ToolIndex, queries: list[str], limit: int = 5) -> tuple[list[float], list[float]]:
    """Wall and CPU (this thread) milliseconds per query. CPU time is what the search itself
    costs; wall time adds whatever else the shared machine was running at that moment."""
    index.search(queries[0], limit=limit)  # warm-up
    wall, cpu = [], []
    for q in queries:
        w, c = time.perf_counter(), time.thread_time()
        index.search(q, limit=limit)
        cpu.append((time.thread_time() - c) * 1000.0)
        wall.append((time.perf_counter() - w) * 1000.0)
    return wall, cpu


def build(tools: list[Tool]) -> tuple[ToolIndex, float, float]:
    catalog = Catalog(tools)
    gc.collect()
    w, c = time.perf_counter(), time.process_time()
    index = ToolIndex(catalog)
    index.refresh()
    return index, time.perf_counter() - w, time.process_time() - c


_RSS_CHILD = """
import gc, json, sys, time
from toolscout.catalog import Catalog
from toolscout.eval.dataset import load_tools
from toolscout.search.index import ToolIndex
from toolscout.storage import SQLiteStore as Store
sys.path.insert(0, {bench!r})
from _report import replicate
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
base = rss()
tools = replicate(load_tools({path!r}), {n})
catalog = Catalog(tools)
del tools
index = ToolIndex(catalog)
index.search("send an email", limit=5)
gc.collect()
print(json.dumps({{"baseline_mb": base, "rss_mb": rss(), "tools": len(catalog)}}))
"""


def measure_rss(path: Path, n: int) -> dict[str, float]:
    code = _RSS_CHILD.format(bench=str(Path(__file__).resolve().parent), path=str(path), n=n)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--no-write", action="store_true", help="print only; do not touch docs/benchmarks.md")
    args = parser.parse_args()
    pool = args.data / "toolpool"
    tools = load_tools(pool / "tools.jsonl")
    queries = [q.query for q in load_queries(pool / "queries.jsonl")]

    rows: list[tuple[str, str, str]] = []
    load_before = os.getloadavg()[0]
    index10, build10, build10_cpu = build(replicate(tools, 10_000))
    wall10, cpu10 = time_queries(index10, queries)
    rows.append(("find p50 at 10k tools", _pair(wall10, cpu10, 0.5), "<= 1 ms"))
    rows.append(("find p99 at 10k tools", _pair(wall10, cpu10, 0.99), "<= 5 ms"))
    rows.append(("build at 10k tools, cold (analyse + BM25F matrix)", f"{build10:.2f} s wall / {build10_cpu:.2f} s CPU", "<= 2 s"))

    # Cold start from a snapshot in the store (what a restart with an unchanged catalog does).
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(Path(tmp) / "snapshots.db")
        ToolIndex(index10.catalog, snapshots=store).refresh()  # builds and saves
        w, c = time.perf_counter(), time.process_time()
        ToolIndex(index10.catalog, snapshots=store).refresh()
        restore_wall, restore_cpu = time.perf_counter() - w, time.process_time() - c
        store.close()
    rows.append(("index ready from a store snapshot at 10k (restart, same catalog)", f"{restore_wall:.3f} s wall / {restore_cpu:.3f} s CPU", "-"))

    # Incremental update: add 10 tools to the 10k catalog, time the next search (it rebuilds).
    extra = [t.replace(name=f"{t.name}__new") for t in tools[:10]]
    index10.catalog.extend(extra)
    w, c = time.perf_counter(), time.process_time()
    index10.search("send an email", limit=5)
    rows.append((
        "first search after adding 10 tools at 10k (incremental rebuild)",
        f"{(time.perf_counter() - w) * 1000:.0f} ms wall / {(time.process_time() - c) * 1000:.0f} ms CPU",
        "-",
    ))
    del index10
    gc.collect()

    index100, build100, build100_cpu = build(replicate(tools, 100_000))
    wall100, cpu100 = time_queries(index100, queries)
    rows.append(("find p50 at 100k tools", _pair(wall100, cpu100, 0.5), "<= 10 ms"))
    rows.append(("find p99 at 100k tools", _pair(wall100, cpu100, 0.99), "-"))
    rows.append(("build at 100k tools", f"{build100:.2f} s wall / {build100_cpu:.2f} s CPU", "-"))
    start = time.perf_counter()
    index100.suggest("send_emial")
    suggest_build = time.perf_counter() - start
    start = time.perf_counter()
    for q in ("get_wether", "translate text", "stock_quote"):
        index100.suggest(q)
    rows.append(("did-you-mean at 100k (first call builds trigrams)", f"{(time.perf_counter() - start) / 3 * 1000:.1f} ms (build {suggest_build:.2f} s)", "-"))
    del index100
    gc.collect()

    mem = measure_rss(pool / "tools.jsonl", 100_000)
    rows.append(("RSS with 100k tools loaded + indexed (fresh process)", f"{mem['rss_mb']:.0f} MB (interpreter + imports {mem['baseline_mb']:.0f} MB)", "<= 300 MB"))

    body = "| measure | value | target |\n|---|---|---|\n" + "\n".join(f"| {a} | {b} | {c} |" for a, b, c in rows)
    body += (
        f"\n\nQueries: the {len(queries)} toolpool queries, limit 5, through `ToolIndex.search` "
        "(filter mask, exact-name check, BM25F, AutoCut). 100k = toolpool replicated with name "
        "suffixes. Times are wall / CPU of the searching thread: the machine is shared (load "
        f"average {load_before:.1f} at start, {os.getloadavg()[0]:.1f} at end, {os.cpu_count()} CPUs), "
        "so wall-time tails include waiting for a core; CPU time is the search's own cost."
    )
    print(body)
    if not args.no_write:
        write_section("search-speed", "Keyword search speed and memory", "python benchmarks/search_speed.py", body)


if __name__ == "__main__":
    main()
