"""Added latency of the transparent gateway: a relayed sampling request and a resource read,
directly against an upstream and through ``toolscout serve``, p50/p95 in one run.

Usage: ``python benchmarks/relay_latency.py [--rounds N] [--write]``

The upstream is the MCP conformance suite's fixture server (see benchmarks/conformance.py:
``../shared/conformance``, installed into a temporary folder). One SDK client (streamable
HTTP, protocol 2025-11-25, a sampling callback that answers at once) measures, interleaved
round by round so both paths see the same machine load:

- ``test_sampling``: a tool call during which the server asks the client's model (one
  server-to-client request relayed back through the gateway to the calling client);
- ``resources/read test://static-text``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import conformance  # the fixture and gateway helpers beside this script


async def _answer(context: Any, params: Any) -> Any:
    import mcp_types as types

    return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="ok"), model="bench")


def _pct(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000


async def measure(direct: str, gateway: str, rounds: int) -> dict[str, dict[str, list[float]]]:
    from mcp import Client

    times: dict[str, dict[str, list[float]]] = {
        op: {"direct": [], "gateway": []} for op in ("sampling call", "resource read")
    }
    async with Client(direct, mode="legacy", sampling_callback=_answer) as d, Client(
        gateway, mode="legacy", sampling_callback=_answer
    ) as g:
        clients = {"direct": d, "gateway": g}
        for warm in range(rounds + 5):
            for path, client in clients.items():
                start = time.perf_counter()
                result = await client.call_tool("test_sampling", {"prompt": "hi"})
                spent = time.perf_counter() - start
                assert not result.is_error, result
                if warm >= 5:
                    times["sampling call"][path].append(spent)
                start = time.perf_counter()
                await client.read_resource("test://static-text")
                spent = time.perf_counter() - start
                if warm >= 5:
                    times["resource read"][path].append(spent)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200)
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    why = conformance.available()
    if why:
        sys.exit(f"cannot run: {why}")
    folder = Path(os.environ.get("TOOLSCOUT_CONFORMANCE_DIR") or tempfile.mkdtemp(prefix="toolscout-relay-"))
    conformance.install_fixture(folder)
    with conformance.fixture_server(folder) as upstream, conformance.gateway(upstream, folder) as url:
        times = asyncio.run(measure(upstream, url, args.rounds))
    rows = []
    for op, paths in times.items():
        d50, d95 = _pct(paths["direct"], 0.5), _pct(paths["direct"], 0.95)
        g50, g95 = _pct(paths["gateway"], 0.5), _pct(paths["gateway"], 0.95)
        rows.append(
            f"| {op} | {d50:.2f} / {d95:.2f} | {g50:.2f} / {g95:.2f} | +{g50 - d50:.2f} / +{g95 - d95:.2f} |"
            f" {statistics.median(paths['gateway']) / statistics.median(paths['direct']):.2f}x |"
        )
    table = [
        f"{args.rounds} rounds per path after 5 warm-up rounds, interleaved; one SDK client per path (streamable"
        " HTTP, 2025-11-25); the upstream is the conformance fixture (Node) on loopback.",
        "",
        "| operation | direct p50 / p95 ms | through the gateway p50 / p95 ms | added p50 / p95 ms | p50 ratio |",
        "|---|---|---|---|---|",
        *rows,
    ]
    print("\n".join(table))
    if args.write:
        from _report import write_section

        write_section(
            "relay-latency",
            "Transparent gateway: added latency of a relayed request and a resource read (issue 27)",
            f"python benchmarks/relay_latency.py --rounds {args.rounds} --write",
            "\n".join(table),
        )


if __name__ == "__main__":
    main()
