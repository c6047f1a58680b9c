"""What learning's store writes cost a search and a call (issue 35): before and after in one run.

A learner over an SQLite store records one event per search and one per call. Each version
runs in a fresh process (``PYTHONPATH=<tree>/src``), alternating for several rounds; a round
times 2,000 search+call pairs of 50 sessions with the store and without one (in memory),
and the figure is the difference: what the store's writes add to the request path, per pair.
After the change the events are queued and written by a background thread; the CPU of that
thread is not on the request path and is not counted (``time.thread_time`` of the caller),
the wall time of the pairs is reported too.

    .venv/bin/python benchmarks/usage_writes.py [--before REV] [--rounds 5] [--no-write]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from _report import write_section  # noqa: E402
from _trees import checked_out  # noqa: E402

SECTION = ("usage-writes", "Learning's store writes off the request path (issue 35)")

PROBE = r"""
import json, os, sys, tempfile, time
from toolscout.search.learning import UsageLearner
from toolscout.storage import open_store
n = int(sys.argv[1])
out = {}
with tempfile.TemporaryDirectory() as tmp:
    for label, store in (("memory", None), ("sqlite", open_store(os.path.join(tmp, "c.db")))):
        learner = UsageLearner(store)
        for i in range(200):  # warm-up
            learner.searched(f"w{i}", "send an email to the team", ["send_email", "post_message"])
        cpu, wall = time.thread_time(), time.perf_counter()
        for i in range(n):
            s = f"s{i % 50}"
            learner.searched(s, "send an email to the team", ["send_email", "post_message"])
            learner.called(s, "send_email", True)
        out[label] = {"cpu_us": (time.thread_time() - cpu) / n * 1e6, "wall_us": (time.perf_counter() - wall) / n * 1e6}
        if hasattr(learner, "close"):
            learner.close()
print(json.dumps(out))
"""


def probe(src: Path, n: int) -> dict[str, dict[str, float]]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run([sys.executable, "-c", PROBE, str(n)], capture_output=True, text=True, env=env, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--before", default="059a6b4", help="git revision to compare with (default: the base of issue 35's last part)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args(argv)
    cells: dict[str, dict[str, list[float]]] = {v: {"cpu": [], "wall": []} for v in ("before", "after")}
    with checked_out({"before": args.before, "after": "HEAD"}) as sources:
        for r in range(args.rounds):
            for version in (("before", "after") if r % 2 == 0 else ("after", "before")):
                got = probe(sources[version], args.pairs)
                cells[version]["cpu"].append(got["sqlite"]["cpu_us"] - got["memory"]["cpu_us"])
                cells[version]["wall"].append(got["sqlite"]["wall_us"] - got["memory"]["wall_us"])
                print(f"round {r + 1} {version:6} {json.dumps(got)}")
    med = {v: {k: statistics.median(x) for k, x in c.items()} for v, c in cells.items()}
    rows = [
        "| what the SQLite store adds per search+call pair | before | after |",
        "|---|---|---|",
        f"| CPU of the caller's thread | {med['before']['cpu']:.1f} µs | {med['after']['cpu']:.1f} µs |",
        f"| wall time | {med['before']['wall']:.1f} µs | {med['after']['wall']:.1f} µs |",
    ]
    body = (
        f"Before: {args.before}; after: this checkout. {args.rounds} interleaved rounds of {args.pairs} pairs "
        "(2 events each), each version in a fresh process; medians over rounds of (with an SQLite store) "
        "minus (in memory). After, the events are written by the learner's background thread "
        "(search/usage_writer.py), whose CPU is not on the request path.\n\n" + "\n".join(rows)
    )
    print(body)
    if not args.no_write:
        write_section(*SECTION, f".venv/bin/python benchmarks/usage_writes.py --before {args.before} --rounds {args.rounds}", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
