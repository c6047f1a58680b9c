"""Core refactor (issue 21): its "must show" figures for two versions, measured in one run.

Keyword ``find_tools`` p50/p95 at 10k tools, session overhead per turn, MCP passthrough,
hybrid new-query latency, and the 1M-tool build time and peak RSS, each for the code
"before" (a git revision, checked out into a temporary worktree, or a directory holding a
checkout) and "after" (this checkout, or ``--after DIR``). Every measurement is a fresh
process running benchmarks/_core_probe.py with ``PYTHONPATH=<tree>/src`` and this venv, so
each version runs from its own sources. The versions alternate (before/after, then
after/before in the next round) for several rounds, and each cell is the median over rounds:
the 2 cores are shared, and load drifts alike for both. The per-round ratios give the noise.

    .venv/bin/python benchmarks/core_before_after.py --before REV_OR_DIR [--after DIR]
        [--rounds 5] [--million-rounds 2] [--quick] [--no-write]

``--quick`` is a smoke run (fewer queries/turns/calls, 2 rounds, 100k tools instead of 1M).
The hybrid figure reads tool vectors from ``~/.cache/toolscout-bench/vectors.db`` (the cache
the other benchmarks share); the first run embeds the 10k tools into it once, with "before".
Data: ../shared/data beside the main checkout (or ``$TOOLSCOUT_DATA``). ``--only keyword,hybrid``
measures some figures alone.

Run it on a quiet machine: with the 2 cores at load 12-15, the same code measured against
itself gave paired ratios from 0.7 to 1.3 (medians over 4 rounds), and one 1M build took 11
minutes instead of about 2. Idle, a full run should take about 10 minutes, most of it the
four 1M builds (``--million-rounds 1`` saves two).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from _report import DATA, write_section  # noqa: E402

PROBE = BENCH / "_core_probe.py"
CACHE = Path.home() / ".cache" / "toolscout-bench" / "vectors.db"
SECTION = ("core-before-after", "Core refactor: before and after (issue 21)")


@dataclass(frozen=True)
class Probe:
    """One figure's child process: what it runs, with how many items in a full and a quick run."""

    name: str
    full: int
    quick: int
    heavy: bool = False  # run only in the first ``--million-rounds`` rounds


PROBES = (
    Probe("keyword", 0, 500),  # 0: all 2,500 toolpool queries
    Probe("session", 2000, 500),
    Probe("passthrough", 300, 100),
    Probe("hybrid", 300, 60),
    Probe("million", 1_000_000, 100_000, heavy=True),
)


@dataclass(frozen=True)
class Row:
    probe: str
    title: str
    unit: str
    digits: int
    get: Callable[[dict[str, Any]], float]
    headline: bool = False


ROWS = (
    Row("keyword", "keyword `find_tools` p50 at 10k tools (CPU)", "ms", 3, lambda r: r["cpu_ms"]["p50"], True),
    Row("keyword", "keyword `find_tools` p95 at 10k tools (CPU)", "ms", 3, lambda r: r["cpu_ms"]["p95"]),
    Row("keyword", "keyword `find_tools` p50 at 10k tools (wall)", "ms", 3, lambda r: r["wall_ms"]["p50"]),
    Row("session", "session overhead per turn at 1,000 tools (CPU)", "µs", 1, lambda r: r["turn_us"], True),
    Row("passthrough", "MCP passthrough overhead, p50 (wall: via gateway - direct)", "ms", 2, lambda r: r["overhead_ms"], True),
    Row("passthrough", "MCP passthrough: gateway process CPU per forwarded call", "ms", 2, lambda r: r["gateway_cpu_ms_per_call"]),
    Row("passthrough", "reference: the upstream call direct, p50 (wall)", "ms", 2, lambda r: r["direct_ms"]["p50"]),
    Row("hybrid", "hybrid `find_tools` new query p50 at 10k tools (process CPU)", "ms", 1, lambda r: r["cpu_ms"]["p50"], True),
    Row("hybrid", "hybrid `find_tools` new query p95 (process CPU)", "ms", 1, lambda r: r["cpu_ms"]["p95"]),
    Row("hybrid", "hybrid `find_tools` new query p50 (wall)", "ms", 1, lambda r: r["wall_ms"]["p50"]),
    Row("hybrid", "hybrid `find_tools` new query p95 (wall)", "ms", 1, lambda r: r["wall_ms"]["p95"]),
    Row("million", "{n} tools: catalog + gateway build to first answer (CPU)", "s", 1, lambda r: r["build_cpu_s"], True),
    Row("million", "{n} tools: the same build (wall)", "s", 1, lambda r: r["build_wall_s"]),
    Row("million", "{n} tools: peak RSS (records, catalog, index, one search)", "MB", 0, lambda r: r["peak_mb"], True),
)


# -- the two trees ---------------------------------------------------------------------------
def _git(args: list[str], cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


def describe(tree: Path) -> str:
    """The commit a tree is at, noting uncommitted changes under src/."""
    try:
        head = _git(["rev-parse", "--short", "HEAD"], tree)
    except subprocess.CalledProcessError:
        return f"{tree} (not a git checkout)"
    dirty = _git(["status", "--porcelain", "--", "src"], tree)
    return head + (" + uncommitted changes in src/" if dirty else "")


def checkout(spec: str, stack: contextlib.ExitStack) -> Path:
    """A directory holding ``spec``: the directory itself when it is a checkout, else a
    temporary worktree of the revision ``spec`` (removed when ``stack`` closes)."""
    path = Path(spec).expanduser()
    if (path / "src" / "toolscout").is_dir():
        return path.resolve()
    commit = _git(["rev-parse", "--verify", f"{spec}^{{commit}}"], ROOT)
    tree = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="core-before-"))) / "tree"
    _git(["worktree", "add", "--detach", str(tree), commit], ROOT)
    stack.callback(subprocess.run, ["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True, check=False)
    return tree


def data_dir() -> Path:
    """../shared/data beside the clone; in a git worktree, beside the main checkout."""
    if os.environ.get("TOOLSCOUT_DATA") or DATA.exists():
        return DATA
    common = Path(_git(["rev-parse", "--path-format=absolute", "--git-common-dir"], ROOT))
    return common.parent.parent / "shared" / "data"


# -- running the probes ----------------------------------------------------------------------
def run_probe(tree: Path, probe: str, n: int, data: Path, work: Path) -> dict[str, Any]:
    env = {**os.environ, "PYTHONPATH": str(tree / "src"), "TOOLSCOUT_DATA": str(data)}
    cmd = [sys.executable, str(PROBE), probe, "--n", str(n), "--cache", str(CACHE)]
    done = subprocess.run(cmd, env=env, cwd=work, capture_output=True, text=True, timeout=3600, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{probe} on {tree} failed ({done.returncode}):\n{done.stderr[-3000:]}")
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if not str(result["module"]).startswith(str(tree / "src")):
        raise SystemExit(f"{probe} imported toolscout from {result['module']}, not from {tree / 'src'}")
    return result


def ensure_vectors(tree: Path, data: Path, work: Path) -> None:
    """Have the 10k tools' vectors in the cache; a marker says a prepare finished (a cache
    another benchmark filled with the whole pool only costs a quick check the first time)."""
    marker = CACHE.with_name(CACHE.name + ".core-10k")
    if CACHE.exists() and marker.exists():
        return
    print(f"embedding the 10k tools once into {CACHE} (minutes, unless cached) ...", flush=True)
    took = run_probe(tree, "hybrid-prepare", 0, data, work)["seconds"]
    marker.write_text(f"the first 10,000 toolpool tools embedded with {tree} in {took:.0f} s\n")
    print(f"  done in {took:.0f} s", flush=True)


# -- the report ------------------------------------------------------------------------------
def _reading(ratios: list[float], same_within: float = 0.01, min_rounds: int = 4) -> str:
    """What the rounds agree on. Under pure noise every round lands on the same side with
    probability 2^(1-n), so fewer than ``min_rounds`` rounds tell nothing about a direction."""
    if all(abs(r - 1) <= same_within for r in ratios):
        return "same (every round within 1%)"
    if len(ratios) < min_rounds:
        return f"{len(ratios)} round(s): too few to tell"
    if all(r > 1 for r in ratios):
        return f"after higher in all {len(ratios)} rounds"
    if all(r < 1 for r in ratios):
        return f"after lower in all {len(ratios)} rounds"
    return "mixed: within noise"


def table(runs: dict[str, dict[str, list[dict[str, Any]]]], million_n: int) -> list[str]:
    lines = [
        "| figure | before | after | after / before | per-round after / before | reading |",
        "|---|---|---|---|---|---|",
    ]
    for row in ROWS:
        before = [row.get(r) for r in runs[row.probe]["before"]]
        after = [row.get(r) for r in runs[row.probe]["after"]]
        if not before or not after:
            continue
        b, a = statistics.median(before), statistics.median(after)
        ratios = [y / x for x, y in zip(before, after, strict=True) if x > 0]
        # The median of the paired ratios: each pair ran back to back, so a change of load
        # between rounds moves both halves of a pair, not one version's median.
        ratio = f"{statistics.median(ratios):.2f}" if ratios else "-"
        title = row.title.format(n=f"{million_n:,}")
        if row.headline:
            title, ratio = f"**{title}**", f"**{ratio}**"
        spread = f"{min(ratios):.2f} - {max(ratios):.2f}" if ratios else "-"
        lines.append(
            f"| {title} | {b:,.{row.digits}f} {row.unit} | {a:,.{row.digits}f} {row.unit} | {ratio} | {spread} | {_reading(ratios)} |"
        )
    return lines


def methods(runs: dict[str, dict[str, list[dict[str, Any]]]], million_n: int) -> list[str]:
    """How each measured figure was taken, one bullet per figure."""
    size = {name: r["before"][0] for name, r in runs.items() if r["before"]}
    notes = {
        "keyword": lambda r: (
            f"- Keyword: `Gateway.find_tools(q, 5, search_type=\"keyword\")` on toolpool's first 10,000 tools, "
            f"{r['queries']} toolpool queries, after one warm-up search (the index build)."
        ),
        "session": lambda r: (
            "- Session: Seal-Tools' first 999 tools and an async no-op, three searches revealed; per turn "
            "`session.tools(\"openai\", record=False)` + `await session.ahandle(\"bench_noop\", {})`, minus the "
            f"no-op alone (benchmarks/request_path.py's method), {r['turns']} turns in 10 blocks, the median block."
        ),
        "passthrough": lambda r: (
            "- MCP passthrough: an SDK client calls a one-tool stdio upstream (benchmarks/_echo_upstream.py) "
            "directly and through `toolscout serve -c` (`call_tool` -> `up_echo`), interleaved call by call, "
            f"{r['calls']} pairs (benchmarks/mcp_gateway.py's method); the gateway process's CPU per forwarded "
            "call is read from /proc, so it does not count waiting for a core."
        ),
        "hybrid": lambda r: (
            "- Hybrid: `Gateway(catalog, embeddings=True, vector_store=<a copy of the vector cache>)` on toolpool's "
            f"first 10,000 tools (their vectors from the cache: none embedded), {r['queries']} toolpool queries, "
            "each new to the process (embedded by the default query encoder), limit 10."
        ),
        "million": lambda r: (
            f"- Build: toolpool replicated to {million_n:,} tools with name suffixes (benchmarks/million.py's "
            "`replicated` catalog), timed from `Catalog(tools)` through `Gateway(catalog)` to the first keyword "
            "`find_tools` answer; peak RSS is the process's VmHWM (interpreter, records, catalog, index, one search)."
        ),
    }
    return [note(size[name]) for name, note in notes.items() if name in size]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", required=True, help="a git revision, or a directory holding a checkout")
    parser.add_argument("--after", type=Path, default=ROOT, help="a directory holding a checkout (default: this one)")
    parser.add_argument("--rounds", type=int, help="interleaved rounds (default 5; 2 with --quick)")
    parser.add_argument("--million-rounds", type=int, help="rounds of the 1M build (default 2; 1 with --quick)")
    parser.add_argument("--quick", action="store_true", help="a smoke run: fewer items, 100k tools instead of 1M")
    parser.add_argument("--only", default="", help="comma-separated figures: " + ",".join(p.name for p in PROBES))
    parser.add_argument("--no-write", action="store_true", help="print only; do not touch docs/benchmarks.md")
    args = parser.parse_args()
    only = set(filter(None, args.only.split(",")))
    if only - {p.name for p in PROBES}:
        parser.error(f"--only: unknown figure(s) {', '.join(sorted(only - {p.name for p in PROBES}))}")
    probes = [p for p in PROBES if not only or p.name in only]
    rounds = args.rounds or (2 if args.quick else 5)
    million_rounds = min(rounds, args.million_rounds or (1 if args.quick else 2))
    command = "python benchmarks/core_before_after.py " + " ".join(sys.argv[1:])
    data = data_dir()
    started, load_start = time.perf_counter(), os.getloadavg()
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {p.name: {"before": [], "after": []} for p in PROBES}
    with contextlib.ExitStack() as stack:
        trees = {"before": checkout(args.before, stack), "after": checkout(str(args.after), stack)}
        revisions = {label: describe(tree) for label, tree in trees.items()}
        print(f"before: {args.before} -> {trees['before']} ({revisions['before']})", flush=True)
        print(f"after:  {trees['after']} ({revisions['after']})", flush=True)
        work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="core-probe-")))
        if any(p.name == "hybrid" for p in probes):
            ensure_vectors(trees["before"], data, work)
        for i in range(rounds):
            order = ("before", "after") if i % 2 == 0 else ("after", "before")
            for probe in probes:
                if probe.heavy and i >= million_rounds:
                    continue
                n = probe.quick if args.quick else probe.full
                for label in order:
                    result = run_probe(trees[label], probe.name, n, data, work)
                    runs[probe.name][label].append(result)
                    shown = {k: v for k, v in result.items() if k != "module"}
                    print(f"round {i + 1} {probe.name:<11} {label:<6} {json.dumps(shown)}", flush=True)
                    if probe.name == "hybrid" and result.get("setup_cpu_s", 0) > 60:  # 10k tools embed in minutes
                        print(f"  warning: hybrid setup took {result['setup_cpu_s']:.0f} s CPU: tools were embedded, not read from the cache", flush=True)
    elapsed = time.perf_counter() - started
    load_end = os.getloadavg()
    million_n = next(p.quick if args.quick else p.full for p in PROBES if p.heavy)
    body = "\n".join(
        [
            f"Before: `{args.before}` = {revisions['before']}; after: {revisions['after']}. "
            f"{rounds} interleaved round{'s' if rounds != 1 else ''}"
            + (f" ({million_rounds} for the {million_n:,}-tool build)" if runs["million"]["before"] else "")
            + ", each figure in a fresh "
            f"process per version and round, the order of the two alternating; each cell is the median over rounds. "
            f"Load average {load_start[0]:.1f} at start, {load_end[0]:.1f} at end (1-minute; 5-minute "
            f"{load_start[1]:.1f} / {load_end[1]:.1f}) on {os.cpu_count()} shared cores. Whole run {elapsed / 60:.1f} min"
            + (" (`--quick`: a smoke run, not the figures to quote)." if args.quick else "."),
            "",
            *table(runs, million_n),
            "",
            "Bold: the figures issue 21 asks for. \"after / before\" is the median over rounds of each round's "
            "ratio (the two runs of a round are back to back); \"per-round\" is the range of those ratios (the run-to-run "
            "noise); \"reading\" says whether every round agrees on a direction (told only from 4 rounds on). CPU figures are the measuring "
            "thread's (`time.thread_time`) or, for hybrid, the process's (`time.process_time`: the query "
            "encoder's threads included); wall figures include waiting for a core on the shared machine.",
            "",
            *methods(runs, million_n),
            "",
            "Only the public API (`toolscout.__all__`) and the CLI are measured; the one internal, the SQLite store "
            "that holds the vector cache, is imported from `toolscout.storage` where a tree has it, else "
            "`toolscout.store`.",
        ]
    )
    print()
    print(body)
    if not args.no_write:
        write_section(*SECTION, command, body)


if __name__ == "__main__":
    main()
