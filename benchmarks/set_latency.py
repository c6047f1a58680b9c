"""Keyword find_tools latency at 10k tools, before and after set-aware ranking, in one run.

Tools: the first 10,000 of ../shared/data/toolpool; queries: its 2,500. Each version (a git
revision checked out into a temporary worktree, or ``HEAD``: this working tree) runs every
query through ``Gateway.find`` (keyword, limit 10: parsing, search, rendering of the
references) in its own subprocess; versions alternate over ``--rounds`` rounds, so a busy
machine slows them alike, and each query keeps its fastest round. Rows: every query, the
requests this checkout splits into several sub-intents (each costs a few sub-searches), and
the single-intent rest (which must cost what it did).

    .venv/bin/python benchmarks/set_latency.py --version before=672a837 --version after=HEAD [--rounds 3] \
        [--section set-latency] [--no-write]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import DATA, write_section
from _trees import checked_out

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from toolscout.search.subintents import split_intents  # noqa: E402

N_TOOLS = 10_000

_CHILD = r"""
import json, sys, time
from toolscout.catalog import Catalog
from toolscout.eval.dataset import load_queries, load_tools
from toolscout.gateway import Gateway
data = sys.argv[1]
tools = load_tools(data + "/tools.jsonl")[: int(sys.argv[2])]
queries = [q.query for q in load_queries(data + "/queries.jsonl")]
gw = Gateway(Catalog(tools))
for q in queries[:50]:
    gw.find({"query": q, "limit": 10, "search_type": "keyword"})
out = []
for q in queries:
    t = time.perf_counter()
    gw.find({"query": q, "limit": 10, "search_type": "keyword"})
    out.append((time.perf_counter() - t) * 1000.0)
print(json.dumps(out))
"""


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def _run(src: Path, data: Path) -> list[float]:
    env = dict(os.environ, PYTHONPATH=str(src))
    done = subprocess.run([sys.executable, "-c", _CHILD, str(data), str(N_TOOLS)], env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    return [float(x) for x in json.loads(done.stdout)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="append", required=True, help="label=revision (HEAD: this working tree)")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--section", default="set-latency")
    parser.add_argument("--title", default="Set-aware ranking: keyword find_tools latency at 10k tools")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    pool = args.data / "toolpool"
    if not pool.is_dir():
        print(f"no data at {pool}: skipped")
        return
    queries = [json.loads(line)["query"] for line in (pool / "queries.jsonl").read_text().splitlines() if line.strip()]
    multi = [len(split_intents(q)) > 1 for q in queries]
    versions = dict(v.split("=", 1) for v in args.version)
    best: dict[str, list[float]] = {}
    with checked_out(versions) as sources:
        for r in range(args.rounds):
            for label, src in sources.items():
                ms = _run(src, pool)
                best[label] = ms if label not in best else [min(a, b) for a, b in zip(best[label], ms, strict=True)]
                print(f"round {r + 1} {label}: p50 {_percentile(ms, 0.5):.2f} ms", flush=True)
    rows = ["| requests | queries | " + " | ".join(f"p50 / p95 ms {k}" for k in best) + " |", "|---|---|" + "---|" * len(best)]
    for label, keep in (("all", [True] * len(queries)), ("single-intent", [not m for m in multi]), ("several sub-intents", multi)):
        cells = []
        for ms in best.values():
            chosen = [x for x, k in zip(ms, keep, strict=True) if k]
            cells.append(f"{_percentile(chosen, 0.5):.2f} / {_percentile(chosen, 0.95):.2f}")
        rows.append(f"| {label} | {sum(keep)} | " + " | ".join(cells) + " |")
    table = "\n".join(rows)
    print(table)
    shown = " ".join(f"--version {k}={v}" for k, v in versions.items())
    body = (
        f"Keyword `find_tools` (Gateway.find, limit 10) over the first {N_TOOLS:,} tools of toolpool, its "
        f"2,500 queries; versions: {', '.join(f'{k} = {v}' for k, v in versions.items())}, alternating over "
        f"{args.rounds} rounds in one run, each query's fastest round kept. \"Several sub-intents\": the requests this "
        "checkout splits (each costs one sub-search per sub-intent besides the whole request).\n\n" + table
    )
    if not args.no_write:
        section = "" if args.section == "set-latency" else f" --section {args.section}"
        write_section(args.section, args.title, f"python benchmarks/set_latency.py {shown} --rounds {args.rounds}{section}", body)


if __name__ == "__main__":
    main()
