"""Who searches, and what it costs: first-turn tokens per provider and mode, and the
search-result cache on a replayed query log.

Part 1: evenly spaced samples of real toolpool tools (their own schemas) at 50, 1,000 and
10,000 tools. For each adapter mode, the tokens the model holds in context on its first
turn (what the session's ledger records: the meta or search tool and pinned tools; deferred
definitions are kept out of context by the provider) and the tokens of every definition
in the request (what is uploaded; deferred ones included), o200k counts of the compact
JSON (Anthropic figures are o200k estimates).

Part 2: toolpool's queries replayed with repeats (a Zipf-like draw, as agents repeat a few
requests), keyword search over all toolpool tools, with and without the cache: hit rate,
p50/p95 per search (hit and miss), and a catalog change half-way whose first answers are
compared with a fresh gateway's (never served from the cache).

    .venv/bin/python benchmarks/hosted_search.py
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import DATA, write_section
from toolscout import Catalog, Tool
from toolscout.accounting.tokens import count_tool_tokens
from toolscout.adapters.anthropic import MessagesAdapter
from toolscout.adapters.openai import ChatCompletionsAdapter, ResponsesAdapter
from toolscout.gateway import Gateway
from toolscout.session import Session
from toolscout.sources.declarations import load_declarations

SIZES = (50, 1000, 10000)
REPLAY = 4000


def catalog_of(tools: list[Tool]) -> Catalog:
    cat = Catalog()
    for t in tools:
        cat.add(t, handler=lambda a: "ok")
    return cat


def modes() -> list[tuple[str, str, str, Any]]:
    """(provider, mode, who searches, adapter factory)."""
    return [
        ("OpenAI Chat", "static (every tool)", "the model reads all", None),
        ("OpenAI Chat", "find_tools", "toolscout", lambda s: ChatCompletionsAdapter(s)),
        ("OpenAI Responses", "find_tools", "toolscout", lambda s: ResponsesAdapter(s)),
        ("OpenAI Responses", "native=True (client tool_search)", "toolscout", lambda s: ResponsesAdapter(s, native=True)),
        ("OpenAI Responses", "hosted (server tool_search)", "OpenAI", lambda s: ResponsesAdapter(s, native="hosted")),
        (
            "OpenAI Responses",
            "hosted + namespaces by category",
            "OpenAI",
            lambda s: ResponsesAdapter(s, native="hosted", namespaces="category"),
        ),
        ("Anthropic", "find_tools", "toolscout", lambda s: MessagesAdapter(s)),
        ("Anthropic", "native=True (tool_reference)", "toolscout", lambda s: MessagesAdapter(s, native=True)),
        ("Anthropic", "hosted (BM25 tool search)", "Anthropic", lambda s: MessagesAdapter(s, native="hosted")),
    ]


def first_turn(pool: list[Tool]) -> str:
    rows = [
        "| provider | mode | who ranks | in context, turn 1 (50 / 1,000 / 10,000 tools) | uploaded per request |",
        "|---|---|---|---|---|",
    ]
    for provider, mode, who, make in modes():
        context, uploaded = [], []
        for n in SIZES:
            step = len(pool) / n
            sample = [pool[int(i * step)] for i in range(n)]
            session = Session(Gateway(catalog_of(sample), learn=False))
            if make is None:
                defs = [session.render(t.name, "openai") for t in sample]
                context.append(count_tool_tokens(defs))
                uploaded.append(context[-1])
                continue
            adapter = make(session)
            sent = adapter.tools()
            uploaded.append(count_tool_tokens(sent))
            context.append(session.ledger.turns[-1].tokens)
        rows.append(
            f"| {provider} | {mode} | {who} | {' / '.join(f'{c:,}' for c in context)} | "
            f"{' / '.join(f'{u:,}' for u in uploaded)} |"
        )
    return "\n".join(rows)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def cache_replay(pool: list[Tool]) -> str:
    queries = [json.loads(line)["query"] for line in (DATA / "toolpool" / "queries.jsonl").open()]
    rng = random.Random(7)
    distinct = rng.sample(queries, min(600, len(queries)))
    weights = [1 / (rank + 1) for rank in range(len(distinct))]  # Zipf: a few requests dominate
    log = rng.choices(distinct, weights=weights, k=REPLAY)
    lines = []
    for label, size in (("no cache", None), ("cache of 1,024", 1024)):
        gateway = Gateway(catalog_of(pool), learn=False, result_cache=size)
        gateway.find({"query": "warm up the index"})
        hit_ms, miss_ms, all_ms = [], [], []
        for q in log:
            before = gateway.result_cache.stats().hits if gateway.result_cache else 0
            t0 = time.perf_counter()
            gateway.find({"query": q})
            ms = (time.perf_counter() - t0) * 1000
            all_ms.append(ms)
            if gateway.result_cache is not None:
                (hit_ms if gateway.result_cache.stats().hits > before else miss_ms).append(ms)
        stats = gateway.result_cache.stats() if gateway.result_cache else None
        rate = f"{stats.hit_rate:.1%}" if stats else "-"
        detail = (
            f"hit p50 {statistics.median(hit_ms):.3f} ms, miss p50 {statistics.median(miss_ms):.3f} ms"
            if hit_ms and miss_ms
            else "-"
        )
        lines.append(
            f"| {label} | {len(set(log))} distinct of {len(log):,} | {rate} | {statistics.median(all_ms):.3f} | "
            f"{percentile(all_ms, 0.95):.3f} | {sum(all_ms) / 1000:.2f} s | {detail} |"
        )
    # a catalog change is never answered from the cache
    gateway = Gateway(catalog_of(pool), learn=False, result_cache=1024)
    for q in log[:500]:
        gateway.find({"query": q})
    added = Tool("zz_new_translation_tool", "Translate text between any two languages instantly.")
    gateway.catalog.add(added, handler=lambda a: "ok")
    fresh = Gateway(catalog_of([*pool, added]), learn=False)
    differ = sum(
        [t.name for t in gateway.find({"query": q}).found] != [t.name for t in fresh.find({"query": q}).found]
        for q in log[:500]
    )
    head = [
        "| run | replayed | hit rate | p50 ms | p95 ms | total | hit vs miss |",
        "|---|---|---|---|---|---|---|",
    ]
    tail = (
        f"\nAfter a tool was added half-way, the first 500 replayed queries were answered as a fresh gateway "
        f"answers them in {500 - differ} of 500 cases (stale answers: {differ})."
    )
    return "\n".join(head + lines) + "\n" + tail


def main() -> None:
    pool, _ = load_declarations(DATA / "toolpool" / "tools.jsonl", skip_invalid=True)
    part1 = first_turn(pool)
    print(part1)
    part2 = cache_replay(pool)
    print(part2)
    body = (
        "First-turn tokens by provider and mode (toolpool samples; the ledger's in-context count, and "
        "every definition uploaded):\n\n" + part1 + "\n\n"
        f"Search-result cache: toolpool's queries replayed with Zipf-like repeats over all {len(pool):,} "
        "toolpool tools, keyword search:\n\n" + part2
    )
    write_section("hosted-search", "Hosted search, namespaces and the result cache (issue 26)",
                  ".venv/bin/python benchmarks/hosted_search.py", body)


if __name__ == "__main__":
    main()
