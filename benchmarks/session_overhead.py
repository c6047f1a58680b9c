"""Session figures: first-turn tool tokens vs a static list, and per-turn session overhead.

Tools come from the Seal-Tools set in ../shared/data (real schemas); the first 50 and
1,000. Token counts are o200k for every format (an estimate for Claude and Gemini).

    .venv/bin/python benchmarks/session_overhead.py [--no-write]
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

from toolscout import Catalog, Tool
from toolscout.accounting.ledger import count_definitions
from toolscout.gateway import Gateway
from toolscout.session import Session

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import write_section

DATA = Path(os.environ.get("TOOLSCOUT_DATA", "/work/shared/data"))
FORMATS = ("openai", "openai-responses", "anthropic", "gemini", "mcp")
SIZES = (50, 1000)
QUERIES = ("analyze chemical evidence", "book a flight ticket", "translate text to spanish")


def load(n: int) -> list[Tool]:
    tools = []
    with (DATA / "sealtools" / "tools.jsonl").open() as fh:
        for line in fh:
            d = json.loads(line)
            schema = d.get("input_schema")
            tools.append(Tool(d["name"], d.get("description") or "", schema if isinstance(schema, dict) and schema else None))
            if len(tools) == n:
                break
    return tools


async def _noop(args: dict) -> str:
    return "ok"


def gateway(n: int) -> Gateway:
    """An async no-op handler per tool, so timings show the session and gateway, not a
    thread hop (sync handlers run in a worker thread: reported separately)."""
    catalog = Catalog()
    for tool in load(n):
        catalog.add(tool, handler=_noop)
    return Gateway(catalog)


def token_rows() -> tuple[list[str], dict[str, float]]:
    rows = ["| tools | format | static list | first turn | first / static | after 3 searches | after / static |", "|---|---|---|---|---|---|---|"]
    worst: dict[str, float] = {}
    for n in SIZES:
        gw = gateway(n)
        for fmt in FORMATS:
            session = Session(gw)
            static = session.baseline_tokens(fmt)
            first = count_definitions(session.tools(fmt))
            for q in QUERIES:
                session.handle("find_tools", {"query": q})
            after = count_definitions(session.tools(fmt))
            share, after_share = first / static, after / static
            worst[str(n)] = max(worst.get(str(n), 0.0), share)
            rows.append(f"| {n} | {fmt} | {static:,} | {first:,} | {share:.2%} | {after:,} ({len(session.revealed)} tools) | {after_share:.1%} |")
    return rows, worst


def per_turn_us(session: Session, fn, repeats: int = 7, number: int = 300) -> float:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        for _ in range(number):
            fn()
        samples.append((time.perf_counter() - started) / number * 1e6)
    return statistics.median(samples)


def overhead_rows() -> list[str]:
    gw = gateway(1000)
    session = Session(gw)
    for q in QUERIES:
        session.handle("find_tools", {"query": q})
    name = session.revealed[0]
    tool = gw.catalog.get(name)
    args = {k: "x" for k in tool.input_schema.get("required", [])}
    handler = gw.catalog.handler(name)

    loop = asyncio.new_event_loop()
    build = per_turn_us(session, lambda: session.tools("openai"))
    ahandle = per_turn_us(session, lambda: loop.run_until_complete(session.ahandle(name, args)))
    direct = per_turn_us(session, lambda: loop.run_until_complete(gw.acall(name, args)))
    bare = per_turn_us(session, lambda: loop.run_until_complete(handler(args)))
    sync_handle = per_turn_us(session, lambda: session.handle(name, args), number=100)
    gw.catalog.set_handler(name, lambda args: "ok")
    threaded = per_turn_us(session, lambda: loop.run_until_complete(session.ahandle(name, args)))
    find = per_turn_us(session, lambda: session.handle("find_tools", {"query": "analyze chemical evidence"}), number=50)
    loop.close()
    turn = build + ahandle - bare
    return [
        "| step (1,000 tools, 3 searches revealed, OpenAI format) | µs per turn |",
        "|---|---|",
        f"| build the tool list (`session.tools`) | {build:.1f} |",
        f"| handle a call (`await session.ahandle`, incl. gateway validation) | {ahandle:.1f} |",
        f"| of which the gateway's `acall` (validation + run) | {direct:.1f} |",
        f"| of which the session itself (`ahandle` - `acall`) | {ahandle - direct:.1f} |",
        f"| of which the tool itself (async no-op, awaited alone) | {bare:.1f} |",
        f"| **session overhead per turn** (list + handle, minus the tool) | **{turn:.1f}** |",
        f"| sync `session.handle` (reuses one event loop per thread) | {sync_handle:.1f} |",
        f"| `ahandle` with a sync handler (gateway runs it in a worker thread) | {threaded:.1f} |",
        f"| a `find_tools` call (search included) | {find:.1f} |",
    ]


def main() -> None:
    rows, worst = token_rows()
    over = overhead_rows()
    verdict = (
        f"Targets: first turn <= 10% of the static list at 50 tools (worst format {worst['50']:.2%}), "
        f"<= 1% at 1,000 (worst {worst['1000']:.2%}); session overhead <= 1 ms per turn at 1,000 tools."
    )
    body = "\n".join(
        [
            "Seal-Tools schemas, first N tools; o200k counts (an estimate for Claude and Gemini). "
            "First turn = what a session sends before any search (`find_tools` only: no tool is pinned).",
            "",
            *rows,
            "",
            *over,
            "",
            verdict,
        ]
    )
    print(body)
    if "--no-write" not in sys.argv:
        write_section("session_overhead", "Sessions: tool tokens per turn and overhead", "python benchmarks/session_overhead.py", body)


if __name__ == "__main__":
    main()
