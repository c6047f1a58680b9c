"""MCP pass-through overhead over streamable HTTP, stateful and stateless clients.

An SDK client calls the one ``echo`` tool of an upstream that serves streamable HTTP
(benchmarks/_echo_upstream.py --http) directly, and through ``toolscout serve --transport
http`` (``call_tool`` -> ``up_echo``). Each tree in ``--trees`` runs its own gateway process
(its sources first on the path) in front of the same upstream, and the calls interleave call
by call: one direct, then one through each tree's gateway in an order that rotates, so before
and after meet the same moments of a shared machine's load.
The overhead is the median (p95) of the via-gateway calls minus the median (p95) of the
direct ones; the gateway's CPU per forwarded call is read from /proc (not inflated by waiting
for a core). ``--write`` puts the table in docs/benchmarks.md (section ``passthrough-http``).

    python benchmarks/passthrough_http.py --trees /tmp/base/src src --rounds 4 --calls 100 --write
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import numpy as np
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

BENCH = Path(__file__).resolve().parent
ECHO = BENCH / "_echo_upstream.py"
CLI = "import sys; from toolscout.cli import app; sys.argv[0] = 'toolscout'; app()"
MODES = {"stateful": "legacy", "stateless": "auto"}


def tree_label(tree: Path) -> str:
    """A source tree as the tables name it: its commit (``+`` when it has changes), else its path."""
    try:
        commit = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "-C", str(tree), "status", "--porcelain", "--", "."], capture_output=True, text=True)
    except (OSError, subprocess.CalledProcessError):
        return str(tree)
    return commit.stdout.strip() + ("+" if dirty.stdout.strip() else "")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _ready(url: str) -> None:
    async with httpx.AsyncClient() as http:
        for _ in range(600):  # until the process listens (bounded)
            try:
                await http.get(url)
                return
            except httpx.TransportError:
                await asyncio.sleep(0.05)
    raise RuntimeError(f"{url} never answered")


async def until_listed(client: Any, forward: dict[str, Any]) -> None:
    """Return once ``client``'s gateway answers ``call_tool(forward)`` without an error: it has
    listed the upstream's tools (bounded: 400 tries, 50 ms apart)."""
    for _ in range(400):
        if not (await client.call_tool("call_tool", forward)).is_error:
            return
        await asyncio.sleep(0.05)
    raise RuntimeError("the gateway never listed the upstream's echo tool")


async def interleaved(
    up: str, gateways: list[str], mode: str, calls: int, meter: Callable[[], list[float]] | None = None
) -> tuple[list[float], list[list[float]], list[float]]:
    """One direct call, then one through each gateway (the order rotating call by call), ``calls``
    times: every tree meets the same moments of the machine's load. Returns the direct and the
    per-gateway times (ms) and how much ``meter``'s readings grew over the timed calls."""
    forward = {"name": "up_echo", "arguments": {"text": "x"}}
    direct: list[float] = []
    via: list[list[float]] = [[] for _ in gateways]
    async with contextlib.AsyncExitStack() as stack:
        dc = await stack.enter_async_context(Client(streamable_http_client(f"{up}/mcp"), mode=mode))  # type: ignore[arg-type]
        clients = [
            await stack.enter_async_context(Client(streamable_http_client(f"{gw}/mcp"), mode=mode))  # type: ignore[arg-type]
            for gw in gateways
        ]
        for gc in clients:
            await until_listed(gc, forward)
        for _ in range(10):  # warm every path
            await dc.call_tool("echo", {"text": "x"})
            for gc in clients:
                await gc.call_tool("call_tool", forward)
        start = meter() if meter is not None else []
        for n in range(calls):
            t = time.perf_counter()
            await dc.call_tool("echo", {"text": "x"})
            direct.append((time.perf_counter() - t) * 1e3)
            for k in range(len(clients)):
                i = (n + k) % len(clients)
                t = time.perf_counter()
                result = await clients[i].call_tool("call_tool", forward)
                via[i].append((time.perf_counter() - t) * 1e3)
                if result.is_error:
                    raise RuntimeError(f"a forwarded call failed: {result.content}")
        grown = [b - a for a, b in zip(start, meter(), strict=True)] if meter is not None else []
    return direct, via, grown


@contextlib.asynccontextmanager
async def gateways_in_front(
    trees: list[Path], launch: Callable[[int, Path, list[str]], list[str]]
) -> AsyncIterator[tuple[str, list[tuple[str, subprocess.Popen[Any]]]]]:
    """The streamable HTTP echo upstream, and one ``toolscout serve --transport http`` per tree
    in front of it (its sources first on the path; ``launch(i, dir, serve_args)`` is the
    command line), all ready; stopped on exit. Yields the upstream's URL and each gateway's
    URL and process."""
    with tempfile.TemporaryDirectory() as d:
        upstream = subprocess.Popen([sys.executable, str(ECHO), "--http", "0"], stdout=subprocess.PIPE, text=True)
        procs: list[subprocess.Popen[Any]] = [upstream]
        try:
            assert upstream.stdout is not None
            up = f"http://127.0.0.1:{upstream.stdout.readline().strip()}"
            await _ready(f"{up}/mcp")
            cfg = Path(d) / "one.json"
            cfg.write_text(json.dumps({"mcpServers": {"up": {"url": f"{up}/mcp"}}}))
            gateways: list[tuple[str, subprocess.Popen[Any]]] = []
            for i, tree in enumerate(trees):
                port = _free_port()
                env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
                args = ["serve", "-c", str(cfg), "--cache", str(Path(d) / f"{i}.db"), "--transport", "http", "--port", str(port)]
                proc = subprocess.Popen(launch(i, Path(d), args), env=env, stdout=subprocess.DEVNULL)
                procs.append(proc)
                gateways.append((f"http://127.0.0.1:{port}", proc))
            for url, _ in gateways:
                await _ready(f"{url}/v1/ready")
            yield up, gateways
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(10)


async def main_async(trees: list[Path], rounds: int, calls: int) -> dict[str, dict[str, dict[str, float]]]:
    samples: dict[tuple[int, str], list[dict[str, Any]]] = {}
    async with gateways_in_front(trees, lambda i, d, args: [sys.executable, "-c", CLI, *args]) as (up, gateways):
        urls = [url for url, _ in gateways]
        for _ in range(rounds):
            for label, mode in MODES.items():
                meter = lambda: [_cpu_s(proc.pid) for _, proc in gateways]  # noqa: E731
                direct, via, cpu = await interleaved(up, urls, mode, calls, meter)
                for i, (v, c) in enumerate(zip(via, cpu, strict=True)):
                    samples.setdefault((i, label), []).append({"direct": direct, "via": v, "cpu": c / calls * 1e3})
    out: dict[str, dict[str, dict[str, float]]] = {}
    for (i, mode_label), runs in samples.items():
        direct = [x for r in runs for x in r["direct"]]
        via = [x for r in runs for x in r["via"]]
        out.setdefault(f"{tree_label(trees[i])} ({trees[i]})", {})[mode_label] = {
            "direct_p50_ms": float(np.median(direct)),
            "via_p50_ms": float(np.median(via)),
            "overhead_p50_ms": float(np.median(via) - np.median(direct)),
            "direct_p95_ms": float(np.percentile(direct, 95)),
            "via_p95_ms": float(np.percentile(via, 95)),
            "overhead_p95_ms": float(np.percentile(via, 95) - np.percentile(direct, 95)),
            "gateway_cpu_ms_per_call": float(np.median([r["cpu"] for r in runs])),
        }
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trees", nargs="+", type=Path, default=[BENCH.parent / "src"], help="source dirs to compare")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--calls", type=int, default=100, help="interleaved calls per round and mode (one direct, one per tree)")
    parser.add_argument("--write", action="store_true", help="write the table to docs/benchmarks.md")
    args = parser.parse_args()
    out = asyncio.run(main_async(args.trees, args.rounds, args.calls))
    head = ("tree", "client", "direct p50 / p95", "via p50 / p95", "overhead p50", "overhead p95", "gateway CPU per call")
    rows = [
        (
            tree,
            label,
            f"{r['direct_p50_ms']:.2f} / {r['direct_p95_ms']:.2f} ms",
            f"{r['via_p50_ms']:.2f} / {r['via_p95_ms']:.2f} ms",
            f"{r['overhead_p50_ms']:.2f} ms",
            f"{r['overhead_p95_ms']:.2f} ms",
            f"{r['gateway_cpu_ms_per_call']:.2f} ms",
        )
        for tree, modes in out.items()
        for label, r in modes.items()
    ]
    for row in [head, *rows]:
        print(f"{row[0]:28} {row[1]:10} {row[2]:>20} {row[3]:>20} {row[4]:>13} {row[5]:>13} {row[6]:>10}")
    if args.write:
        import os

        from _report import write_section

        load = os.getloadavg()[0]
        table = "\n".join("| " + " | ".join(r) + " |" for r in [head, tuple("---" for _ in head), *rows])
        body = (
            f"Each tree its own `toolscout serve --transport http` in front of the same streamable HTTP echo upstream; "
            f"{args.rounds} rounds x {args.calls} calls per client mode, one direct call then one through each tree's gateway "
            f"(the order rotating call by call); load average {load:.1f} at the end.\n\n{table}\n"
        )
        command = "python benchmarks/passthrough_http.py --trees " + " ".join(str(t) for t in args.trees)
        command += f" --rounds {args.rounds} --calls {args.calls} --write"
        write_section("passthrough-http", "MCP pass-through over HTTP: overhead per proxied call (issue 36)", command, body)


if __name__ == "__main__":
    main()
