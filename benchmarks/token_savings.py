"""Token budget of a tool list: static list vs find_tools only vs after k searches.

Catalogs are evenly spaced samples of real tools (toolpool, with their own schemas) at 50,
1,000 and 10,000 tools; o200k counts of the compact JSON in each format (Anthropic and
Gemini figures are o200k estimates). Also times the loaders and the counter.

    .venv/bin/python benchmarks/token_savings.py
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import DATA, write_section
from toolscout.accounting.tokens import count_tool_tokens, encoding, savings_report
from toolscout.formats import FORMATS, render_many
from toolscout.meta_tools import FIND_TOOLS
from toolscout.sources.declarations import load_declarations

SIZES = (50, 1000, 10000)
FORMATS_SHOWN = ("openai", "anthropic", "gemini", "mcp")


def main() -> None:
    path = DATA / "toolpool" / "tools.jsonl"
    t0 = time.perf_counter()
    pool, skipped = load_declarations(path, skip_invalid=True)
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    encoding("o200k_base")
    enc_s = time.perf_counter() - t0

    lines = [
        f"Source: {len(pool)} toolpool tools with their own schemas, loaded with `load_declarations` in "
        f"{load_s:.2f} s ({len(skipped)} skipped); o200k encoder built offline in {enc_s:.2f} s.",
        "",
        "| format | tools | static list | find_tools only | % of static | after 3 searches x 5 | % of static |",
        "|---|---|---|---|---|---|---|",
    ]
    for fmt in FORMATS_SHOWN:
        meta = render_many([FIND_TOOLS], fmt)
        for n in SIZES:
            step = len(pool) / n
            sample = [pool[int(i * step)] for i in range(n)]
            r = savings_report(sample, meta, fmt, found_per_search=5, searches=3)
            lines.append(
                f"| {fmt} | {n:,} | {r.static:,} | {r.meta_only} | {r.meta_pct:.2f}% | "
                f"{r.after_searches:,} | {r.after_pct:.1f}% |"
            )
    meta_tokens = {f: count_tool_tokens(render_many([FIND_TOOLS], f)) for f in FORMATS}
    lines += ["", "`find_tools` definition alone: " + ", ".join(f"{f} {t}" for f, t in meta_tokens.items()) + " tokens."]

    # counting speed: render + count 1,000 tools, median of 5
    sample = pool[:1000]
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        count_tool_tokens(render_many(sample, "openai"))
        times.append(time.perf_counter() - t0)
    lines.append(f"Render + count 1,000 tools (openai): {statistics.median(times) * 1000:.0f} ms (median of 5).")
    body = "\n".join(lines)
    print(body)
    write_section("tokens", "Token savings (o200k)", "python benchmarks/token_savings.py", body)


if __name__ == "__main__":
    main()
