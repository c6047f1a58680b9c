"""Keyword search at a million tools: query latency of several versions, interleaved.

The million-tool benchmark (``million.py``) also measures builds, memory and restarts, and
needs the storage API of recent versions; this one only asks each version, each in its own
long-lived process, to build the replicated catalog (toolpool's 13.6k tools repeated to
``--n`` with name suffixes) and answer the 2,500 toolpool queries through
``ToolIndex.search(query, limit=5)``, the versions taking turns in chunks of queries, so a
change of load on the shared machine hits every version alike. CPU time is the searching
thread's (``time.thread_time``).

    .venv/bin/python benchmarks/million_latency.py --trees 65f5f88,059a6b4,. [--n 1000000] [--rounds 2]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import DATA, replicate
from _trees import checked_out, take_turns

CHUNK = 100


def _worker(n: int) -> None:
    """Build, then serve chunks of queries from stdin ("<start> <stop>"), one JSON line each."""
    from toolscout.catalog import Catalog
    from toolscout.eval.dataset import load_queries, load_tools
    from toolscout.search.index import ToolIndex

    index = ToolIndex(Catalog(replicate(load_tools(DATA / "toolpool" / "tools.jsonl"), n)))
    index.refresh()
    queries = [q.query for q in load_queries(DATA / "toolpool" / "queries.jsonl")]
    index.search(queries[0], limit=5)
    print(json.dumps({"ready": len(queries)}), flush=True)
    for line in sys.stdin:
        start, stop = map(int, line.split())
        rows = []
        for q in queries[start:stop]:
            c, w = time.thread_time(), time.perf_counter()
            index.search(q, limit=5)
            rows.append(((time.thread_time() - c) * 1000, (time.perf_counter() - w) * 1000))
        print(json.dumps(rows), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trees", default="059a6b4,.", help="revisions (or '.' for this checkout), comma-separated")
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args.n)
        return
    trees = args.trees.split(",")
    load0 = os.getloadavg()[0]
    with checked_out({t: "HEAD" if t == "." else t for t in trees}) as sources:
        workers = {}
        for t in trees:  # one at a time: the builds' peaks do not add up
            env = {**os.environ, "PYTHONPATH": f"{sources[t]}{os.pathsep}{Path(__file__).parent}"}
            w = subprocess.Popen([sys.executable, __file__, "--worker", "--n", str(args.n)], env=env, text=True,
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE)
            assert w.stdout is not None
            total = json.loads(w.stdout.readline())["ready"]
            workers[t] = w
        rows = take_turns(workers, [(s, s + CHUNK) for _ in range(args.rounds) for s in range(0, total, CHUNK)])
    lines = ["| version | CPU p50 / p99 (ms) | wall p50 / p99 (ms) |", "|---|---|---|"]
    for t in trees:
        a = np.asarray(rows[t])
        cpu, wall = a[:, 0], a[:, 1]
        label = "this tree" if t == "." else t
        lines.append(f"| {label} | {np.percentile(cpu, 50):.2f} / {np.percentile(cpu, 99):.2f} | "
                     f"{np.percentile(wall, 50):.2f} / {np.percentile(wall, 99):.2f} |")
    print("\n".join(lines))
    print(f"\n{args.n:,} tools (toolpool replicated), {total} toolpool queries x {args.rounds}, limit 5, "
          f"versions taking turns in chunks of {CHUNK}; load average {load0:.1f} at start, {os.getloadavg()[0]:.1f} at end.")


if __name__ == "__main__":
    main()
