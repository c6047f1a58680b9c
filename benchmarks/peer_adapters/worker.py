"""Rank one query set with one method, inside that method's own interpreter.

Run by ``benchmarks/peers.py`` as a subprocess (one per method and data set) with the
peer's venv python, so peers' imports never meet. It prints nothing useful; it writes one
JSON file: the top-k names per query, each query's search time, and the build time.
Metrics are computed by the caller, the same way for every method.

Standard library only at import time; each adapter imports its own peer lazily.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

# method -> (adapter module, distribution whose version is reported)
METHODS: dict[str, tuple[str, str]] = {
    "fastmcp-bm25": ("fastmcp_peer", "fastmcp"),
    "toolpicker-bm25": ("toolpicker_peer", "toolpicker"),
    "toolpicker-hybrid": ("toolpicker_peer", "toolpicker"),
    "callbus-bm25": ("callbus_peer", "callbus"),
    "callbus-dense": ("callbus_peer", "callbus"),
    "callbus-hybrid": ("callbus_peer", "callbus"),
    "toolscout-keyword": ("toolscout_peer", "toolscout"),
    "toolscout-hybrid": ("toolscout_peer", "toolscout"),
    "toolscout-hybrid-int8": ("toolscout_peer", "toolscout"),
    "toolscout-hybrid-model": ("toolscout_peer", "toolscout"),
    "toolscout-find_tools": ("toolscout_peer", "toolscout"),
}

Searcher = Callable[[str, int], list[str]]


def _read_jsonl(path: Path, limit: int | None = None) -> list[dict]:
    rows = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
                if limit is not None and len(rows) >= limit:
                    break
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("--method", required=True, choices=sorted(METHODS))
    p.add_argument("--tools", type=Path, required=True)
    p.add_argument("--queries", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--max-tools", type=int, default=None)
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--cache", type=Path, default=None, help="where tool vectors are cached")
    args = p.parse_args(argv)

    module_name, dist = METHODS[args.method]
    from importlib.metadata import version

    adapter = importlib.import_module(module_name)
    tools = _read_jsonl(args.tools, args.max_tools)
    queries = _read_jsonl(args.queries)
    ctx = {
        "cache": args.cache,
        "k": args.k,
        "notes": [],
        "tools_path": args.tools,
        "max_tools": args.max_tools,
    }

    t0 = time.perf_counter()
    search: Searcher = adapter.build(args.method, tools, ctx)
    search("warm up", args.k)  # lazy indexes (FastMCP's) build on the first search
    build_s = time.perf_counter() - t0

    results = []
    clock = time.perf_counter_ns
    for q in queries:
        start = clock()
        ranked = search(q["query"], args.k)
        ms = (clock() - start) / 1e6
        results.append({"id": q["id"], "ranked": ranked[: args.k], "ms": ms})

    out = {
        "method": args.method,
        "version": version(dist),
        "n_tools": len(tools),
        "build_s": build_s,
        "notes": ctx["notes"],
        "results": results,
    }
    args.out.write_text(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
