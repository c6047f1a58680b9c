"""CPU to scan a 10,000-tool catalog for tool poisoning: an earlier version against this one.

The catalog: the first 10,000 real tools of the six sets under ../shared/data (read there,
never copied), grouped by set and source as an upstream lists them (a group's tools are
each other's siblings), each group through ``Screen(Pins()).review(..., mode="warn")``: what
a gateway does to every upstream at each refresh. Skips cleanly when the data is absent.

Both versions run in one invocation, alternately, each in its own process with its own
sources first on ``sys.path`` (the earlier one is ``git archive``-d into a temporary folder),
so machine load hits both alike. Each process loads the tools, scans once to compile the
rules (not counted), then reports the CPU time (``time.process_time``) of its first scan
after that and the best of ``--repeat``. Both versions' findings are compared too: the
speedup must not change what is found.

    .venv/bin/python benchmarks/scan_speed.py [--before 672a837] [--rounds 3] [--no-write]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import DATA, SETS, write_section

ROOT = Path(__file__).resolve().parents[1]
TOOLS = 10_000

_CHILD = r"""
import hashlib, json, sys, time
from collections import defaultdict
from pathlib import Path
from toolscout.model import Tool
from toolscout.security import Pins, Screen, findings_of

data, sets, limit, repeat = Path(sys.argv[1]), sys.argv[2].split(","), int(sys.argv[3]), int(sys.argv[4])
groups = defaultdict(list)
for name in sets:
    with (data / name / "tools.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            groups[f"{name}/{row.get('source')}"].append(Tool(
                f"{name}__{row['name']}", row.get("description") or "", row.get("input_schema") or None,
                source="benchmark", output_schema=row.get("output_schema") or None))
catalog, left = [], limit
for group in groups.values():
    if left <= 0:
        break
    catalog.append(group[:left])
    left -= len(catalog[-1])

def scan():
    return [Screen(Pins()).review(g, mode="warn") for g in catalog]

scan()  # compiles the rules: not counted
times = []
for _ in range(repeat):
    start = time.process_time()
    reviewed = scan()
    times.append(time.process_time() - start)
digest = hashlib.sha256()
flagged = 0
for group in reviewed:
    for tool in group:
        found = [(f.code, f.severity, f.field, f.evidence) for f in findings_of(tool)]
        flagged += bool(found)
        digest.update(json.dumps([tool.name, found]).encode())
print(json.dumps({"first": times[0], "best": min(times), "tools": sum(map(len, catalog)),
                  "flagged": flagged, "digest": digest.hexdigest()}))
"""


def _run(src: Path, repeat: int) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONHASHSEED": "0"}
    out = subprocess.run([sys.executable, "-c", _CHILD, str(DATA), ",".join(SETS), str(TOOLS), str(repeat)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="672a837", help="the earlier version: a git revision")
    parser.add_argument("--rounds", type=int, default=3, help="alternating runs of each version")
    parser.add_argument("--repeat", type=int, default=3, help="scans per run (the best one is reported)")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    if not all((DATA / name / "tools.jsonl").exists() for name in SETS):
        print(f"skipped: the evaluation sets are not under {DATA}")
        return
    with tempfile.TemporaryDirectory(prefix="scan-before-") as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.before, "src"], capture_output=True, check=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        versions = {"before": Path(tmp) / "src", "after": ROOT / "src"}
        runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
        for i in range(args.rounds):
            for name in ("before", "after") if i % 2 == 0 else ("after", "before"):
                runs[name].append(_run(versions[name], args.repeat))
                print(name, runs[name][-1])
    load = os.getloadavg()
    first = {k: median(r["first"] for r in v) for k, v in runs.items()}
    best = {k: min(r["best"] for r in v) for k, v in runs.items()}
    same = {r["digest"] for v in runs.values() for r in v}
    tools, flagged = runs["after"][0]["tools"], runs["after"][0]["flagged"]
    body = (
        f"{tools:,} real tools (the first of the six sets, grouped by source as upstreams list them), each group "
        f"through `Screen(Pins()).review(mode='warn')`; CPU time (`process_time`), {args.rounds} alternating runs "
        f"of each version in its own process, the rules compiled before timing. Before: `{args.before}`.\n\n"
        "| figure | before | after | ratio |\n|---|---|---|---|\n"
        f"| CPU of a scan, median of the runs' first | {first['before']:.3f} s | **{first['after']:.3f} s** | "
        f"{first['after'] / first['before']:.2f} |\n"
        f"| CPU of a scan, best of {args.rounds * args.repeat} | {best['before']:.3f} s | **{best['after']:.3f} s** | "
        f"{best['after'] / best['before']:.2f} |\n\n"
        f"Findings: {'identical' if len(same) == 1 else 'DIFFERENT'} in both versions ({flagged} tools flagged). "
        f"Target <= 1 s of CPU: {'met' if best['after'] <= 1.0 else 'not met'}. "
        f"Load average at the end: {load[0]:.1f}, {load[1]:.1f}, {load[2]:.1f} on {os.cpu_count()} CPUs."
    )
    print(body)
    if not args.no_write:
        write_section("scan-speed", "Tool-poisoning scan of a 10,000-tool catalog: before and after (issue 31)",
                      "python benchmarks/scan_speed.py", body)


if __name__ == "__main__":
    main()
