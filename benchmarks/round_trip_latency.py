"""Added latency of a multi-round-trip request (2026-07-28 ``InputRequiredResult``) through
the gateway, against the same request sent to the upstream directly; p50/p95 in one run.

Usage: ``python benchmarks/round_trip_latency.py [--rounds N] [--write]``

The upstream is ``tests/mcp_fixtures/mrtr_upstream.py`` (the mcp SDK, both revisions), the
gateway ``toolscout serve`` fronting it alone, each its own process on a free loopback
port. One SDK client (streamable HTTP, 2026-07-28) measures, interleaved round by round so
both paths see the same machine load:

- ``ask_name``: the tool answers ``input_required`` (one elicitation and a
  ``requestState``), the client retries with the answer and the state (through the
  gateway: the state the gateway signed, unwrapped and checked on the retry);
- ``count``: a plain one-round call, for reference.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import conformance  # the process and port helpers beside this script

ROOT = Path(__file__).resolve().parent.parent
UPSTREAM = ROOT / "tests" / "mcp_fixtures" / "mrtr_upstream.py"


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def _answer(context: Any, params: Any) -> Any:
    import mcp_types as types

    return types.ElicitResult(action="accept", content={"name": "bench"})


async def _measure(direct: str, gateway: str, rounds: int) -> dict[str, dict[str, list[float]]]:
    from mcp import Client

    times: dict[str, dict[str, list[float]]] = {"ask_name": {"direct": [], "gateway": []}, "count": {"direct": [], "gateway": []}}
    async with Client(direct, mode="auto", elicitation_callback=_answer) as d, Client(
        gateway, mode="auto", elicitation_callback=_answer
    ) as g:
        assert d.protocol_version == g.protocol_version == "2026-07-28"
        for i in range(rounds + 5):  # 5 warm-up rounds
            for label, client in (("direct", d), ("gateway", g)) if i % 2 else (("gateway", g), ("direct", d)):
                for tool, args in (("ask_name", {}), ("count", {"peek": True})):
                    started = time.perf_counter()
                    result = await client.call_tool(tool, args)
                    took = time.perf_counter() - started
                    if result.is_error:
                        raise RuntimeError(f"{tool} via {label} failed: {result}")
                    if i >= 5:
                        times[tool][label].append(took)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="toolscout-mrtr-"))
    port = conformance.free_port()
    env = {"PYTHONPATH": str(ROOT / "src")}
    with conformance.process([sys.executable, str(UPSTREAM), str(port)], env=env, log=folder / "upstream.log"):
        conformance.wait_port(port)
        direct = f"http://127.0.0.1:{port}/mcp"
        config = folder / "gw.json"
        config.write_text(json.dumps({"mcpServers": {"up": {"url": direct, "prefix": "", "defer": "never"}}}))
        gw_port = conformance.free_port()
        cmd = [sys.executable, "-c", "from toolscout.cli import app; app()", "serve", "-c", str(config), "--transport",
               "http", "--port", str(gw_port), "--approve-kinds", "none", "--no-cache"]
        with conformance.process(cmd, env=env, log=folder / "gateway.log"):
            conformance.wait_port(gw_port)
            times = asyncio.run(_measure(direct, f"http://127.0.0.1:{gw_port}/mcp", args.rounds))
    rows = []
    for tool, by in times.items():
        d50, d95 = _pct(by["direct"], 0.5), _pct(by["direct"], 0.95)
        g50, g95 = _pct(by["gateway"], 0.5), _pct(by["gateway"], 0.95)
        rows.append(f"| {tool} | {d50:.1f} | {d95:.1f} | {g50:.1f} | {g95:.1f} | {g50 - d50:+.1f} | {g95 - d95:+.1f} |")
        print(f"{tool}: direct p50 {d50:.1f} ms p95 {d95:.1f} ms; gateway p50 {g50:.1f} ms p95 {g95:.1f} ms "
              f"(added p50 {g50 - d50:+.1f} ms, p95 {g95 - d95:+.1f} ms; mean {statistics.mean(by['gateway']) * 1000:.1f} ms)")
    if args.write:
        from _report import write_section  # type: ignore[import-not-found]

        body = "\n".join(
            [
                f"{args.rounds} rounds, interleaved; one SDK client over streamable HTTP at 2026-07-28; upstream"
                " `tests/mcp_fixtures/mrtr_upstream.py`, gateway `toolscout serve` (`--no-cache`, `--approve-kinds none`),"
                " each its own process. `ask_name` is two HTTP round trips (the `input_required` answer, then the retry"
                " with the answer and the `requestState`); times in ms, for the whole request.",
                "",
                "| request | direct p50 | direct p95 | gateway p50 | gateway p95 | added p50 | added p95 |",
                "|---|---|---|---|---|---|---|",
                *rows,
                "",
                f"Load average when it ended: {os.getloadavg()[0]:.1f} (a shared machine: compare the rows, not runs).",
            ]
        )
        write_section("round-trip-latency", "Multi-round-trip requests through the gateway (issue 33)",
                      f"python benchmarks/round_trip_latency.py --rounds {args.rounds} --write", body)


if __name__ == "__main__":
    main()
