"""Where the time of one proxied ``tools/call`` goes, stage by stage, for each tree in ``--trees``.

The same set-up as benchmarks/passthrough_http.py (an SDK client, the streamable HTTP echo
upstream, ``toolscout serve --transport http`` of each tree in front of it, one direct call
then one through each tree's gateway, the order rotating call by call), with the gateway started
through benchmarks/_passthrough_probe.py, which marks the stage boundaries inside it. Per
call, from the marks (medians over all calls; the stages' medians need not add up to the
total's):

    outside the gateway      the client's SDK and the client -> gateway HTTP leg, both ways
    HTTP in -> handler       uvicorn, the ASGI middleware, the SDK server's parse and dispatch
    handler -> upstream      session, guard (visibility, validation, approval, credentials)
    upstream round trip      the gateway's SDK client, the gateway -> upstream HTTP leg, the upstream
    upstream -> handler out  screening, audit, learning, result shaping
    handler out -> answer    the SDK server's result validation, serialisation and framing

    python benchmarks/passthrough_stages.py --trees /tmp/base/src src --rounds 3 --calls 100
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from passthrough_http import ECHO, MODES, _free_port, _ready

BENCH = Path(__file__).resolve().parent
PROBE = BENCH / "_passthrough_probe.py"
STAGES = (
    "outside the gateway (client SDK, client <-> gateway HTTP)",
    "HTTP in -> toolscout handler",
    "handler -> upstream call",
    "upstream round trip (gateway SDK client, HTTP, upstream)",
    "upstream back -> handler out",
    "handler out -> answer sent",
)


def _stages(via_ms: float, marks: list[float]) -> list[float]:
    request_in, handler_in, upstream_out, upstream_back, handler_out, answer_out = marks
    return [
        via_ms - (answer_out - request_in) * 1e3,
        (handler_in - request_in) * 1e3,
        (upstream_out - handler_in) * 1e3,
        (upstream_back - upstream_out) * 1e3,
        (handler_out - upstream_back) * 1e3,
        (answer_out - handler_out) * 1e3,
    ]


async def _marks(proc: subprocess.Popen[Any], out: Path, n: int) -> list[list[float]]:
    out.unlink(missing_ok=True)
    proc.send_signal(signal.SIGUSR1)
    for _ in range(400):  # until the gateway has written them (bounded)
        if out.exists():
            try:
                return json.loads(out.read_text())[-n:]  # type: ignore[no-any-return]
            except ValueError:
                pass  # still being written
        await asyncio.sleep(0.02)
    raise RuntimeError("the probed gateway never wrote its marks")


async def _measure(up: str, gateways: list[tuple[str, subprocess.Popen[Any], Path]], mode: str, calls: int) -> list[dict[str, Any]]:
    """One direct call, then one through each gateway (the order rotating call by call), ``calls``
    times; then each gateway's marks of those calls."""
    forward = {"name": "up_echo", "arguments": {"text": "x"}}
    direct: list[float] = []
    via: list[list[float]] = [[] for _ in gateways]
    async with contextlib.AsyncExitStack() as stack:
        dc = await stack.enter_async_context(Client(streamable_http_client(f"{up}/mcp"), mode=mode))  # type: ignore[arg-type]
        clients = [
            await stack.enter_async_context(Client(streamable_http_client(f"{gw}/mcp"), mode=mode))  # type: ignore[arg-type]
            for gw, _, _ in gateways
        ]
        for gc in clients:
            for _ in range(400):  # until the gateway has listed the upstream's tools (bounded)
                if not (await gc.call_tool("call_tool", forward)).is_error:
                    break
                await asyncio.sleep(0.05)
        for _ in range(10):
            await dc.call_tool("echo", {"text": "x"})
            for gc in clients:
                await gc.call_tool("call_tool", forward)
        for n in range(calls):
            t = time.perf_counter()
            await dc.call_tool("echo", {"text": "x"})
            direct.append((time.perf_counter() - t) * 1e3)
            for k in range(len(clients)):
                i = (n + k) % len(clients)
                t = time.perf_counter()
                await clients[i].call_tool("call_tool", forward)
                via[i].append((time.perf_counter() - t) * 1e3)
    runs = []
    for (_, proc, out), v in zip(gateways, via, strict=True):
        marks = await _marks(proc, out, calls)
        if len(marks) != calls:
            raise RuntimeError(f"{len(marks)} complete marks for {calls} calls")
        runs.append({"direct": direct, "via": v, "stages": [_stages(x, m) for x, m in zip(v, marks, strict=True)]})
    return runs


async def main_async(trees: list[Path], rounds: int, calls: int) -> dict[str, dict[str, dict[str, float]]]:
    with tempfile.TemporaryDirectory() as d:
        upstream = subprocess.Popen([sys.executable, str(ECHO), "--http", "0"], stdout=subprocess.PIPE, text=True)
        procs: list[subprocess.Popen[Any]] = [upstream]
        try:
            assert upstream.stdout is not None
            up = f"http://127.0.0.1:{upstream.stdout.readline().strip()}"
            await _ready(f"{up}/mcp")
            cfg = Path(d) / "one.json"
            cfg.write_text(json.dumps({"mcpServers": {"up": {"url": f"{up}/mcp"}}}))
            gateways: list[tuple[str, subprocess.Popen[Any], Path]] = []
            for i, tree in enumerate(trees):
                port = _free_port()
                out = Path(d) / f"marks-{i}.json"
                env = {**os.environ, "PYTHONPATH": str(tree.resolve())}
                args = ["serve", "-c", str(cfg), "--cache", str(Path(d) / f"{i}.db"), "--transport", "http", "--port", str(port)]
                proc = subprocess.Popen([sys.executable, str(PROBE), str(out), *args], env=env, stdout=subprocess.DEVNULL)
                procs.append(proc)
                gateways.append((f"http://127.0.0.1:{port}", proc, out))
            for url, _, _ in gateways:
                await _ready(f"{url}/v1/ready")
            samples: dict[tuple[int, str], list[dict[str, Any]]] = {}
            for _ in range(rounds):
                for label, mode in MODES.items():
                    for i, run in enumerate(await _measure(up, gateways, mode, calls)):
                        samples.setdefault((i, label), []).append(run)
        finally:
            for proc in procs:
                proc.terminate()
                proc.wait(10)
    result: dict[str, dict[str, dict[str, float]]] = {}
    for (i, label), runs in samples.items():
        via = [x for r in runs for x in r["via"]]
        direct = [x for r in runs for x in r["direct"]]
        stages = np.array([s for r in runs for s in r["stages"]])
        row = {"direct p50": float(np.median(direct)), "via p50": float(np.median(via))}
        row["overhead p50"] = row["via p50"] - row["direct p50"]
        row.update({name: float(np.median(stages[:, k])) for k, name in enumerate(STAGES)})
        result.setdefault(str(trees[i]), {})[label] = row
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trees", nargs="+", type=Path, default=[BENCH.parent / "src"], help="source dirs to compare")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=100, help="interleaved calls per round and mode (one direct, one per tree)")
    args = parser.parse_args()
    out = asyncio.run(main_async(args.trees, args.rounds, args.calls))
    for tree, modes in out.items():
        for label, row in modes.items():
            print(f"\n{tree} ({label} client), ms per call, medians")
            for name, value in row.items():
                print(f"  {name:60} {value:7.2f}")


if __name__ == "__main__":
    main()
