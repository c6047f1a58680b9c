"""MCP gateway figures: passthrough overhead, cold start from the cache, concurrent sessions.

1. Passthrough: p50 of the same upstream call made directly (SDK client -> upstream) and
   through the gateway (SDK client -> ``toolscout serve`` -> upstream), interleaved in one
   run; plus the in-process cost (Gateway.acall -> upstream vs Upstream.call).
2. Cold start: three upstreams with cached tool lists; time from spawning ``toolscout serve``
   to the first ``find_tools`` answer (no upstream is started: they are lazy).
3. 50 concurrent HTTP sessions, each revealing a different tool: leaks and errors.

4. With ``--conformance``: the ``@modelcontextprotocol/conformance`` server scenarios against
   ``toolscout serve --transport http`` (needs ``bash .ci/setup-mcp.sh``); prints the summary.

Run: .venv/bin/python benchmarks/mcp_gateway.py [--calls 300] [--conformance]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from _report import write_section  # noqa: E402
from mcp_fixtures import fake  # noqa: E402
from mcp_fixtures.asgi import serving  # noqa: E402
from mcp_fixtures.fake_upstream import tools_for  # noqa: E402
from toolscout.catalog import Catalog  # noqa: E402
from toolscout.gateway import Gateway  # noqa: E402
from toolscout.server.app import http_app  # noqa: E402
from toolscout.server.mcp import GatewayServer  # noqa: E402
from toolscout.sources.mcp.aggregator import Aggregator  # noqa: E402
from toolscout.sources.mcp.cache import ToolListCache  # noqa: E402
from toolscout.sources.mcp.config import parse_config  # noqa: E402
from toolscout.storage import SQLiteStore as Store  # noqa: E402

TOOLSCOUT = str(Path(sys.executable).with_name("toolscout"))


def p50(xs: list[float]) -> float:
    return statistics.median(xs)


def p95(xs: list[float]) -> float:
    return sorted(xs)[int(0.95 * (len(xs) - 1))]


async def passthrough(calls: int, tmp: Path) -> dict[str, float]:
    up = fake("normal")
    (tmp / "one.json").write_text(json.dumps({"mcpServers": {"up": up}}))
    direct_params = StdioServerParameters(command=up["command"], args=up["args"])
    gw_params = StdioServerParameters(
        command=TOOLSCOUT, args=["serve", "-c", str(tmp / "one.json"), "--cache", str(tmp / "one.db")]
    )
    direct: list[float] = []
    via: list[float] = []
    async with Client(direct_params, mode="legacy") as d, Client(gw_params, mode="legacy") as g:
        for _ in range(200):  # until the gateway has the upstream's tools
            r = await g.call_tool("call_tool", {"name": "up_echo", "arguments": {"text": "x"}})
            if not r.is_error:
                break
            await asyncio.sleep(0.05)
        # List first: the SDK client re-lists tools on every call to a tool it has not seen.
        await d.list_tools()
        await g.list_tools()
        for _ in range(20):  # warm both paths
            await d.call_tool("echo", {"text": "x"})
            await g.call_tool("call_tool", {"name": "up_echo", "arguments": {"text": "x"}})
        rounds: list[float] = []  # p50 overhead per block of 50 pairs: robust to load bursts
        for i in range(calls):
            t = time.perf_counter()
            await d.call_tool("echo", {"text": "x"})
            direct.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            await g.call_tool("call_tool", {"name": "up_echo", "arguments": {"text": "x"}})
            via.append((time.perf_counter() - t) * 1000)
            if (i + 1) % 50 == 0:
                rounds.append(p50(via[-50:]) - p50(direct[-50:]))

    # In process: what the gateway itself adds (resolve, validate, forward, wrap).
    agg = Aggregator(parse_config({"mcpServers": {"up": up}}), Catalog())
    gateway = Gateway(agg.catalog, call_timeout=None)
    inproc_direct: list[float] = []
    inproc_gw: list[float] = []
    try:
        await agg.start()
        upstream = agg.upstreams["up"]
        for _ in range(20):
            await upstream.call("echo", {"text": "x"})
            await gateway.acall("up_echo", {"text": "x"})
        for _ in range(calls):
            t = time.perf_counter()
            await upstream.call("echo", {"text": "x"})
            inproc_direct.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            await gateway.acall("up_echo", {"text": "x"})
            inproc_gw.append((time.perf_counter() - t) * 1000)
    finally:
        await agg.aclose()
    return {
        "direct_p50": p50(direct),
        "via_p50": p50(via),
        "direct_p95": p95(direct),
        "via_p95": p95(via),
        "inproc_direct_p50": p50(inproc_direct),
        "inproc_gw_p50": p50(inproc_gw),
        "round_min": min(rounds),
        "round_median": p50(rounds),
    }


async def cold_start(tmp: Path, runs: int) -> list[float]:
    servers = {name: fake("normal") for name in ("alpha", "beta", "gamma")}
    cfg_path = tmp / "three.json"
    cfg_path.write_text(json.dumps({"mcpServers": servers}))
    cache = tmp / "three.db"
    cfg = parse_config({"mcpServers": servers})
    with Store(cache) as store:
        for name in servers:
            ToolListCache(store).save(name, cfg.servers[name].config_hash(), tools_for("normal", False))
    params = StdioServerParameters(command=TOOLSCOUT, args=["serve", "-c", str(cfg_path), "--cache", str(cache)])
    bare = fake("normal")
    baseline_params = StdioServerParameters(command=bare["command"], args=bare["args"])
    times: list[float] = []
    baseline: list[float] = []
    cpu: list[float] = []
    for _ in range(runs):
        before = _children_cpu()
        t = time.perf_counter()
        async with Client(params, mode="legacy") as client:
            found = await client.call_tool("find_tools", {"query": "add two integers"})
            times.append(time.perf_counter() - t)
            assert not found.is_error, found.content
            assert len(found.structured_content["tool_references"]) >= 3
        cpu.append(_children_cpu() - before)
        t = time.perf_counter()
        async with Client(baseline_params, mode="legacy") as client:
            await client.list_tools()
            baseline.append(time.perf_counter() - t)
    return times, baseline, cpu


def _children_cpu() -> float:
    """CPU seconds of exited child processes: a load-independent view of process start."""
    import resource

    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


async def big_refresh() -> dict[str, float]:
    """Refresh a 10,000-tool upstream while another upstream is called in a loop."""
    agg = Aggregator(parse_config({"mcpServers": {"big": fake("many"), "ok": fake("normal")}}), Catalog())
    try:
        await agg.upstreams["big"].connect()
        await agg.refresh("ok")
        stop = False
        calls: list[float] = []

        async def caller() -> None:
            while not stop:
                t0 = time.perf_counter()
                await agg.catalog.handler("ok_echo")({"text": "x"})
                calls.append(time.perf_counter() - t0)

        task = asyncio.ensure_future(caller())
        t = time.perf_counter()
        count = await agg.refresh("big")
        elapsed = time.perf_counter() - t
        stop = True
        await task
    finally:
        await agg.aclose()
    return {"tools": count, "seconds": elapsed, "calls": len(calls), "max_call": max(calls) * 1000}


async def sessions(n: int) -> dict[str, Any]:
    catalog = Catalog()
    for i in range(n):
        catalog.add_function(lambda count=1, i=i: f"{i}x{count}", name=f"widget_{i:03d}", description=f"Operate widget {i:03d}.")
    server = GatewayServer(Gateway(catalog), max_revealed=8)
    leaks = errors = 0
    async with serving(http_app(server)) as url:

        async def one(i: int) -> None:
            nonlocal leaks, errors
            try:
                http = create_mcp_http_client()
                async with Client(streamable_http_client(f"{url}/mcp", http_client=http), mode="legacy") as c:
                    found = await c.call_tool("find_tools", {"query": f"widget_{i:03d}", "limit": 1})
                    await asyncio.sleep(0)  # let other sessions interleave before listing
                    listed = [t.name for t in (await c.list_tools()).tools if t.name.startswith("widget_")]
                    if found.is_error:
                        errors += 1
                    if listed != [f"widget_{i:03d}"]:
                        leaks += 1
                    ran = await c.call_tool(f"widget_{i:03d}", {"count": 2})
                    if ran.is_error or ran.content[0].text != f"{i}x2":
                        errors += 1
            except Exception:
                errors += 1

        t = time.perf_counter()
        await asyncio.gather(*(one(i) for i in range(n)))
        elapsed = time.perf_counter() - t
    return {"sessions": n, "leaks": leaks, "errors": errors, "seconds": elapsed}


def conformance(tmp: Path) -> str:
    """Run the conformance suite's server scenarios over HTTP; the suite's SUMMARY lines."""
    suite = ROOT / ".ci" / "node" / "node_modules" / ".bin" / "conformance"
    if not suite.exists():
        return "conformance suite not installed (bash .ci/setup-mcp.sh)"
    cfg = tmp / "conf.json"
    cfg.write_text(json.dumps({"mcpServers": {"up": fake("normal")}}))
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    serve = subprocess.Popen(
        [TOOLSCOUT, "serve", "-c", str(cfg), "--cache", str(tmp / "conf.db"), "--transport", "http", "--port", str(port)],
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(600):  # wait until it accepts connections (bounded)
            with socket.socket() as sock:
                if sock.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.05)
        done = subprocess.run(
            [str(suite), "server", "--url", f"http://127.0.0.1:{port}/mcp", "-o", str(tmp / "conformance")],
            capture_output=True, text=True, timeout=600,
        )  # fmt: skip
    finally:
        serve.terminate()
        serve.wait(10)
    text = done.stdout + done.stderr
    lines = [ln for ln in text.splitlines() if re.match(r"^[✓✗] |^Total:", ln)]
    return "\n".join(lines) or text[-3000:]


async def main(calls: int, cold_runs: int, with_conformance: bool = False) -> None:
    if with_conformance:
        with tempfile.TemporaryDirectory() as d:
            print(conformance(Path(d)))
        return
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        pt = await passthrough(calls, tmp)
        cold, baseline, cold_cpu = await cold_start(tmp, cold_runs)
    conc = await sessions(50)
    big = await big_refresh()
    overhead = pt["via_p50"] - pt["direct_p50"]
    inproc = pt["inproc_gw_p50"] - pt["inproc_direct_p50"]
    lines = [
        "| figure | value | target |",
        "|---|---|---|",
        f"| upstream call, direct (SDK client -> upstream), p50 / p95 | {pt['direct_p50']:.2f} / {pt['direct_p95']:.2f} ms | |",
        f"| same call through `toolscout serve` (call_tool), p50 / p95 | {pt['via_p50']:.2f} / {pt['via_p95']:.2f} ms | |",
        f"| **passthrough overhead, p50** (one extra stdio hop included) | **{overhead:.2f} ms** | <= 2 ms |",
        f"| same, per block of 50 call pairs: median / best block | {pt['round_median']:.2f} / {pt['round_min']:.2f} ms | |",
        f"| in-process gateway cost (Gateway.acall vs Upstream.call), p50 | {inproc:.3f} ms | |",
        f"| cold start, 3 cached upstreams: spawn -> first find_tools answer, median of {len(cold)} | "
        f"**{statistics.median(cold):.2f} s** (min {min(cold):.2f}) | <= 1 s |",
        f"| CPU time of that gateway process, whole life (start, answer, exit), median | "
        f"{statistics.median(cold_cpu):.2f} s | |",
        f"| reference: spawn -> first tools/list of a bare SDK server (the scripted upstream), median | "
        f"{statistics.median(baseline):.2f} s (min {min(baseline):.2f}) | |",
        f"| refresh of a {big['tools']:,}-tool upstream (list 20 pages, check, index) | {big['seconds']:.2f} s | |",
        f"| calls to another upstream during that refresh: count / slowest | "
        f"{big['calls']} / {big['max_call']:.0f} ms | |",
        f"| {conc['sessions']} concurrent HTTP sessions revealing different tools | "
        f"**{conc['leaks']} leaks, {conc['errors']} errors** ({conc['seconds']:.2f} s) | 0, 0 |",
    ]
    body = "\n".join(lines) + (
        f"\n\n{calls} interleaved calls per path; the echo tool of the scripted upstream "
        "(tests/mcp_fixtures/fake_upstream.py). Cold start includes spawning Python and importing toolscout; "
        "no upstream is started (lazy, answered from the cache)."
    )
    print(body)
    write_section("mcp_gateway", "MCP gateway", "python benchmarks/mcp_gateway.py", body)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=300)
    parser.add_argument("--cold-runs", type=int, default=5)
    parser.add_argument("--conformance", action="store_true", help="only run the conformance scenarios")
    args = parser.parse_args()
    asyncio.run(main(args.calls, args.cold_runs, args.conformance))
