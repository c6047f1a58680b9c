"""What keeping sessions in Redis costs per turn, against the same session in memory.

1,000 generated tools (an async no-op handler each, so the figures show the session and
its store, not a tool); one throwaway redis-server on a free loopback port (Debian's
``redis-server``, as the tests use). Each operation is timed in blocks, the in-memory and
the Redis session alternating block by block so both see the same machine load:

- ``find_tools`` (reveals tools and counts the search: refresh + save, 2 round trips);
- a call to a revealed tool that was not the last used (recency changes: 2 round trips);
- a call to the tool used last (nothing changes: the refresh only, 1 round trip);
- the same through the sync ``handle`` (the library's path: the sync client).

    .venv/bin/python benchmarks/session_store.py [--no-write]
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from toolscout import Catalog, Tool
from toolscout.gateway import Gateway
from toolscout.session import Session
from toolscout.sessions.redis import RedisSessionStore

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _report import write_section

TOOLS = 1000
BLOCKS = 15
PER_BLOCK = 100
WORDS = ("invoice", "weather", "calendar", "ticket", "payment", "email", "report", "inventory", "shipment", "user")
QUERIES = [f"{a} {b}" for a in WORDS[:5] for b in WORDS[5:]]


async def _noop(args: dict) -> str:
    return "ok"


def gateway() -> Gateway:
    catalog = Catalog()
    for i in range(TOOLS):
        a, b = WORDS[i % 10], WORDS[(i // 10) % 10]
        schema = {"type": "object", "properties": {"id": {"type": "string", "description": f"The {b} id."}}}
        catalog.add(Tool(f"{a}_{b}_{i}", f"Manage {a} records for a {b}, variant {i}.", schema), handler=_noop)
    return Gateway(catalog)


def start_redis() -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("redis-server is not installed (bash .ci/setup-services.sh installs it)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    args = [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    proc = subprocess.Popen([*args, "--daemonize", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5) as c:
                c.sendall(b"PING\r\n")
                if c.recv(16).startswith(b"+PONG"):
                    return proc, f"redis://127.0.0.1:{port}/0"
        except OSError:
            pass
        time.sleep(0.01)
    proc.kill()
    sys.exit("redis-server did not start")


Op = Callable[[Session, int], Awaitable[object]]


async def find(session: Session, i: int) -> object:
    return await session.ahandle("find_tools", {"query": QUERIES[i % len(QUERIES)], "limit": 3})


async def call_alternating(session: Session, i: int) -> object:
    names = session.revealed
    return await session.ahandle(names[i % 2], {"id": "x"})


async def call_same(session: Session, i: int) -> object:
    return await session.ahandle(session.revealed[-1], {"id": "x"})


async def sync_call(session: Session, i: int) -> object:
    names = session.revealed
    return session.handle(names[i % 2], {"id": "x"})  # the library's sync path (run_sync)


async def measure(op: Op, memory: Session, stored: Session) -> tuple[list[float], list[float], list[float]]:
    """Per-operation times in µs, blocks interleaved, and each block pair's p50 overhead."""
    mem: list[float] = []
    red: list[float] = []
    pairs: list[float] = []
    for block in range(BLOCKS):
        got: dict[int, list[float]] = {}
        for session, out in ((memory, mem), (stored, red)) if block % 2 == 0 else ((stored, red), (memory, mem)):
            times = got.setdefault(id(session), [])
            for i in range(PER_BLOCK):
                started = time.perf_counter()
                await op(session, i)
                times.append((time.perf_counter() - started) * 1e6)
            out.extend(times)
        pairs.append(statistics.median(got[id(stored)]) - statistics.median(got[id(memory)]))
    return mem, red, pairs


def pct(values: list[float], q: float) -> float:
    return statistics.quantiles(values, n=100)[int(q) - 1]


async def bare_trip_us(store: RedisSessionStore) -> float:
    """One round trip with no work on either side (PING), p50 in µs."""
    times = []
    for _ in range(BLOCKS * PER_BLOCK // 2):
        started = time.perf_counter()
        await store.aping()
        times.append((time.perf_counter() - started) * 1e6)
    return pct(times, 50)


async def run() -> tuple[list[str], dict[str, float]]:
    proc, url = start_redis()
    store = RedisSessionStore(url)
    gw = gateway()
    rows = [
        "| operation | round trips | in memory p50 / p99 | Redis p50 / p99 | overhead p50 | per block (min-max) |",
        "|---|---|---|---|---|---|",
    ]
    figures: dict[str, float] = {}
    try:
        memory = Session(gw, session_id="m")
        stored = Session(gw, session_id="r", store=store)
        for s in (memory, stored):  # warm: two tools revealed, renders cached
            await s.ahandle("find_tools", {"query": "select:invoice_weather_0,calendar_email_2"})
        ops: list[tuple[str, str, Op]] = [
            ("find_tools (reveals, counts the search)", "2", find),
            ("call a revealed tool (recency changes)", "2", call_alternating),
            ("call the tool used last (no change)", "1", call_same),
            ("sync handle(), call (recency changes)", "2", sync_call),
        ]
        for label, trips, op in ops:
            if op is not find:  # calls need their two tools revealed again after the finds
                for s in (memory, stored):
                    await s.ahandle("find_tools", {"query": "select:invoice_weather_0,calendar_email_2"})
            mem, red, pairs = await measure(op, memory, stored)
            m50, m99, r50, r99 = pct(mem, 50), pct(mem, 99), pct(red, 50), pct(red, 99)
            figures[label] = r50 - m50
            spread = f"{min(pairs):+.0f} to {max(pairs):+.0f} µs"
            rows.append(
                f"| {label} | {trips} | {m50:.0f} / {m99:.0f} µs | {r50:.0f} / {r99:.0f} µs | +{r50 - m50:.0f} µs | {spread} |"
            )
        figures["ping"] = await bare_trip_us(store)
        figures["state bytes"] = len(json.dumps(stored.state(), separators=(",", ":")))
        figures["revealed"] = len(stored.revealed)
        await store.aclose()
    finally:
        proc.kill()
        proc.wait(10)
    return rows, figures


def main() -> None:
    rows, figures = asyncio.run(run())
    load = os.getloadavg()[0]
    table = "\n".join(rows)
    print(table)
    print(f"bare round trip p50 {figures['ping']:.0f} µs; load average {load:.1f}")
    body = f"""{TOOLS:,} tools; {BLOCKS} blocks of {PER_BLOCK} operations per path, in-memory and Redis
blocks alternating; Redis 7 on loopback (one throwaway `redis-server`, no persistence). A
round trip is one Lua script (refresh before the call; compare-and-set save after it, only
when the state changed).

{table}

A bare round trip (PING) took {figures['ping']:.0f} µs p50 in this run (load average
{load:.1f} from other jobs on {os.cpu_count()} CPUs: the p99 column and the spread between
blocks are mostly that load, as Redis and the gateway take turns on the same CPUs). A
turn that changes the session pays two round trips plus encoding its state (here
{figures['revealed']:.0f} revealed tools, {figures['state bytes']:,.0f} bytes of JSON) and a
compare-and-set; one that changes nothing pays one trip. Against a model turn (hundreds of
ms) this is noise; a Redis across a network adds its own round-trip time, twice per turn
that changes the session."""
    if "--no-write" not in sys.argv:
        write_section("session-store", "Sessions in Redis: per-turn overhead", "python benchmarks/session_store.py", body)


if __name__ == "__main__":
    main()
