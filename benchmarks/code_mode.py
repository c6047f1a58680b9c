"""Code mode and pre-selection: model turns and context tokens, sandbox overhead, R@k.

1. Turns and tokens: scripted multi-step tasks (3 to 20 calls) over the demo catalog and
   over three real upstream MCP servers (server-everything, server-memory,
   mcp-server-time, when installed by .ci/setup-mcp.sh), each solved three ways by a
   scripted model that knows which calls to make: one call per turn (find_tools, then
   each call in its own turn), ``use_tool`` (one find-and-run per turn) and code mode
   (find_tools, then one ``execute`` program). Every call really runs through a
   ``Session``. Tokens (o200k) that pass through the model's context: the tool
   definitions of every request, every tool result once, and what the model wrote
   (arguments, or the program). "Billed" adds the history each request re-reads.
2. Sandbox start and per-call overhead against a direct ``Gateway.execute``, in one run.
3. Pre-selection on every set in ../shared/data: R@k (k = 1, 3, 5) of the tools
   ``Session.preselect`` reveals before the first turn, and first-turn tokens against
   ``find_tools`` alone.

    .venv/bin/python benchmarks/code_mode.py [--queries 300]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import DATA, SETS, write_section
from toolscout import formats
from toolscout.accounting.tokens import count_tokens, count_tool_tokens
from toolscout.catalog import Catalog
from toolscout.codemode.runner import CodeLimits, code_runner, execute_tool, python_name
from toolscout.demo import demo_catalog
from toolscout.eval.dataset import load_queries, load_tools
from toolscout.gateway import Gateway
from toolscout.request import CallRequest
from toolscout.session import Session

FORMAT = "openai"
ROOT = Path(__file__).resolve().parent.parent
NODE_BIN = ROOT / ".ci" / "node" / "node_modules" / ".bin"


@dataclass
class Task:
    name: str
    calls: list[tuple[str, dict[str, Any]]]
    summary: str = "print(len(results), 'calls done')"
    """The program's last line: what it prints for the model (``results`` holds every
    result, in order)."""

    def program(self) -> str:
        lines = ["results = []"]
        for name, args in self.calls:
            lines.append(f"results.append(await {python_name(name)}(**{args!r}))")
        return "\n".join([*lines, self.summary])


def demo_tasks() -> list[Task]:
    repo = "acme/app"
    cities = ["Lima", "Oslo", "Kyiv", "Tokyo", "Nairobi"]
    return [
        Task("bug triage: list, read 3, comment on 3", [("github_list_issues", {"repo": repo, "labels": ["bug"]})]
             + [("github_get_issue", {"repo": repo, "number": n}) for n in (1, 2, 3)]
             + [("github_comment_on_issue", {"repo": repo, "number": n, "body": "triaged"}) for n in (1, 2, 3)],
             "print('commented on', sum(1 for r in results[4:] if r), 'of', results[0]['total'], 'bugs')"),
        Task("5-city forecast and statistics", [("weather_get_forecast", {"location": c, "days": 3}) for c in cities]
             + [("math_statistics", {"values": [12, 3, 8, 21, 25]})], "print(results[-1])"),
        Task("convert 8 measurements", [("units_convert", {"value": v, "from_unit": "km", "to_unit": "mi"}) for v in range(1, 9)],
             "print([r.get('result', r) if isinstance(r, dict) else r for r in results])"),
        Task("meeting in 4 time zones, then the invite",
             [("time_convert_timezone", {"datetime": "2026-12-01T15:00:00", "from_timezone": "UTC", "to_timezone": z})
              for z in ("Europe/Oslo", "America/Lima", "Asia/Tokyo", "Africa/Nairobi")]
             + [("calendar_create_event", {"summary": "sync", "start": "2026-12-01T15:00:00Z", "end": "2026-12-01T16:00:00Z"})],
             "print(len(results), 'done')"),
        Task("word counts of 6 texts, then statistics", [("text_word_count", {"text": "word " * (i * 7)}) for i in range(1, 7)]
             + [("math_statistics", {"values": [7, 14, 21, 28, 35, 42]})], "print(results[-1])"),
        Task("incidents to Jira", [("pagerduty_list_incidents", {"limit": 3})]
             + [("jira_create_issue", {"project_key": "OPS", "summary": f"incident {i}", "issue_type": "Bug"}) for i in range(3)],
             "print('created', len(results) - 1, 'issues')"),
        Task("mail 10 contacts", [("hubspot_get_contact", {"contact_id": f"c{i}"}) for i in range(10)]
             + [("gmail_send_email", {"to": [f"c{i}@example.com"], "subject": "hello", "body": "hi"}) for i in range(10)],
             "print('sent', len(results) // 2, 'mails')"),
        Task("channel report page", [("slack_list_channels", {"limit": 20}), ("math_statistics", {"values": [3, 5, 8]}),
                                     ("notion_create_page", {"parent_id": "p1", "title": "channels"})], "print('page created')"),
        Task("close 12 stale issues", [("github_list_issues", {"repo": repo, "state": "open"})]
             + [("github_close_issue", {"repo": repo, "number": n, "reason": "not_planned"}) for n in range(1, 13)],
             "print('closed', len(results) - 1)"),
        Task("summarise 15 issues", [("github_get_issue", {"repo": repo, "number": n}) for n in range(1, 16)]
             + [("math_statistics", {"values": list(range(1, 16))})], "print(results[-1])"),
    ]


def upstream_tasks() -> list[Task]:
    zones = ["Europe/Oslo", "America/Lima", "Asia/Tokyo", "Africa/Nairobi", "Australia/Sydney", "America/New_York"]
    people = [{"name": f"person{i}", "entityType": "person", "observations": [f"met on day {i}"]} for i in range(5)]
    return [
        Task("remember 5 people, read the graph", [("memory_create_entities", {"entities": [p]}) for p in people]
             + [("memory_read_graph", {})], "print(len(results[-1]['entities']), 'entities stored')"),
        Task("time in 6 cities", [("time_get_current_time", {"timezone": z}) for z in zones],
             "print({r['timezone']: r['datetime'][11:16] for r in results})"),
        Task("a meeting time in 4 zones", [("time_convert_time", {"source_timezone": "UTC", "time": "15:00", "target_timezone": z})
                                          for z in zones[:4]], "print(len(results), 'converted')"),
        Task("sum 8 pairs and echo the total", [("everything_get-sum", {"a": i, "b": i + 1}) for i in range(8)]
             + [("everything_echo", {"message": "total computed"})], "print(len(results), 'calls')"),
        Task("weather of 3 places, stored as notes", [("everything_get-structured-content", {"location": p}) for p in ("New York", "Chicago", "Los Angeles")]
             + [("memory_create_entities", {"entities": [{"name": "weather", "entityType": "note", "observations": ["done"]}]})],
             "print('stored', len(results) - 1, 'reports')"),
    ]


@dataclass
class Cost:
    turns: int = 0
    definitions: int = 0
    results: int = 0
    written: int = 0
    billed: int = 0
    history: int = 0
    failures: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def context(self) -> int:
        return self.definitions + self.results + self.written

    def request(self, session: Session) -> None:
        """One model request: the session's tool list, plus the history it re-reads."""
        defs = count_tool_tokens(session.tools(FORMAT, record=False))
        self.turns += 1
        self.definitions += defs
        self.billed += defs + self.history

    def answer(self, written: Any, outcome: Any) -> None:
        w = count_tokens(json.dumps(written))
        r = count_tokens(outcome.text())
        self.written += w
        self.results += r
        self.history += w + r
        self.failures += 0 if outcome.ok else 1


async def one_per_turn(gateway: Gateway, task: Task) -> Cost:
    session, cost = Session(gateway), Cost()
    names = list(dict.fromkeys(n for n, _ in task.calls))
    cost.request(session)
    find = {"query": "select:" + ",".join(names)}
    cost.answer(find, await session.ahandle("find_tools", find))
    for name, args in task.calls:
        cost.request(session)
        cost.answer(args, await session.ahandle(name, args))
    cost.request(session)  # the final answer
    return cost


async def with_use_tool(gateway: Gateway, task: Task) -> Cost:
    session, cost = Session(gateway, use_tool=True), Cost()
    for name, args in task.calls:
        cost.request(session)
        call = {"query": name, "params": args}
        cost.answer(call, await session.ahandle("use_tool", call))
    cost.request(session)
    return cost


async def with_code_mode(gateway: Gateway, task: Task) -> Cost:
    session, cost = Session(gateway, code_mode=True), Cost()
    names = list(dict.fromkeys(n for n, _ in task.calls))
    cost.request(session)
    find = {"query": "select:" + ",".join(names)}
    cost.answer(find, await session.ahandle("find_tools", find))
    cost.request(session)
    program = {"code": task.program()}
    outcome = await session.ahandle("execute", program)
    if not outcome.ok:
        cost.notes.append(outcome.text()[:200])
    cost.answer(program, outcome)
    cost.request(session)
    return cost


async def turns_and_tokens(label: str, gateway: Gateway, tasks: list[Task]) -> list[str]:
    rows = []
    totals = {k: Cost() for k in ("turn", "use", "code")}
    for task in tasks:
        costs = {
            "turn": await one_per_turn(gateway, task),
            "use": await with_use_tool(gateway, task),
            "code": await with_code_mode(gateway, task),
        }
        for key, c in costs.items():
            t = totals[key]
            t.turns += c.turns
            t.definitions += c.definitions
            t.results += c.results
            t.written += c.written
            t.billed += c.billed
            t.failures += c.failures
            for note in c.notes:
                print(f"  {task.name} / {key}: {note}", file=sys.stderr)
        turn, use, code = costs["turn"], costs["use"], costs["code"]
        rows.append(
            f"| {label} | {task.name} | {len(task.calls)} | {turn.turns} / {use.turns} / {code.turns} | "
            f"{turn.context:,} / {use.context:,} / {code.context:,} | {turn.context / code.context:.1f}x | "
            f"{turn.billed:,} / {use.billed:,} / {code.billed:,} | {turn.billed / code.billed:.1f}x |"
        )
        print(rows[-1])
    turn, use, code = totals["turn"], totals["use"], totals["code"]
    rows.append(
        f"| {label} | **all {len(tasks)} tasks** | {sum(len(t.calls) for t in tasks)} | {turn.turns} / {use.turns} / {code.turns} | "
        f"{turn.context:,} / {use.context:,} / {code.context:,} | {turn.context / code.context:.1f}x | "
        f"{turn.billed:,} / {use.billed:,} / {code.billed:,} | {turn.billed / code.billed:.1f}x |"
    )
    failed = {k: c.failures for k, c in totals.items() if c.failures}
    if failed:
        rows.append(f"| {label} | failed calls (counted anyway): {failed} | | | | | | |")
    return rows


async def real_upstreams(tmp: Path) -> Any:
    from toolscout.sources.mcp.aggregator import Aggregator
    from toolscout.sources.mcp.config import parse_config

    def find(name: str) -> str | None:
        for c in (NODE_BIN / name, Path(sys.executable).with_name(name)):
            if c.exists():
                return str(c)
        return None

    everything, memory, clock = find("mcp-server-everything"), find("mcp-server-memory"), find("mcp-server-time")
    if not (everything and memory and clock):
        return None
    config = parse_config({"mcpServers": {
        "everything": {"command": everything, "args": ["stdio"]},
        "memory": {"command": memory, "env": {"MEMORY_FILE_PATH": str(tmp / "memory.json")}},
        "time": {"command": clock, "args": ["--local-timezone", "UTC"]},
    }})
    aggregator = Aggregator(config, Catalog())
    await aggregator.start()
    return aggregator


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(p / 100 * (len(ordered) - 1)))]


async def overhead(rounds: int = 30, calls: int = 40) -> list[str]:
    """The same tool call made directly and from a program, and the sandbox's own cost,
    interleaved in one run so every figure sees the same machine."""
    gateway = Gateway(demo_catalog())
    runner = code_runner(gateway, CodeLimits(tool_calls=calls + 5))
    request = CallRequest("text_word_count", {"text": "one two three"})
    t0 = time.perf_counter()
    cold = await runner.run({"code": "1"})
    cold_ms = (time.perf_counter() - t0) * 1000
    assert cold.ok, cold.text()
    program = {"code": f"for i in range({calls}):\n    await text_word_count(text='one two three')\n"}
    empty = {"code": f"for i in range({calls}):\n    pass\n"}
    direct, inside, start = [], [], []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(calls):
            await gateway.execute(request)
        direct.append((time.perf_counter() - t0) * 1000 / calls)
        t0 = time.perf_counter()
        await runner.run(empty)
        empty_ms = (time.perf_counter() - t0) * 1000
        start.append(empty_ms)
        t0 = time.perf_counter()
        done = await runner.run(program)
        inside.append(((time.perf_counter() - t0) * 1000 - empty_ms) / calls)
        assert done.ok, done.text()
    await runner.aclose()
    d50 = percentile(direct, 50)
    return [
        f"| what ({rounds} rounds) | p50 ms | p95 ms | vs a direct call (p50) |",
        "|---|---|---|---|",
        f"| direct `Gateway.execute` (text_word_count, mean of {calls} in a row) | {d50:.3f} | {percentile(direct, 95):.3f} | 1x |",
        f"| the same call from inside a program (a loop of {calls}, less the empty loop, per call) | "
        f"{percentile(inside, 50):.3f} | {percentile(inside, 95):.3f} | {percentile(inside, 50) / d50:.1f}x |",
        f"| one `execute` of an empty loop (sandbox checkout, run, return) | {percentile(start, 50):.2f} | "
        f"{percentile(start, 95):.2f} | {percentile(start, 50) / d50:.0f}x |",
        f"| the first `execute` of the process (the worker starts) | {cold_ms:.1f} | | |",
    ]


def preselection(queries_per_set: int) -> list[str]:
    rows = [
        "| set (queries) | R@1 | R@3 | R@5 | tools revealed at k=3 (mean) | first turn, preselect k=3 | first turn, find_tools alone | find_tools path to the same point |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in SETS:
        folder = DATA / name
        if not (folder / "tools.jsonl").exists():
            rows.append(f"| {name} | not found in {DATA} | | | | | | |")
            continue
        tools = load_tools(folder / "tools.jsonl")
        queries = load_queries(folder / "queries.jsonl")
        step = max(1, len(queries) // queries_per_set)
        queries = queries[::step][:queries_per_set]
        catalog = Catalog()
        catalog.extend(tools, handlers={})
        gateway = Gateway(catalog, learn=False)
        recall = {k: [] for k in (1, 3, 5)}
        shown, first, path = [], [], []
        alone = count_tool_tokens(Session(gateway).tools(FORMAT, record=False))
        for q in queries:
            groups = q.relevant_groups()
            for k in (1, 3, 5):
                session = Session(gateway)
                picked = set(session.preselect(q.query, k))
                recall[k].append(sum(1 for g in groups if g & picked) / len(groups))
                if k == 3:
                    shown.append(len(picked))
                    first.append(count_tool_tokens(session.tools(FORMAT, record=False)))
                    plain = Session(gateway)
                    found = plain.handle("find_tools", {"query": q.query, "limit": 3})
                    path.append(alone + count_tokens(json.dumps({"query": q.query})) + count_tokens(found.text())
                                + count_tool_tokens(plain.tools(FORMAT, record=False)))
        mean = statistics.fmean
        row = (
            f"| {name} ({len(queries)}) | {100 * mean(recall[1]):.1f} | {100 * mean(recall[3]):.1f} | {100 * mean(recall[5]):.1f} | "
            f"{mean(shown):.2f} | {mean(first):.0f} | {alone} | {mean(path):.0f} (2 turns) |"
        )
        print(row)
        rows.append(row)
    return rows


async def main_async(queries: int) -> None:
    demo = Gateway(demo_catalog())
    definition = count_tool_tokens([formats.render(execute_tool(demo.catalog.categories()), FORMAT)])
    header = [
        "| catalog | task | calls | turns: one per turn / use_tool / code | context tokens: one per turn / use_tool / code | "
        "one per turn / code | billed input: one per turn / use_tool / code | one per turn / code |",
        "|---|---|---|---|---|---|---|---|",
    ]
    rows = await turns_and_tokens("demo", demo, demo_tasks())
    with tempfile.TemporaryDirectory() as tmp:
        aggregator = await real_upstreams(Path(tmp))
        if aggregator is None:
            rows.append("| upstreams | not installed (run .ci/setup-mcp.sh) | | | | | | |")
        else:
            try:
                rows += await turns_and_tokens("real upstreams", Gateway(aggregator.catalog, call_timeout=None), upstream_tasks())
            finally:
                await code_runner(Gateway(aggregator.catalog)).aclose()
                await aggregator.aclose()
    await code_runner(demo).aclose()
    speed = await overhead()
    for line in speed:
        print(line)
    pre = preselection(queries)
    body = "\n".join([
        "Scripted tasks, each solved three ways by a scripted model that knows which calls to make: one call per turn "
        "(find_tools, then each call in its own turn), `use_tool` (one find-and-run per turn) and code mode (find_tools, "
        "then one `execute` program). Every call really runs through a `Session` (demo catalog: 316 simulated tools; "
        "real upstreams: server-everything, server-memory, mcp-server-time over stdio). Context tokens (o200k, "
        "OpenAI format): the tool definitions of every request, each result once, and what the model wrote (arguments "
        "or the program). Billed input adds the conversation every request re-reads.",
        "",
        *header,
        *rows,
        "",
        f"The `execute` definition over the demo catalog: {definition} tokens.",
        "",
        "Sandbox overhead (one process, interleaved rounds):",
        "",
        *speed,
        "",
        f"Pre-selection (`Session.preselect(message, k)` with auto-cut; up to {queries} evenly spaced queries per set; "
        "R@k = share of a query's needed tools among those revealed). First-turn tokens are the definitions of the "
        "first request; the find_tools path is what reaching the same tools costs without pre-selection: the first "
        "request, the find_tools call and its result, and the second request's definitions.",
        "",
        *pre,
    ])
    write_section("code-mode", "Code mode and pre-selection (issue 25)", "python benchmarks/code_mode.py", body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=300, help="queries per evaluation set for pre-selection")
    args = parser.parse_args()
    asyncio.run(main_async(args.queries))


if __name__ == "__main__":
    main()
