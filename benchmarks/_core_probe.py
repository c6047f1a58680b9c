"""One measurement of benchmarks/core_before_after.py, run in a fresh process per figure.

The parent starts this script with ``PYTHONPATH=<tree>/src`` so the toolscout imported here is
that tree's (checked: the JSON names the module file). Only the public API
(``toolscout.__all__``) and the CLI are measured; the one internal needed, a SQLite store for
the hybrid figure's vector cache, is imported from ``toolscout.storage`` when the tree has it
and from ``toolscout.store`` otherwise. Prints one JSON line.

    PYTHONPATH=<tree>/src python benchmarks/_core_probe.py FIGURE [--quick] [--n N] [--cache PATH]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from mcp import Client
from mcp.client.stdio import StdioServerParameters

import toolscout
from toolscout import Catalog, Gateway, Session, Tool

try:  # the storage package of the refactored tree (issue 21) ...
    from toolscout.storage import open_store as _open_store
except ImportError:  # ... or the single module of the trees before it
    from toolscout.store import Store as _open_store

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from _report import DATA, replicate  # noqa: E402
from passthrough_http import CLI, ECHO, until_listed  # noqa: E402

POOL = DATA / "toolpool"
SESSION_QUERIES = ("analyze chemical evidence", "book a flight ticket", "translate text to spanish")


# -- data, through the public Tool type (as toolscout.eval.dataset builds it) ------------------
def load_tools(path: Path, n: int | None = None) -> list[Tool]:
    tools: list[Tool] = []
    with path.open() as fh:
        for line in fh:
            obj = json.loads(line)
            schema = obj.get("input_schema") or None
            source = obj.get("source")
            category = source if isinstance(source, str) and source else None
            tools.append(Tool(obj["name"], obj.get("description") or "", schema, source="dataset", category=category))
            if n is not None and len(tools) == n:
                break
    return tools


def load_queries(n: int | None = None) -> list[str]:
    with (POOL / "queries.jsonl").open() as fh:
        queries = [json.loads(line)["query"] for line in fh]
    return queries[:n] if n else queries


def pcts(values: list[float]) -> dict[str, float]:
    return {"p50": float(np.percentile(values, 50)), "p95": float(np.percentile(values, 95))}


def peak_mb() -> float:
    """VmHWM: the process's peak resident set so far."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


# -- figures ---------------------------------------------------------------------------------
def keyword(n_queries: int | None) -> dict[str, Any]:
    """``Gateway.find_tools`` (parse, mask, BM25F, AutoCut, render) on toolpool's first 10k
    tools; CPU of this thread and wall time per query."""
    gw = Gateway(Catalog(load_tools(POOL / "tools.jsonl", 10_000)))
    queries = load_queries(n_queries)
    gw.find_tools(queries[0], 5, search_type="keyword")  # builds the index
    cpu, wall = [], []
    for q in queries:
        w, c = time.perf_counter(), time.thread_time()
        gw.find_tools(q, 5, search_type="keyword")
        cpu.append((time.thread_time() - c) * 1e3)
        wall.append((time.perf_counter() - w) * 1e3)
    return {"cpu_ms": pcts(cpu), "wall_ms": pcts(wall), "queries": len(queries)}


def session(turns: int) -> dict[str, Any]:
    """Per-turn cost of a session at 1,000 tools (Seal-Tools' first 999 and an async no-op),
    three searches revealed: ``session.tools("openai")`` + ``await session.ahandle(call)``,
    minus the tool alone; CPU of this thread (benchmarks/request_path.py's method)."""
    cat = Catalog(load_tools(DATA / "sealtools" / "tools.jsonl", 999))

    async def noop(args: dict[str, Any]) -> str:
        return "ok"

    cat.add(Tool("bench_noop", "Do nothing, quickly.", {"type": "object"}), handler=noop)
    sess = Session(Gateway(cat))
    for query in SESSION_QUERIES:
        sess.handle("find_tools", {"query": query})
    sess.handle("find_tools", {"query": "select:bench_noop"})

    async def per_turn_us(n: int) -> float:
        t = time.thread_time()
        for _ in range(n):
            sess.tools("openai", record=False)
            await sess.ahandle("bench_noop", {})
        spent = time.thread_time() - t
        t = time.thread_time()
        for _ in range(n):
            await noop({})
        alone = time.thread_time() - t
        return (spent - alone) / n * 1e6

    asyncio.run(per_turn_us(max(50, turns // 10)))  # warm-up
    # Ten blocks, the median block: a burst of other work on the shared cores (which inflates
    # even CPU time, through caches) spoils a block, not the figure.
    blocks = [asyncio.run(per_turn_us(max(1, turns // 10))) for _ in range(10)]
    return {"turn_us": float(np.median(blocks)), "turn_us_min": min(blocks), "turns": turns}


def _proc_cpu_s(pid: int) -> float:
    """User + system CPU seconds of a process (all its threads, living and exited)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _child_pid(marker: str) -> int:
    """The pid of this process's child whose command line contains ``marker``."""
    me = str(os.getpid())
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if stat.rsplit(")", 1)[1].split()[1] == me and marker in cmdline:
            return int(entry.name)
    raise RuntimeError(f"no child process running {marker!r}")


async def passthrough(calls: int) -> dict[str, Any]:
    """The same upstream call made directly (SDK client -> upstream) and through the gateway
    (SDK client -> ``toolscout serve`` -> upstream, ``call_tool``), interleaved call by call
    (benchmarks/mcp_gateway.py's method); plus the gateway process's CPU per forwarded call
    (from /proc, so not inflated by waiting for a core)."""
    env = dict(os.environ)
    up = {"command": sys.executable, "args": [str(ECHO)]}
    with tempfile.TemporaryDirectory() as d:
        cfg = Path(d) / "one.json"
        cfg.write_text(json.dumps({"mcpServers": {"up": up}}))
        direct_params = StdioServerParameters(command=sys.executable, args=[str(ECHO)], env=env)
        gw_params = StdioServerParameters(
            command=sys.executable, args=["-c", CLI, "serve", "-c", str(cfg), "--cache", str(Path(d) / "one.db")], env=env
        )
        forward = {"name": "up_echo", "arguments": {"text": "x"}}
        direct: list[float] = []
        via: list[float] = []
        async with Client(direct_params, mode="legacy") as dc, Client(gw_params, mode="legacy") as gc_:
            await until_listed(gc_, forward)
            gw_pid = _child_pid(" serve -c ")
            await dc.list_tools()  # the SDK client re-lists on a call to a tool it has not seen
            await gc_.list_tools()
            for _ in range(20):  # warm both paths
                await dc.call_tool("echo", {"text": "x"})
                await gc_.call_tool("call_tool", forward)
            cpu0 = _proc_cpu_s(gw_pid)
            for _ in range(calls):
                t = time.perf_counter()
                await dc.call_tool("echo", {"text": "x"})
                direct.append((time.perf_counter() - t) * 1e3)
                t = time.perf_counter()
                result = await gc_.call_tool("call_tool", forward)
                via.append((time.perf_counter() - t) * 1e3)
                if result.is_error:
                    raise RuntimeError(f"a forwarded call failed: {result.content}")
            gw_cpu = _proc_cpu_s(gw_pid) - cpu0
    return {
        "direct_ms": pcts(direct), "via_ms": pcts(via),
        "overhead_ms": float(np.median(via) - np.median(direct)),
        "gateway_cpu_ms_per_call": gw_cpu / calls * 1e3, "calls": calls,
    }


def _hybrid_gateway(tools: list[Tool], store_path: Path) -> Gateway:
    return Gateway(Catalog(tools), embeddings=True, vector_store=_open_store(store_path))


def hybrid_prepare(cache: Path) -> dict[str, Any]:
    """Embed the 10k tools into the shared vector cache (once; later runs reuse it)."""
    cache.parent.mkdir(parents=True, exist_ok=True)
    t = time.perf_counter()
    gw = _hybrid_gateway(load_tools(POOL / "tools.jsonl", 10_000), cache)
    gw.find_tools("warm up", 10, search_type="hybrid")
    return {"seconds": time.perf_counter() - t}


def hybrid(n_queries: int, cache: Path) -> dict[str, Any]:
    """New-query latency of hybrid ``find_tools`` at 10k tools: every query is new to this
    process, so each is embedded by the default query encoder. Tool vectors come from a copy
    of the cache (no tool is embedded). Process CPU (the encoder's threads included) and wall."""
    with tempfile.TemporaryDirectory() as d:
        copy = Path(d) / "vectors.db"
        shutil.copyfile(cache, copy)
        t, c = time.perf_counter(), time.process_time()
        gw = _hybrid_gateway(load_tools(POOL / "tools.jsonl", 10_000), copy)
        warm = gw.find_tools("warm up", 10, search_type="hybrid")
        setup = (time.perf_counter() - t, time.process_time() - c)
        if warm.search_type != "hybrid":
            raise RuntimeError(f"hybrid search is not on (answered by {warm.search_type!r})")
        cpu, wall = [], []
        for q in load_queries(n_queries):
            w, c = time.perf_counter(), time.process_time()
            gw.find_tools(q, 10, search_type="hybrid")
            cpu.append((time.process_time() - c) * 1e3)
            wall.append((time.perf_counter() - w) * 1e3)
    return {"cpu_ms": pcts(cpu), "wall_ms": pcts(wall), "setup_s": setup[0], "setup_cpu_s": setup[1], "queries": len(cpu)}


def million(n: int) -> dict[str, Any]:
    """Build a catalog of ``n`` tools (toolpool replicated with name suffixes, as
    benchmarks/million.py's ``replicated`` catalog) and its gateway up to a first keyword
    answer: CPU and wall time of that, and the process's peak RSS (records included)."""
    tools = replicate(load_tools(POOL / "tools.jsonl"), n)
    gc.collect()
    w, c = time.perf_counter(), time.process_time()
    catalog = Catalog(tools)
    del tools
    gw = Gateway(catalog)
    found = gw.find_tools("send an email", 5, search_type="keyword")
    build = (time.process_time() - c, time.perf_counter() - w)
    if not found.found:
        raise RuntimeError("the million-tool catalog found nothing for 'send an email'")
    return {"tools": len(catalog), "build_cpu_s": build[0], "build_wall_s": build[1], "peak_mb": peak_mb()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("figure", choices=("keyword", "session", "passthrough", "hybrid", "hybrid-prepare", "million"))
    parser.add_argument("--n", type=int, default=0, help="queries, turns, calls or tools (0: the figure's default)")
    parser.add_argument("--cache", type=Path, help="the vector cache (hybrid)")
    args = parser.parse_args()
    started = time.perf_counter()
    if args.figure == "keyword":
        out = keyword(args.n or None)
    elif args.figure == "session":
        out = session(args.n or 2000)
    elif args.figure == "passthrough":
        out = asyncio.run(passthrough(args.n or 300))
    elif args.figure == "hybrid-prepare":
        out = hybrid_prepare(args.cache)
    elif args.figure == "hybrid":
        out = hybrid(args.n or 300, args.cache)
    else:
        out = million(args.n or 1_000_000)
    out["module"] = toolscout.__file__
    out["seconds"] = time.perf_counter() - started
    print(json.dumps(out))


if __name__ == "__main__":
    main()
