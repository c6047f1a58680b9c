"""Hybrid ``find_tools`` with never-seen queries at 13.6k tools: latency and where it goes, by stage.

Each version (``--trees``: a git revision checked out into a temporary worktree, or ``.`` for
this checkout) runs in its own long-lived worker process over the toolpool catalog (vectors
from the benchmark cache, ``~/.cache/toolscout-bench/vectors.db``) with the default query
encoder. The queries (200 toolpool queries, every 12th from the second: none of them seen
before by any worker) go out in chunks of 25, the versions taking turns chunk by chunk, so
a change of load on the shared machine hits every version alike. Each query is one
``Gateway.find_tools(query, limit=5)``: parse, search (keyword leg, embedding, dense, fusion,
signals, AutoCut) and rendering.

Stages are timed the same way in every version, by wrapping the functions each version has
(the query encoder's ``embed``, the dense product, the keyword leg, the fusion, the finishing
step, the rendering); the rest of ``find_tools`` is ``other``. Each request's work is counted too: the texts the
encoder read and their wordpieces (padded: as the encoder's batches ran them), encoder calls
and model runs, dense products (one product may score several texts) and rankings (the whole
request and each sub-intent's). Wall time is what a caller
waits for; CPU time (the process's, the encoder's helper thread included) is what the query
costs, which a loaded machine inflates less.

    .venv/bin/python benchmarks/hybrid_latency.py --trees 65f5f88,672a837,. [--no-write]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import write_section
from _trees import checked_out, take_turns

CACHE = Path.home() / ".cache" / "toolscout-bench" / "vectors.db"
CHUNK = 25
_LEAVES = ("embedding", "variants", "dense product", "keyword leg", "fusion", "signals", "render")
"""The timed stages that do not nest in one another (``other`` is the wall time outside them)."""


def _worker(queries: int, mode: str) -> None:
    """Serve chunks of queries from stdin ("<start> <stop>"), one JSON line of timings each."""
    from search_quality import DEFAULT_DATA
    from toolscout import gateway as gateway_module
    from toolscout.catalog import Catalog
    from toolscout.eval.dataset import load_queries, load_tools
    from toolscout.gateway import Gateway
    from toolscout.search import hybrid
    from toolscout.search import index as index_module
    try:
        from toolscout.storage import SQLiteStore as Store
    except ImportError:  # before the storage package (65f5f88)
        from toolscout.store import Store  # type: ignore[no-redef]

    tools = load_tools(DEFAULT_DATA / "toolpool" / "tools.jsonl")
    texts = [q.query for q in load_queries(DEFAULT_DATA / "toolpool" / "queries.jsonl")]
    texts = texts[1::12][:queries] if mode == "hybrid" else texts[:queries]
    if mode == "hybrid":
        gateway = Gateway(Catalog(tools), embeddings=True, vector_store=Store(CACHE))
    else:
        gateway = Gateway(Catalog(tools))
    gateway.find_tools("warm up the index", limit=5)
    spent: dict[str, float] = defaultdict(float)
    counted: dict[str, int] = defaultdict(int)

    def wrap(owner: object, name: str, label: str, count: str | None = None) -> None:
        fn = getattr(owner, name, None)
        if fn is None:  # an older version without this function: the stage reads "-"
            return

        def timed(*args: object, **kwargs: object) -> object:
            t0 = time.perf_counter()
            if count is not None:
                counted[count] += 1
            try:
                return fn(*args, **kwargs)
            finally:
                spent[label] += time.perf_counter() - t0

        setattr(owner, name, timed)

    def count(owner: object, name: str, what: str, size: object = None) -> None:
        """Count calls of ``owner.name`` (and with ``size``, what it says each call holds)."""
        fn = getattr(owner, name, None)
        if fn is None:
            return

        def counting(*args: object, **kwargs: object) -> object:
            counted[what] += 1
            if callable(size):
                for key, n in size(*args).items():
                    counted[key] += n
            return fn(*args, **kwargs)

        setattr(owner, name, counting)

    if mode == "hybrid":
        dense = gateway.hybrid.dense
        wrap(dense.query_embedder, "embed", "embedding")
        wrap(dense, "_similarities", "dense product", count="products")
        count(dense.query_embedder, "embed", "encoder calls", lambda texts: {"texts encoded": len(texts)})
        count(dense.query_embedder, "run_batch", "encoder runs", lambda encs: {
            "wordpieces": sum(len(e.ids) for e in encs), "padded wordpieces": len(encs) * max(len(e.ids) for e in encs)})
        count(gateway.index, "_rank_one", "rankings")
        try:
            from toolscout.embed import onnx as onnx_module
        except ImportError:  # a version without the ONNX encoder module
            onnx_module = None  # type: ignore[assignment]
        if onnx_module is not None:
            wrap(onnx_module, "_encode", "tokenising")
        wrap(hybrid, "rewrite", "variants")
    try:
        from toolscout.search import signals as signals_module
    except ImportError:  # before the signals step
        signals_module = None  # type: ignore[assignment]
    if signals_module is not None:
        for name in ("Intent", "Usage", "FuzzyName", "ExactName"):
            if hasattr(signals_module, name):
                wrap(getattr(signals_module, name), "apply", "signals")
    wrap(hybrid, "keyword_input", "keyword leg")
    wrap(hybrid, "fuse", "fusion")
    wrap(index_module, "finish", "ranking (finish)")
    wrap(gateway_module.FindResult, "render", "render")
    wrap(gateway.index, "search", "index.search")
    print(json.dumps({"ready": len(tools)}), flush=True)
    for line in sys.stdin:
        start, stop = map(int, line.split())
        rows = []
        for q in texts[start:stop]:
            spent.clear()
            counted.clear()
            c0, t0 = time.process_time(), time.perf_counter()
            gateway.find_tools(q, limit=5, search_type=mode)
            wall, cpu = (time.perf_counter() - t0) * 1000, (time.process_time() - c0) * 1000
            row = {"wall": wall, "cpu": cpu, **{k: v * 1000 for k, v in spent.items()}, **counted}
            if mode == "hybrid":  # what no timed stage holds: splitting, sub-searches' bookkeeping, top-k, sets
                row["other"] = wall - sum(row.get(k, 0.0) for k in _LEAVES)
            rows.append(row)
        print(json.dumps(rows), flush=True)


def _start(src: Path, queries: int, mode: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{Path(__file__).parent}"}
    proc = subprocess.Popen(
        [sys.executable, __file__, "--worker", "--queries", str(queries), "--mode", mode], env=env, text=True,
        stdin=subprocess.PIPE, stdout=subprocess.PIPE,
    )
    assert proc.stdout is not None
    json.loads(proc.stdout.readline())
    return proc


def _stats(rows: list[dict[str, float]]) -> dict[str, tuple[float, float, float]]:
    """(mean, p50, p95) per measure; a stage a query skipped counts 0."""
    keys = sorted({k for r in rows for k in r})
    out = {}
    for k in keys:
        values = [r.get(k, 0.0) for r in rows]
        out[k] = (float(np.mean(values)), float(np.percentile(values, 50)), float(np.percentile(values, 95)))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trees", default="672a837,.", help="revisions (or '.' for this checkout), comma-separated")
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--mode", default="hybrid", choices=["hybrid", "keyword"])
    parser.add_argument("--rounds", type=int, default=1, help="passes over the queries (keyword: the same queries again)")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        _worker(args.queries, args.mode)
        return
    trees = args.trees.split(",")
    load0 = os.getloadavg()[0]
    chunks = [(s, s + CHUNK) for _ in range(args.rounds) for s in range(0, args.queries, CHUNK)]
    with checked_out({t: "HEAD" if t == "." else t for t in trees}) as sources:
        rows = take_turns({t: _start(sources[t], args.queries, args.mode) for t in trees}, chunks)
    load1 = os.getloadavg()[0]
    label = {t: ("this tree" if t == "." else t) for t in trees}
    stats = {t: _stats(rows[t]) for t in trees}
    lines = ["| version | wall p50 / p95 (ms) | CPU p50 / p95 (ms) |", "|---|---|---|"]
    for t in trees:
        s = stats[t]
        lines.append(f"| {label[t]} | {s['wall'][1]:.1f} / {s['wall'][2]:.1f} | {s['cpu'][1]:.1f} / {s['cpu'][2]:.1f} |")
    stages = ["tokenising", "embedding", "variants", "dense product", "keyword leg", "fusion", "signals",
              "ranking (finish)", "index.search", "render", "other"]
    if args.mode == "keyword":
        stages = ["signals", "ranking (finish)", "index.search", "render"]
    head = "| stage, wall ms (mean / p50 / p95) | " + " | ".join(label[t] for t in trees) + " |"
    lines += ["", head, "|---|" + "---|" * len(trees)]
    for k in stages:
        cells = [f"{stats[t][k][0]:.2f} / {stats[t][k][1]:.2f} / {stats[t][k][2]:.2f}" if k in stats[t] else "-" for t in trees]
        lines.append(f"| {k} | " + " | ".join(cells) + " |")
    counts = ["texts encoded", "wordpieces", "padded wordpieces", "encoder calls", "encoder runs", "products", "rankings"]
    if args.mode == "hybrid":
        lines += ["", "| per request (mean / p50 / p95) | " + " | ".join(label[t] for t in trees) + " |", "|---|" + "---|" * len(trees)]
        for k in counts:
            cells = [f"{stats[t][k][0]:.2f} / {stats[t][k][1]:.0f} / {stats[t][k][2]:.0f}" if k in stats[t] else "-" for t in trees]
            lines.append(f"| {k} | " + " | ".join(cells) + " |")
    last = rows[trees[-1]]
    walls = [r["wall"] for r in last]
    pick = int(np.argmin([abs(w - float(np.median(walls))) for w in walls]))  # a typical query of the last version
    lines += ["", f"One query, #{pick} (the last version's median wall time), in every version (ms):", "",
              "| stage | " + " | ".join(label[t] for t in trees) + " |", "|---|" + "---|" * len(trees)]
    for k in ["wall", "cpu", *stages, *(counts if args.mode == "hybrid" else [])]:
        lines.append(f"| {k} | " + " | ".join(f"{rows[t][pick][k]:.2f}" if k in rows[t][pick] else "-" for t in trees) + " |")
    body = "\n".join(lines) + f"""

{args.queries} never-seen toolpool queries (every 12th from the second), `Gateway.find_tools(query, limit=5)`
at 13,619 tools, hybrid (the default with the `embed` extra, default query encoder), versions taking turns
in chunks of {CHUNK} queries, each in its own process. Load average {load0:.1f} at start, {load1:.1f} at end on
2 shared cores: wall times include waiting for a core; CPU time is the process's. Stages nest:
`embedding` (the query encoder's calls, a request's sub-intents included) holds `tokenising`; `variants` is
the query's rewrites (`rewrite`); `signals` the finishing step's signals (intent, usage, fuzzy and exact
name); `ranking (finish)` holds the keyword leg, the embedding, the dense product, the fusion and the signals;
`index.search` holds `ranking`; `render` is the schemas for the reply; `other` the wall time outside
the stages that do not nest (splitting the request, the sets' merge, top-k selections, masks). Per request: `texts encoded` and
`wordpieces` what the query encoder read (`padded`: as its batches ran them), `encoder runs` the model's
runs, `products` the dense products (one may score several texts), `rankings` the whole request's and each
sub-intent's.
"""
    title = "Hybrid find_tools with never-seen queries: latency by stage (issue 36)"
    if args.mode == "keyword":
        title = "Keyword find_tools at 13.6k tools: latency by version (issue 36)"
        body = "\n".join(lines) + (
            f"\n\nThe first {args.queries} toolpool queries, {args.rounds} passes, `Gateway.find_tools(query, limit=5, "
            f"search_type=\"keyword\")` at 13,619 tools, versions taking turns in chunks of {CHUNK} queries, each in its "
            f"own process. Load average {load0:.1f} at start, {load1:.1f} at end on 2 shared cores.\n"
        )
    print(body)
    if not args.no_write:
        write_section(f"{args.mode}_latency", title,
                      f"python benchmarks/hybrid_latency.py --mode {args.mode} --trees {args.trees} --queries {args.queries} --rounds {args.rounds}", body)


if __name__ == "__main__":
    main()
