"""The request path before and after a change, measured in one run.

Three figures, each from the code of two revisions run side by side (interleaved rounds in
fresh subprocesses, same data, same machine moment):

- keyword ``find_tools`` p50 at 10,000 tools (``Gateway.find_tools``: parse, mask, BM25F,
  AutoCut, render; toolpool's first 10k tools and its 2,500 queries);
- session overhead per turn at 1,000 tools (``session.tools("openai")`` + ``await
  session.ahandle(call)``, minus the tool itself: an async no-op);
- MCP passthrough overhead: an in-process SDK client calling a tool through the gateway
  server's ``call_tool`` minus the same call on a bare SDK server (no stdio hop, so the
  gateway's own cost is what remains).

    .venv/bin/python benchmarks/request_path.py [--base REF] [--rounds 3] [--no-write]

``--base`` is any git revision (default: the parent of the first one-request-path commit);
its ``src/`` is extracted with ``git archive`` into a temporary directory.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import DATA, write_section

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_BASE = "c1e6f80"

PROBE = r'''
import asyncio, json, statistics, sys, time
from pathlib import Path

data = Path(sys.argv[1])
out = {}

from toolscout.catalog import Catalog
from toolscout.eval.dataset import load_queries, load_tools
from toolscout.gateway import Gateway
from toolscout.model import Tool
from toolscout.session import Session

# 1. keyword find_tools p50 at 10k tools
tools = load_tools(data / "toolpool" / "tools.jsonl")[:10_000]
queries = [q.query for q in load_queries(data / "toolpool" / "queries.jsonl")]
gw = Gateway(Catalog(tools))
gw.find_tools(queries[0], 5, search_type="keyword")
times = []
for q in queries:
    t = time.thread_time()
    gw.find_tools(q, 5, search_type="keyword")
    times.append((time.thread_time() - t) * 1e3)
out["find_p50_ms"] = statistics.median(times)

# 2. session overhead per turn at 1,000 tools
seal = load_tools(data / "sealtools" / "tools.jsonl")[:999]
cat = Catalog(seal)
async def noop(args):
    return "ok"
cat.add(Tool("bench_noop", "Do nothing, quickly.", {"type": "object"}), handler=noop)
session = Session(Gateway(cat))
for query in ("analyze chemical evidence", "book a flight ticket", "translate text to spanish"):
    session.handle("find_tools", {"query": query})
session.handle("find_tools", {"query": "select:bench_noop"})

async def turns(n):
    t = time.thread_time()
    for _ in range(n):
        session.tools("openai", record=False)
        await session.ahandle("bench_noop", {})
    per = time.thread_time() - t
    t = time.thread_time()
    for _ in range(n):
        await noop({})
    alone = time.thread_time() - t
    return (per - alone) / n * 1e6

asyncio.run(turns(200))
out["session_us"] = asyncio.run(turns(2000))

# 3. MCP passthrough overhead (in process)
try:
    from toolscout.server.mcp import GatewayServer
except ImportError:
    from toolscout.mcp.server import GatewayServer
import mcp_types as types
from mcp import Client
from mcp.server.lowlevel.server import Server

cat = Catalog()
async def echo(args):
    return args.get("text", "")
cat.add(Tool("echo", "Echo the text back.", {"type": "object", "properties": {"text": {"type": "string"}}}), handler=echo)
gateway_server = GatewayServer(Gateway(cat))

async def bare_list(ctx, params):
    return types.ListToolsResult(tools=[types.Tool(name="echo", input_schema={"type": "object"})])
async def bare_call(ctx, params):
    return types.CallToolResult(content=[types.TextContent(type="text", text=params.arguments.get("text", ""))])
bare = Server("bare", on_list_tools=bare_list, on_call_tool=bare_call)

async def passthrough(n):
    # Client and server share this thread (in-process transport): CPU time of n calls.
    async with Client(gateway_server.lowlevel, mode="legacy") as gw_client, Client(bare, mode="legacy") as bare_client:
        t = time.thread_time()
        for _ in range(n):
            await gw_client.call_tool("call_tool", {"name": "echo", "arguments": {"text": "hi"}})
        through = time.thread_time() - t
        t = time.thread_time()
        for _ in range(n):
            await bare_client.call_tool("echo", {"text": "hi"})
        direct = time.thread_time() - t
    return (through - direct) / n * 1e3, direct / n * 1e3

asyncio.run(passthrough(50))
out["passthrough_ms"], out["bare_call_ms"] = asyncio.run(passthrough(500))
print(json.dumps(out))
'''


def _extract(ref: str, into: Path) -> Path:
    archive = subprocess.run(["git", "archive", ref, "src"], cwd=ROOT, check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into / "src"


def _probe(src: Path, data: Path) -> dict[str, float]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run([sys.executable, "-c", PROBE, str(data)], env=env, check=True, capture_output=True, text=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def _revision(ref: str) -> str:
    return subprocess.run(["git", "rev-parse", "--short", ref], cwd=ROOT, capture_output=True, text=True).stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", default=DEFAULT_BASE)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "src"], cwd=ROOT, capture_output=True, text=True).stdout.strip())
    head = _revision("HEAD") + (" + uncommitted changes" if dirty else "")
    runs: dict[str, list[dict[str, float]]] = {"before": [], "after": []}
    with tempfile.TemporaryDirectory() as tmp:
        base_src = _extract(args.base, Path(tmp))
        for i in range(args.rounds):
            for label, src in (("before", base_src), ("after", ROOT / "src")):
                runs[label].append(_probe(src, args.data))
                print(f"round {i + 1} {label}: {runs[label][-1]}", flush=True)
    keys = (
        ("find_p50_ms", "keyword `find_tools` p50 at 10k tools", "ms", 3),
        ("session_us", "session overhead per turn at 1,000 tools", "µs", 1),
        ("passthrough_ms", "MCP passthrough overhead (in-process client, vs a bare SDK server)", "ms", 3),
        ("bare_call_ms", "reference: the same call on a bare SDK server", "ms", 3),
    )
    rows = ["| figure | before | after | after / before |", "|---|---|---|---|"]
    for key, title, unit, digits in keys:
        before = statistics.median(r[key] for r in runs["before"])
        after = statistics.median(r[key] for r in runs["after"])
        rows.append(f"| {title} | {before:.{digits}f} {unit} | {after:.{digits}f} {unit} | {after / before:.2f} |")
    body = (
        f"Before: `{_revision(args.base)}`; after: `{head}`. Median of {args.rounds} interleaved rounds, each in a "
        "fresh process; CPU time of the measuring thread (the machine is shared: wall time adds whatever else ran).\n\n" + "\n".join(rows) + "\n\nThe session turn is `session.tools(\"openai\")` plus "
        "`await session.ahandle(...)` of a revealed async no-op tool, minus the tool alone; the passthrough is "
        "`call_tool` through `GatewayServer` minus the same call on a bare SDK server, both over the SDK's "
        "in-process transport (the stdio figure with real processes is in the MCP gateway section)."
    )
    print(body)
    if not args.no_write:
        write_section("request_path", "Request path: before and after one request path", "python benchmarks/request_path.py", body)


if __name__ == "__main__":
    main()
