"""Tool poisoning, first sight: recall per batch and per class on attacks written after the
detector was frozen, false positives on every real tool and on hard negatives, and what
screening tool results adds to a call.

Protocol (docs/security.md#measured): batch N (benchmarks/poisoning/batchN.jsonl) was
written only after the detector was frozen in a commit; ``--record N`` runs it once on that
frozen detector and stores the result in benchmarks/poisoning/first_sight.json (it refuses
to overwrite: first sight happens once). Later runs report the current detector beside the
recorded first-sight figures. Entries with a ``result`` are output poisoning: the tool is
clean, the text it returns is not; they go through the result screen.

Benign sides: every row of the six sets under ../shared/data (read there, never copied),
grouped by set and source (siblings), and benchmarks/poisoning/hard_negatives.jsonl
(legitimate tools that mention keys, files, other tools, the user; and legitimate results).

    .venv/bin/python benchmarks/poisoning_batches.py [--record N] [--no-write] [--calls 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from statistics import quantiles
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import DATA, SETS, write_section
from toolscout.catalog import Catalog
from toolscout.gateway import Gateway
from toolscout.model import CallResult, Tool
from toolscout.request import CallRequest
from toolscout.search.index import ToolIndex
from toolscout.security import Pins, Screen, blocking, findings_of, scan
from toolscout.security.results import ResultScreen, scan_result

HERE = Path(__file__).resolve().parent / "poisoning"
FIRST_SIGHT = HERE / "first_sight.json"


def _tool(row: dict[str, Any], name: str | None = None) -> Tool:
    return Tool(name or row["name"], row.get("description") or "", row.get("input_schema") or None, source="benchmark",
                output_schema=row.get("output_schema") or None)


def batches() -> dict[int, list[dict[str, Any]]]:
    out = {}
    for path in sorted(HERE.glob("batch*.jsonl")):
        n = int(path.stem.removeprefix("batch"))
        out[n] = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return out


def caught(row: dict[str, Any]) -> tuple[bool, list[str]]:
    """Whether ``row`` gets a high or medium finding (its tool, or its result), and the codes."""
    tool = _tool(row, "poisoned__" + row["name"])
    if "result" in row:
        result = CallResult(tool=tool.name, ok=True, content=[{"type": "text", "text": row["result"]}])
        findings = scan_result(result)
    else:
        findings = scan(tool)
    serious = [f.code for f in findings if f.at_least("medium")]
    return bool(serious), serious


def score(rows: list[dict[str, Any]]) -> dict[str, Any]:
    by_class: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    missed = []
    for row in rows:
        hit, _ = caught(row)
        by_class[row["label"]][0] += hit
        by_class[row["label"]][1] += 1
        if not hit:
            missed.append(f"{row['label']}: {row['name']}")
    total = sum(v[1] for v in by_class.values())
    return {"caught": sum(v[0] for v in by_class.values()), "total": total,
            "by_class": {k: v for k, v in sorted(by_class.items())}, "missed": missed}


def real_groups(data: Path) -> list[list[Tool]]:
    groups: dict[str, list[Tool]] = defaultdict(list)
    for name in SETS:
        with (data / name / "tools.jsonl").open(encoding="utf-8") as fh:
            for line in fh:
                row = json.loads(line)
                groups[f"{name}/{row.get('source')}"].append(_tool(row, f"{name}__{row['name']}"))
    return list(groups.values())


def hard_negatives() -> tuple[list[Tool], list[dict[str, Any]]]:
    rows = [json.loads(line) for line in (HERE / "hard_negatives.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()]
    return [_tool(r) for r in rows if "result" not in r], [r for r in rows if "result" in r]


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True,
                              cwd=HERE).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "?"


def pct(a: int, b: int) -> str:
    return f"{100.0 * a / b:.1f}%" if b else "-"


async def result_latency(calls: int) -> tuple[list[float], list[float]]:
    """Per-call wall time of ``Gateway.execute`` on a tool returning a ~2 KB text result,
    without and with result screening, interleaved so machine load hits both alike."""
    page = ("Order 1182 shipped on 2026-03-02 via parcel service; tracking number 1Z999AA10123456784. "
            "The customer asked to leave it at the door. Items: 2x cable, 1x adapter. ") * 12

    def lookup(order_id: str) -> str:
        return page

    catalog = Catalog()
    catalog.add_function(lookup, name="lookup_order")
    plain, screened = Gateway(catalog, learn=False), Gateway(catalog, learn=False)
    screened.screen_results = ResultScreen("warn")
    request = CallRequest("lookup_order", {"order_id": "1182"})
    off, on = [], []
    for _ in range(50):  # warm-up
        await plain.execute(request)
        await screened.execute(request)
    for _ in range(calls):
        for gw, sink in ((plain, off), (screened, on)):
            t = time.perf_counter()
            await gw.execute(request)
            sink.append((time.perf_counter() - t) * 1000)
    return off, on


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--record", type=int, help="record first sight of batch N (once)")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--quick", action="store_true", help="recall and false positives only, no timings (implies --no-write)")
    args = parser.parse_args()
    import logging

    logging.getLogger("toolscout.security").setLevel(logging.ERROR)
    all_batches = batches()
    recorded = json.loads(FIRST_SIGHT.read_text()) if FIRST_SIGHT.exists() else {}
    if args.record is not None:
        key = str(args.record)
        if key in recorded:
            sys.exit(f"batch {key} was already seen at {recorded[key]['commit']}: first sight happens once")
        recorded[key] = {"commit": commit(), **score(all_batches[args.record])}
        FIRST_SIGHT.write_text(json.dumps(recorded, indent=1, ensure_ascii=False) + "\n")
        print(json.dumps(recorded[key], indent=1, ensure_ascii=False))
        return

    # -- false positives -------------------------------------------------------------------
    groups = real_groups(args.data)
    screen = Screen(Pins())
    started = time.process_time()
    reviewed = [t for g in groups for t in screen.review(g, mode="warn", source="benchmark")]
    real_fp = [t for t in reviewed if blocking(findings_of(t))]
    neg_tools, neg_results = hard_negatives()
    neg_fp = [t.name for t in neg_tools if blocking(scan(t))]
    neg_res_fp = [r["name"] for r in neg_results if caught(r)[0]]
    del started

    if args.quick:
        print(f"real FP {len(real_fp)}/{len(reviewed)}; hard negatives {neg_fp} {neg_res_fp}")
        for t in real_fp[:20]:
            w = next(f for f in findings_of(t) if f.at_least("medium"))
            print(f"  FP {t.name}: {w.code} in {w.field}: {w.evidence}")
        for n, rows in all_batches.items():
            sc = score(rows)
            print(f"  batch {n}: {sc['caught']}/{sc['total']} missed {sc['missed']}")
        return

    # -- cost at 10k tools -------------------------------------------------------------------
    flat = [t for t in reviewed][:10_000]
    ten_k: list[list[Tool]] = []
    left = 10_000
    for g in groups:
        if left <= 0:
            break
        ten_k.append(g[:left])
        left -= len(ten_k[-1])
    cpu_scan = min(_cpu(lambda: [Screen(Pins()).review(g, mode="warn") for g in ten_k]) for _ in range(3))
    import toolscout.security.poisoning as detector

    gate = detector.scope_gate
    detector.scope_gate = lambda text, words=None: False  # phrase rules and decoding only, as before scope analysis
    try:
        cpu_rules = min(_cpu(lambda: [Screen(Pins()).review(g, mode="warn") for g in ten_k]) for _ in range(3))
    finally:
        detector.scope_gate = gate
    cpu_index = min(_cpu(lambda: ToolIndex(Catalog(flat)).refresh()) for _ in range(2))
    off, on = asyncio.run(result_latency(args.calls))
    p_off, p_on = quantiles(off, n=100), quantiles(on, n=100)

    # -- report ------------------------------------------------------------------------------
    lines = [
        "Each batch was written after the detector was frozen in the commit named; *first sight* is that "
        "frozen detector on the new batch, before any change; *now* is the current detector "
        "(`benchmarks/poisoning/batchN.jsonl`, recorded in `first_sight.json`). Caught = a high or medium finding.",
        "",
        "| batch | first sight (commit) | now |",
        "|---|---|---|",
    ]
    classes: dict[str, dict[int, str]] = defaultdict(dict)
    for n, rows in all_batches.items():
        now = score(rows)
        first = recorded.get(str(n))
        if first and first.get("dev"):
            seen = f"developed on (frozen after, at {first['commit']})"
        elif first:
            seen = f"**{pct(first['caught'], first['total'])}** ({first['caught']}/{first['total']}, {first['commit']})"
        else:
            seen = "not recorded"
        lines.append(f"| {n} | {seen} | {pct(now['caught'], now['total'])} ({now['caught']}/{now['total']}) |")
        for label, (hit, total) in now["by_class"].items():
            f = first["by_class"].get(label) if first else None
            classes[label][n] = (f"{f[0]}/{f[1]} → {hit}/{total}" if f else f"- → {hit}/{total}")
    numbers = sorted(all_batches)
    lines += ["", "Per class and batch (first sight → now):", "",
              "| class | " + " | ".join(f"batch {n}" for n in numbers) + " |",
              "|---|" + "---|" * len(numbers)]
    for label in sorted(classes):
        lines.append(f"| {label} | " + " | ".join(classes[label].get(n, "") for n in numbers) + " |")
    fp_codes = Counter(f.code for t in real_fp for f in findings_of(t) if f.at_least("medium"))
    lines += [
        "",
        "| benign set | flagged (high+medium) |",
        "|---|---|",
        f"| every real tool in the six sets ({len(reviewed):,}) | **{pct(len(real_fp), len(reviewed))}** ({len(real_fp)}) |",
        f"| hard-negative tools ({len(neg_tools)}: keys, files, other tools, the user) | {pct(len(neg_fp), len(neg_tools))} ({len(neg_fp)}) |",
        f"| hard-negative results ({len(neg_results)}: pages, mails, logs that mention instructions) | "
        f"{pct(len(neg_res_fp), len(neg_results))} ({len(neg_res_fp)}) |",
        "",
        f"Cost: scanning 10,000 real tools {cpu_scan:.3f} s CPU (best of 3), of which scope analysis adds "
        f"{cpu_scan - cpu_rules:.3f} s (phrase rules and decoding alone {cpu_rules:.3f} s); the keyword index build of "
        f"the same tools {cpu_index:.3f} s CPU in this run (scan/index ratio {cpu_scan / cpu_index:.2f}). Result screening, "
        f"`Gateway.execute` on a ~2 KB text result, {args.calls} calls each, interleaved: p50 {p_off[49]:.3f} → "
        f"{p_on[49]:.3f} ms, p95 {p_off[94]:.3f} → {p_on[94]:.3f} ms (none → warn). "
        f"False positives by code: {dict(fp_codes) or 'none'}. Load average "
        f"{', '.join(f'{x:.1f}' for x in os.getloadavg())} on {os.cpu_count()} CPUs.",
    ]
    body = "\n".join(lines)
    print(body)
    for t in real_fp[:15]:
        w = next(f for f in findings_of(t) if f.at_least("medium"))
        print(f"  FP {t.name}: {w.code} in {w.field}: {w.evidence}")
    print("  hard-negative FPs:", neg_fp, neg_res_fp)
    for n, rows in all_batches.items():
        print(f"  batch {n} missed now:", score(rows)["missed"])
    if not args.no_write:
        write_section("poisoning-first-sight", "Tool poisoning: first sight, batch by batch",
                      "python benchmarks/poisoning_batches.py", body)


def _cpu(fn: Any) -> float:
    t = time.process_time()
    fn()
    return time.process_time() - t


if __name__ == "__main__":
    main()
