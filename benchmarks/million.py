"""A million tools: keyword latency, build, peak memory and reload, before and after; ANN.

Two 1M-tool catalogs are built from toolpool (../shared/data/toolpool, 13.6k real tools):

* ``replicated``: toolpool repeated with name suffixes (``name__r7``), as search_speed.py
  does at 100k. Every copy repeats the same words, so the vocabulary stops at toolpool's.
* ``growing``: a vocabulary that keeps growing as a real registry's does (below).

Each (code, catalog) runs in a fresh subprocess: make the records, build catalog + index
(timed), time the 2,500 toolpool queries through ``ToolIndex.search`` (wall and CPU of the
searching thread), read the process's peak RSS, save catalog + index snapshot to a store;
another fresh subprocess times the reload from that store up to a first answer. With
``--base DIR`` (a checkout of the code before, e.g. ``git worktree add /tmp/ts-base
9fc38d6``) the same children run that code too, so before and after come from one run.

The growing catalog. A real registry's vocabulary follows Heaps' law, V(n) = K n^beta (new
tools keep bringing product names, jargon and identifiers), and its term frequencies Zipf's
law. We fit K and beta on toolpool itself (distinct analysed terms of the first n real tools,
n = 1k..13.6k, least squares in log-log) and extend the law to 1M: synthetic tool n adds,
on average, V(n) - V(n-1) brand-new words (Poisson), made-up pronounceable words placed in
its name and description. Each synthetic tool starts from a real one (schema, category, the
length and style of its description), swaps about a third of its description words for words
of another random real tool (so word combinations do not just repeat), and also reuses one
earlier made-up word chosen by a Zipf law over them (popular new words recur, as "github" or
"kubernetes" do). The replicated catalog is the easy case for an inverted index (24k terms,
long postings); this one has ~10x the terms with a realistic long tail.

Vectors: embedding 1M texts with MiniLM is infeasible here (~40 texts/s), so the ANN part
reuses the real MiniLM vectors of toolpool's 13.6k tool texts and makes N distinct vectors
as a blend of two real tools' vectors (weights 0.7 / 0.3 plus a little Gaussian noise,
renormalised): the synthetic vectors lie where real ones do, none is a copy. Queries are
the real vectors of toolpool queries; recall@10 is measured against the exact product.

    .venv/bin/python benchmarks/million.py [--n 1000000] [--base /tmp/ts-base] [--ann-n 100000] [--no-write]

To time restarts alone, ``--stores DIR`` keeps each (code, catalog) store in DIR and reuses
one already there: its build child is skipped and only the reload runs (``--reloads K``
times, the median reported), so a change to the reload path is measured in a minute, not a
quarter of an hour. Delete a store when the code that writes it changes.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from _report import DATA, replicate, write_section  # noqa: E402
from search_speed import time_queries  # noqa: E402

POOL = DATA / "toolpool"
SEED = 20261126


# -- the growing catalog ---------------------------------------------------------------------
_ONSETS = ["b", "c", "d", "f", "g", "h", "j", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "gr", "kl", "pl", "st", "tr"]
_VOWELS = ["a", "e", "i", "o", "u", "ai", "ou"]


def made_up_word(i: int) -> str:
    """A pronounceable word for the integer ``i`` (distinct integers, distinct words)."""
    out = []
    i += 1
    while i:
        i, r = divmod(i, len(_ONSETS) * len(_VOWELS))
        out.append(_ONSETS[r // len(_VOWELS)] + _VOWELS[r % len(_VOWELS)])
    return "".join(out) + "x"


def heaps_fit(tools: list[Any]) -> tuple[float, float]:
    """(K, beta) of V(n) = K n^beta on the real tools' analysed terms."""
    from toolscout.search.analyzer import analyze

    seen: set[str] = set()
    points = []
    marks = {int(x) for x in np.geomspace(1000, len(tools), 12)}
    for n, t in enumerate(tools, 1):
        seen.update(analyze(f"{t.name} {t.description}"))
        if n in marks:
            points.append((math.log(n), math.log(len(seen))))
    xs, ys = np.array(points).T
    beta, logk = np.polyfit(xs, ys, 1)
    return float(math.exp(logk)), float(beta)


def growing(tools: list[Any], n: int, seed: int = SEED) -> list[Any]:
    """``n`` tools: the real ones, then synthetic ones whose vocabulary grows by Heaps' law."""
    k, beta = heaps_fit(tools)
    rng = np.random.default_rng(seed)
    real = len(tools)
    out = list(tools[:n])
    words = [t.description.split() for t in tools]
    invented = 0
    names = {t.name for t in out}
    for i in range(real, n):
        base = tools[i % real]
        other = words[int(rng.integers(real))]
        desc = list(words[i % real]) or ["tool"]
        if other:
            for pos in np.flatnonzero(rng.random(len(desc)) < 1 / 3).tolist():
                desc[pos] = other[int(rng.integers(len(other)))]
        fresh = int(rng.poisson(k * ((i + 1) ** beta - i**beta)))
        new = [made_up_word(invented + j) for j in range(fresh)]
        invented += fresh
        if invented:
            new.append(made_up_word(min(int(rng.zipf(1.5)) - 1, invented - 1)))
        name = f"{base.name}_{new[0]}" if new else f"{base.name}_{i}"
        if name in names:
            name = f"{name}_{i}"
        names.add(name)
        desc.extend(new[1:])
        out.append(base.replace(name=name, description=" ".join(desc)))
    return out


def make(kind: str, n: int) -> list[Any]:
    from toolscout.eval.dataset import load_tools

    tools = load_tools(POOL / "tools.jsonl")
    return replicate(tools, n) if kind == "replicated" else growing(tools, n)


# -- children ------------------------------------------------------------------------------------
def _peak_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _pcts(values: list[float]) -> dict[str, float]:
    return {"p50": float(np.percentile(values, 50)), "p99": float(np.percentile(values, 99))}


def child_keyword(kind: str, n: int, store_path: str) -> dict[str, Any]:
    from toolscout.catalog import Catalog
    from toolscout.eval.dataset import load_queries
    from toolscout.search.index import ToolIndex
    from toolscout.storage import SQLiteStore as Store

    base_mb = _peak_mb()
    w, c = time.perf_counter(), time.process_time()
    tools = make(kind, n)
    records = (time.perf_counter() - w, time.process_time() - c)
    gc.collect()
    w, c = time.perf_counter(), time.process_time()
    catalog = Catalog(tools)
    del tools
    index = ToolIndex(catalog)
    index.refresh()
    build = (time.perf_counter() - w, time.process_time() - c)
    kw = index.backend("keyword")
    terms = len(getattr(kw, "_vocab", {}))
    queries = [q.query for q in load_queries(POOL / "queries.jsonl")]
    wall, cpu = time_queries(index, queries)
    peak = _peak_mb()
    # the store a restart reads: the records and the analysed index (as Catalog.open + Gateway do)
    store = Store(store_path)
    w = time.perf_counter()
    store.save_tools(catalog)
    # the snapshot a cold start with this store saves (the same call, without building again)
    index.snapshots = store
    try:
        from toolscout.search.keyword_snapshot import save_keyword
    except ImportError:  # a tree from before the snapshot I/O moved out of the index
        index._save_keyword(index.tools, kw)
    else:
        save_keyword(store, index.tools, kw)
    save = time.perf_counter() - w
    store.close()
    return {
        "tools": len(catalog), "terms": terms, "records_s": records, "build_s": build,
        "wall": _pcts(wall), "cpu": _pcts(cpu), "peak_mb": peak, "interp_mb": base_mb, "save_s": save,
    }


def child_reload(store_path: str) -> dict[str, Any]:
    from toolscout.catalog import Catalog
    from toolscout.search.index import ToolIndex

    w, c = time.perf_counter(), time.process_time()
    catalog = Catalog.open(store_path)
    loaded = (time.perf_counter() - w, time.process_time() - c)
    index = ToolIndex(catalog, snapshots=catalog.store)
    index.search("send an email", limit=5)
    return {
        "tools": len(catalog), "records_s": loaded,
        "ready_s": (time.perf_counter() - w, time.process_time() - c), "peak_mb": _peak_mb(),
    }


def child_vectors(n: int, queries_n: int) -> dict[str, Any]:
    """Recall@10 of the ANN graph against the exact product, its build time and query time,
    and hybrid latency, on ``n`` vectors blended from toolpool's real ones."""
    from toolscout.catalog import Catalog
    from toolscout.embed.cache import VectorCache
    from toolscout.embed.onnx import default_embedder
    from toolscout.embed.text import tool_text
    from toolscout.eval.dataset import load_queries, load_tools
    from toolscout.search.ann import CANDIDATES, AnnIndex
    from toolscout.search.dense import DenseBackend
    from toolscout.search.hybrid import _DENSE_VARIANTS, HybridSearch, rewrite
    from toolscout.search.index import ToolIndex
    from toolscout.storage import SQLiteStore as Store

    cache_store = Store(Path.home() / ".cache" / "toolscout-bench" / "vectors.db")
    model = default_embedder()
    cache = VectorCache(model, cache_store)
    real_tools = load_tools(POOL / "tools.jsonl")
    real = cache.embed([tool_text(t) for t in real_tools])  # cached: no model run
    rng = np.random.default_rng(SEED)
    matrix = np.empty((n, real.shape[1]), np.float32)
    matrix[: len(real)] = real[:n]
    for start in range(len(real), n, 65536):
        stop = min(n, start + 65536)
        a = rng.integers(len(real), size=stop - start)
        b = rng.integers(len(real), size=stop - start)
        block = 0.7 * real[a] + 0.3 * real[b] + rng.normal(0, 0.02, (stop - start, real.shape[1])).astype(np.float32)
        matrix[start:stop] = block / np.linalg.norm(block, axis=1, keepdims=True)
    queries = [q.query for q in load_queries(POOL / "queries.jsonl")][:queries_n]
    qvec = cache.embed(queries)  # cached by hybrid_quality.py, else embedded once here
    w, c = time.perf_counter(), time.process_time()
    graph = AnnIndex(matrix)
    build = (time.perf_counter() - w, time.process_time() - c)
    recall, rescored, ann_cpu, exact_cpu = [], [], [], []
    for v in qvec:
        t = time.thread_time()
        exact = np.argpartition(-np.einsum("ij,j->i", matrix, v), 10)[:10]
        exact_cpu.append((time.thread_time() - t) * 1000)
        t = time.thread_time()
        found = graph.nearest(v, 10)
        ann_cpu.append((time.thread_time() - t) * 1000)
        recall.append(len(set(exact.tolist()) & set(found.tolist())) / 10)
        # what DenseBackend does: the graph's CANDIDATES nearest, re-scored exactly, best 10
        pool = graph.nearest(v, CANDIDATES)
        best = pool[np.argsort(-(matrix[pool] @ v), kind="stable")[:10]]
        rescored.append(len(set(exact.tolist()) & set(best.tolist())) / 10)
    # hybrid through ToolIndex.search: the replicated catalog's records, these vectors
    tools = replicate(real_tools, n)
    index = ToolIndex(Catalog(tools))
    dense = DenseBackend(model, cache_store, progress=False)
    dense._matrix, dense._ann = matrix, graph  # what rebuild() sets, without embedding 1M texts
    search = HybridSearch(index, dense)
    search._built = index.tools
    index.register_mode("hybrid", search.hybrid)
    texts = [*queries, *(v.text for q in queries for v in rewrite(q) if v.kind in _DENSE_VARIANTS)]
    dense.prime_queries(texts)  # query vectors from the cache, as a warm gateway has them
    wall, cpu = time_queries(index, queries)
    return {
        "n": n, "build_s": build, "recall10": float(np.mean(recall)), "recall10_rescored": float(np.mean(rescored)), "candidates": CANDIDATES, "ann": _pcts(ann_cpu),
        "exact": _pcts(exact_cpu), "hybrid_wall": _pcts(wall), "hybrid_cpu": _pcts(cpu), "queries": len(qvec),
    }


# -- the parent --------------------------------------------------------------------------------
def run_child(tree: Path, args: list[str]) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=f"{tree / 'src'}{os.pathsep}{BENCH}")
    out = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--child", *args], env=env, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"child {args} in {tree} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _ms(d: dict[str, float], cpu: dict[str, float], key: str) -> str:
    return f"{cpu[key]:.2f} / {d[key]:.2f}"


def _s(pair: list[float]) -> str:
    return f"{pair[1]:.1f} / {pair[0]:.1f}"


def _commit(tree: Path | None) -> str:
    """The commit a tree is at (short), with ``+changes`` if it has uncommitted ones."""
    if tree is None:
        return "-"
    head = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(tree), "status", "--porcelain", "--", "src"], capture_output=True, text=True).stdout.strip()
    return f"{head or '?'}{' +changes' if dirty else ''}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=1_000_000)
    parser.add_argument("--base", type=Path, action="append", default=[],
                        help="a checkout of the code to compare with (e.g. /tmp/ts-base); repeat for several")
    parser.add_argument("--tree", type=Path, default=BENCH.parent, help="the code measured as 'after' (default: this checkout)")
    parser.add_argument("--catalogs", default="replicated,growing")
    parser.add_argument("--ann-n", type=int, default=100_000, help="vectors for the ANN part (0: skip)")
    parser.add_argument("--ann-queries", type=int, default=300)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--stores", type=Path, help="keep the stores in this folder and reuse those there (only the reload runs)")
    parser.add_argument("--reloads", type=int, default=1, help="reloads per store (the median by CPU is reported)")
    parser.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        part, *rest = args.child
        if part == "keyword":
            result = child_keyword(rest[0], int(rest[1]), rest[2])
        elif part == "reload":
            result = child_reload(rest[0])
        else:
            result = child_vectors(int(rest[0]), int(rest[1]))
        print(json.dumps(result))
        return

    if args.stores is not None:
        args.stores.mkdir(parents=True, exist_ok=True)
    here = args.tree
    trees = [("before" if len(args.base) == 1 else f"before {_commit(b)}", b) for b in args.base]
    trees.append(("after", here))
    load = os.getloadavg()[0]
    results: dict[tuple[str, str], dict[str, Any]] = {}
    jobs = [(label, tree, kind) for kind in args.catalogs.split(",") for label, tree in trees]

    def measure(label: str, tree: Path, kind: str, tmp: str) -> dict[str, Any]:
        path = (args.stores or Path(tmp)) / f"{label}-{kind}-{args.n}.db"
        r: dict[str, Any] = {}
        if args.stores is None or not path.exists():
            r = run_child(tree, ["keyword", kind, str(args.n), str(path)])
        reloads = [run_child(tree, ["reload", str(path)]) for _ in range(max(1, args.reloads))]
        reloads.sort(key=lambda x: x["ready_s"][1])
        r["reload"] = reloads[len(reloads) // 2]  # the median by CPU
        r["reload"]["cpu_all"] = [x["ready_s"][1] for x in reloads]
        if args.stores is None:
            os.unlink(path)
        print(label, kind, json.dumps(r), flush=True)
        return r

    # Every child at once: the cores are shared with other work, and CPU times (what the
    # targets are read against) do not depend on how many run; wall times do.
    with tempfile.TemporaryDirectory() as tmp, ThreadPoolExecutor(len(jobs) + 1) as pool:
        vectors = pool.submit(run_child, here, ["vectors", str(args.ann_n), str(args.ann_queries)]) if args.ann_n else None
        futures = {(label, kind): pool.submit(measure, label, tree, kind, tmp) for label, tree, kind in jobs}
        results = {key: f.result() for key, f in futures.items()}
        v = vectors.result() if vectors is not None else None
    rows = ["| catalog | code | terms | keyword p50 CPU / wall (ms) | p99 CPU / wall (ms) | catalog + index build CPU / wall (s) | records made (s) | peak RSS | reload from store to first answer CPU / wall (s) | reload peak RSS |",
            "|---|---|---|---|---|---|---|---|---|---|"]
    for (label, kind), r in results.items():
        if "terms" not in r:  # a kept store: the reload alone
            rows.append(
                f"| {kind} | {label} | - | - | - | - | - | - | {_s(r['reload']['ready_s'])} "
                f"(catalog open {_s(r['reload']['records_s'])}; all CPU {', '.join(f'{x:.2f}' for x in r['reload']['cpu_all'])}) | "
                f"{r['reload']['peak_mb']:,.0f} MB |"
            )
            continue
        rows.append(
            f"| {kind} | {label} | {r['terms']:,} | {_ms(r['wall'], r['cpu'], 'p50')} | {_ms(r['wall'], r['cpu'], 'p99')} | "
            f"{_s(r['build_s'])} | {r['records_s'][0]:.0f} | {r['peak_mb']:,.0f} MB | {_s(r['reload']['ready_s'])} | "
            f"{r['reload']['peak_mb']:,.0f} MB |"
        )
    body = "\n".join(rows)
    body += (
        f"\n\n{args.n:,} tools, the 2,500 toolpool queries (limit 5) through `ToolIndex.search`. "
        "Targets at 1M: keyword p50 <= 2 ms and p99 <= 8 ms, peak RSS <= 1.5 GB, build <= 60 s, "
        f"reload <= 5 s. `before` is the code at {', '.join(map(_commit, args.base)) or '-'}, `after` this tree at {_commit(here)}, measured in the same "
        "run; each cell is a fresh process, all running at once. Peak RSS is the whole process (interpreter, records, "
        "catalog, index, one search; for a reload: opening the store, restoring the index, one search). CPU is the searching thread's (`time.thread_time`); the 2 "
        f"cores are shared (load average {load:.1f} at start, {os.getloadavg()[0]:.1f} at end), so "
        "wall times include waiting for a core. The growing catalog's vocabulary follows "
        "Heaps' law fitted on toolpool (see the script's docstring)."
    )
    if v is not None:
        print("vectors", json.dumps(v), flush=True)
        body += (
            f"\n\nDense search with the `ann` extra (usearch HNSW, f16, default parameters) over "
            f"{v['n']:,} vectors blended from toolpool's real MiniLM vectors (not embedded: see the "
            f"script): recall@10 against the exact product **{v['recall10']:.3f}** for the graph's own top 10, "
            f"**{v['recall10_rescored']:.3f}** for the top 10 of its {v['candidates']} nearest re-scored exactly "
            f"(what `DenseBackend` does), over {v['queries']} "
            f"real query vectors; graph search {v['ann']['p50']:.2f} ms p50 CPU vs exact product "
            f"{v['exact']['p50']:.1f} ms; graph build {_s(list(v['build_s']))} s CPU / wall. Hybrid "
            f"(`ToolIndex.search`, mode auto, query vectors cached) p50 {v['hybrid_cpu']['p50']:.1f} ms "
            f"CPU / {v['hybrid_wall']['p50']:.1f} ms wall, p99 {v['hybrid_cpu']['p99']:.1f} / "
            f"{v['hybrid_wall']['p99']:.1f} ms."
        )
    print(body)
    if not args.no_write:
        cmd = "python benchmarks/million.py" + "".join(f" --base {b}" for b in args.base) + (f" --n {args.n}" if args.n != 1_000_000 else "") + (f" --ann-n {args.ann_n}" if args.ann_n != 100_000 else "")
        write_section("million", "A million tools", cmd, body)


if __name__ == "__main__":
    main()
