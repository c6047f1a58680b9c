"""Tool-poisoning detection: recall on labelled poisoned tools mixed into the real catalogs,
false positives on every real tool, and what detection adds to indexing at 10k tools.

Poisoned tools: benchmarks/poisoning/poisoned_tools.jsonl (written for toolscout from public
attack write-ups; ``label`` names the class, ``split`` says how it was used: ``dev`` was
written first, ``dev2``-``dev4`` were held out, measured on first sight, then used to
generalise the rules; ``heldout`` has never been tuned on). Rug-pull entries carry the
``approved`` content, which is pinned first. Real tools: all six sets under ../shared/data
(read there, never copied). Each poisoned tool comes from its own server (no siblings);
real tools' siblings are the tools of the same set and source.

    .venv/bin/python benchmarks/poisoning.py [--data ../shared/data] [--runs 5] [--no-write]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import DATA, SETS, write_section
from toolscout.catalog import Catalog
from toolscout.model import Annotations, Tool
from toolscout.search.index import ToolIndex
from toolscout.security import Pins, Screen, blocking, findings_of, scan
from toolscout.storage import SQLiteStore as Store

POISONED = Path(__file__).resolve().parent / "poisoning" / "poisoned_tools.jsonl"
PREFIX = "poisoned__"
Group = tuple[str, list[Tool]]


def _tool(row: dict[str, Any], set_name: str = "", **over: Any) -> Tool:
    row = {**row, **over}
    return Tool(
        f"{set_name}__{row['name']}" if set_name else row["name"],  # toolpool repeats the other sets' names
        row.get("description") or "",
        row.get("input_schema") or None,
        source="benchmark",
        original_name=row["name"] if set_name else None,
        category=row.get("source") or None,
        annotations=Annotations.from_mcp(row.get("annotations")),
    )


def poisoned() -> list[tuple[dict[str, Any], Tool, Tool | None]]:
    """``(row, tool, approved version or None)`` per labelled poisoned tool."""
    out = []
    with POISONED.open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            name = PREFIX + row["name"]
            approved = row.get("approved")
            before = _tool(row, name=name, **{"annotations": None, **approved}) if approved else None
            out.append((row, _tool(row, name=name), before))
    return out


def real_tools(data: Path) -> list[tuple[str, Tool]]:
    """``(group key, tool)`` for every line of every set (toolpool repeats the others)."""
    out = []
    for name in SETS:
        path = data / name / "tools.jsonl"
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                out.append((f"{name}/{row.get('source')}", _tool(row, name)))
    return out


def model_facing_texts(data: Path) -> list[Tool]:
    """metatool's ``description_for_model``: texts plugin authors wrote *to* the model, the
    hardest honest text there is (orders, tone, "always", "never")."""
    out = []
    with (data / "metatool" / "tools.jsonl").open(encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            if row.get("description_for_model"):
                out.append(Tool(row["name"], row["description_for_model"]))
    return out


def review(screen: Screen, groups: Iterable[Group]) -> list[Tool]:
    return [t for _, tools in groups for t in screen.review(tools, mode="warn", source="benchmark")]


def pct(part: int, whole: int) -> str:
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


def timed(fn: Any, runs: int) -> tuple[float, float]:
    """Best (wall, CPU) seconds of ``runs`` calls: the machine is shared, best is what the
    work costs."""
    walls, cpus = [], []
    for _ in range(runs):
        gc.collect()
        w, c = time.perf_counter(), time.process_time()
        fn()
        walls.append(time.perf_counter() - w)
        cpus.append(time.process_time() - c)
    return min(walls), min(cpus)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--no-write", action="store_true", help="print only; leave docs/benchmarks.md")
    args = parser.parse_args()
    logging_off()

    labelled = poisoned()
    real = real_tools(args.data)
    rng = random.Random(7)

    # -- the mix: real tools grouped by set/source, each poisoned tool alone --------------
    groups: dict[str, list[Tool]] = defaultdict(list)
    for key, tool in real:
        groups[key].append(tool)
    mixed: list[Group] = [(k, v) for k, v in groups.items()]
    mixed += [(f"poisoned/{row['name']}", [tool]) for row, tool, _ in labelled]
    rng.shuffle(mixed)
    pins = Pins()
    pins.approve((before.name, before) for _, _, before in labelled if before is not None)
    screen = Screen(pins)
    reviewed = review(screen, mixed)
    by_name = {t.name: t for t in reviewed if t.name.startswith(PREFIX)}

    # -- recall ---------------------------------------------------------------------------
    hit, right, total = Counter(), Counter(), Counter()
    split_hit, split_total = Counter(), Counter()
    misses = []
    for row, tool, _ in labelled:
        findings = findings_of(by_name[tool.name])
        caught = blocking(findings)
        label, split = row["label"], row.get("split", "dev")
        total[label] += 1
        hit[label] += caught
        right[label] += any(f.klass == label and f.at_least("medium") for f in findings)
        split_total[split] += 1
        split_hit[split] += caught
        if not caught:
            misses.append(f"{split}/{label}: {row['name']}")
    n_poisoned = sum(total.values())
    recall = sum(hit.values()) / n_poisoned

    # -- false positives --------------------------------------------------------------------
    real_reviewed = [t for t in reviewed if not t.name.startswith(PREFIX)]
    fp_tools = [t for t in real_reviewed if blocking(findings_of(t))]
    fp_codes = Counter(f.code for t in fp_tools for f in findings_of(t) if f.at_least("medium"))
    low_codes = Counter(f.code for t in real_reviewed for f in findings_of(t) if not f.at_least("medium"))
    fp_rate = len(fp_tools) / len(real_reviewed)
    facing = model_facing_texts(args.data)
    facing_fp = sum(blocking(scan(t)) for t in facing)

    # -- time at 10k tools --------------------------------------------------------------------
    flat = [t for _, tools in mixed for t in tools][:10_000]
    ten_k: list[Group] = []
    for key, tools in mixed:
        room = 10_000 - sum(len(g) for _, g in ten_k)
        if room <= 0:
            break
        ten_k.append((key, tools[:room]))
    detect_wall, detect_cpu = timed(lambda: review(Screen(Pins()), ten_k), args.runs)

    def build_index() -> None:
        ToolIndex(Catalog(flat)).refresh()

    index_wall, index_cpu = timed(build_index, max(1, args.runs // 2))
    with_store = Path(os.environ.get("TMPDIR", "/tmp")) / f"toolscout-pins-{os.getpid()}.db"
    try:
        with Store(with_store) as store:
            pin_wall, pin_cpu = timed(lambda: Pins(store).check((t.name, t) for t in flat), 1)  # first sight: one write
            _, repin_cpu = timed(lambda: Pins(store).check((t.name, t) for t in flat), args.runs)
    finally:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{with_store}{suffix}").unlink(missing_ok=True)

    # -- report -------------------------------------------------------------------------------
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        f"Poisoned: {n_poisoned} labelled tools (benchmarks/poisoning/poisoned_tools.jsonl) mixed into "
        f"{len(real_reviewed):,} real tools (all rows of the six sets; toolpool repeats the other five). "
        "A tool counts as caught when it has a high or medium finding.",
        "",
        "| figure | result | target |",
        "|---|---|---|",
        f"| recall, high+medium, all {n_poisoned} poisoned | **{pct(sum(hit.values()), n_poisoned)}** "
        f"({sum(hit.values())}/{n_poisoned}) | >= 95% ({'met' if recall >= 0.95 else 'not met'}) |",
        f"| recall on `heldout` (never tuned on) | {pct(split_hit['heldout'], split_total['heldout'])} "
        f"({split_hit['heldout']}/{split_total['heldout']}) | - |",
        f"| false positives, high+medium, {len(real_reviewed):,} real tools | **{pct(len(fp_tools), len(real_reviewed))}** "
        f"({len(fp_tools)}) | <= 0.5% ({'met' if fp_rate <= 0.005 else 'not met'}) |",
        f"| false positives on {len(facing)} texts written to models (metatool `description_for_model`) | "
        f"{pct(facing_fp, len(facing))} ({facing_fp}) | - |",
        f"| detection at 10,000 tools (scan + in-memory pins), best of {args.runs} | "
        f"**{detect_cpu:.3f} s CPU** ({detect_wall:.3f} s wall) | <= 1 s ({'met' if detect_cpu <= 1.0 else 'not met'}) |",
        f"| keyword index build at the same 10,000, for scale | {index_cpu:.3f} s CPU ({index_wall:.3f} s wall) | - |",
        f"| rug-pull pins in an SQLite store, 10,000 tools | first sight {pin_cpu:.3f} s CPU ({pin_wall:.3f} s wall), "
        f"unchanged {repin_cpu:.3f} s CPU | - |",
        "",
        "Recall by class (caught / with a finding of that class / total) and by split:",
        "",
        "| class | caught | right class |",
        "|---|---|---|",
        *(f"| {label} | {hit[label]}/{total[label]} | {right[label]}/{total[label]} |" for label in sorted(total)),
        "",
        "| split | caught |",
        "|---|---|",
        *(f"| {split} | {split_hit[split]}/{split_total[split]} |" for split in sorted(split_total)),
        "",
        f"Missed: {', '.join(misses) if misses else 'none'}. "
        f"False positives by code: {dict(fp_codes) or 'none'}; low-severity (informational) findings on real "
        f"tools: {dict(low_codes) or 'none'}. CPU time is the measure: this machine is shared "
        f"(load average {load} on {os.cpu_count()} CPUs).",
    ]
    body = "\n".join(lines)
    print(body)
    for tool in fp_tools[:10]:
        worst = findings_of(tool)[0]
        print(f"  FP {tool.category}/{tool.name}: {worst.code} in {worst.field}: {worst.evidence}")
    if not args.no_write:
        write_section("poisoning", "Tool-poisoning detection", "python benchmarks/poisoning.py", body)


def logging_off() -> None:
    """The screen logs each flagged tool; this run reports them in one table instead."""
    import logging

    logging.getLogger("toolscout.security").setLevel(logging.ERROR)


if __name__ == "__main__":
    main()
