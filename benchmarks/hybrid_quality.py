"""Hybrid search quality on every set in ../shared/data: keyword, dense and hybrid side by side.

For each set, in one run: R@1 / R@5 / nDCG@10 (percent) of plain BM25 (the README baseline,
reproduced as in benchmarks/search_quality.py), toolscout keyword (BM25F), dense only
(``semantic`` mode, MiniLM-L6 int8) and ``hybrid``; the hybrid's gain over plain BM25 and
over its best single backend. metatool uses every 10th query, toollens its test split.

Document and query vectors are cached in ~/.cache/toolscout-bench/vectors.db (outside the
repo): the first run embeds ~25k texts (tens of minutes on 2 shared cores), later runs none.

    .venv/bin/python benchmarks/hybrid_quality.py [--data ../shared/data] [--sets a,b] [--plot] [--no-write]
        [--query-encoders model,blockwise,int8] [--queries START:STOP]

The main table uses ``enable_hybrid``'s default query encoder.
``--query-encoders`` adds a table with dense and hybrid nDCG@10 per query encoder, each
evaluated in this run on the same queries, every query embedded by that encoder (the batch
priming goes through the encoder under test, cached under its own model id).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import fmt_metrics as fmt
from _report import query_encoder, write_section
from search_quality import DEFAULT_DATA, SETS, plain_analyzer
from toolscout.catalog import Catalog
from toolscout.embed.onnx import default_embedder
from toolscout.eval.compare import compare, plot_recall, recall_curve
from toolscout.eval.dataset import load_queries, load_tools
from toolscout.eval.runner import evaluate, index_ranker, select_queries
from toolscout.search.autocut import autocut
from toolscout.search.hybrid import enable_hybrid, rewrite
from toolscout.search.index import ToolIndex
from toolscout.search.keyword import KeywordBackend
from toolscout.storage import SQLiteStore as Store

CACHE = Path.home() / ".cache" / "toolscout-bench" / "vectors.db"
DOCS = Path(__file__).resolve().parent.parent / "docs"


def _p(value: float) -> str:
    return " < 0.0001" if value < 1e-4 else f" = {value:.2g}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--sets", default="", help="comma-separated subset of the sets")
    parser.add_argument("--plot", action="store_true", help="write docs/img/recall-<set>.png")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--query-encoders", default="", help="compare query encoders, e.g. model,int8,static")
    parser.add_argument("--queries", default="", help="START:STOP of each set's queries instead of its usual selection")
    args = parser.parse_args()
    encoders = [e for e in args.query_encoders.split(",") if e]
    enc_rows = [
        "| set | " + " | ".join(f"{e}: dense / hybrid" for e in encoders) + " | hybrid wins / losses vs " + (encoders[0] if encoders else "") + " |",
        "|---|" + "---|" * (len(encoders) + 1),
    ]
    wanted = set(filter(None, args.sets.split(",")))
    embedder = default_embedder()
    store = Store(CACHE)
    rows = [
        "| set (queries) | plain BM25 | toolscout keyword | dense only | **hybrid** | hybrid - plain (vs README plain) | hybrid - best single | hybrid wins / losses vs best single (sign p) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    origin_line = ""
    latency = ""
    cut_rows = [
        "| set | keyword | hybrid, scores as shipped (square root of the fused sum) | hybrid, the fused sum itself (before) |",
        "|---|---|---|---|",
    ]
    started = time.perf_counter()
    for name, selection, readme in SETS:
        if wanted and name not in wanted:
            continue
        d = args.data / name
        tools = load_tools(d / "tools.jsonl")
        if args.queries:  # e.g. a second, disjoint sample of a set (docs/embeddings.md#query-encoders)
            start, stop = (int(x) if x else None for x in args.queries.split(":"))
            queries = load_queries(d / "queries.jsonl")[start:stop]
        else:
            queries = select_queries(load_queries(d / "queries.jsonl"), **selection)  # type: ignore[arg-type]
        plain_index = ToolIndex(Catalog(tools), keyword=KeywordBackend(variant="bm25", k1=1.5, analyzer=plain_analyzer))
        plain = evaluate(queries, index_ranker(plain_index, "keyword"))
        index = ToolIndex(Catalog(tools))
        texts = [q.query.strip() for q in queries]  # and their clauses: embedded in batches, cached
        primed = list(dict.fromkeys(texts + [v.text for t in texts for v in rewrite(t) if v.kind != "identifier"]))
        reports = _run(index, embedder, store, None, primed, queries, ("keyword", "semantic", "hybrid"))
        if encoders:
            per = [_run(ToolIndex(Catalog(tools)), embedder, store, e, primed, queries, ("semantic", "hybrid")) for e in encoders]
            wins = [compare(per[0]["hybrid"], r["hybrid"], "a", "b").rows[0] for r in per[1:]]
            enc_rows.append(
                f"| {name} | "
                + " | ".join(f"{r['semantic'].overall.ndcg10:.1f} / {r['hybrid'].overall.ndcg10:.1f}" for r in per)
                + " | " + ", ".join(f"{e}: {w['b_wins']} / {w['b_losses']} (p{_p(w['p_sign'])})" for e, w in zip(encoders[1:], wins, strict=True))
                + " |"
            )
            print(enc_rows[-1], flush=True)
        cut_rows.append(f"| {name} | " + " | ".join(_autocut_effect(index, queries)) + " |")
        kw, dense, hybrid = reports["keyword"], reports["semantic"], reports["hybrid"]
        best_label, best = max((("keyword", kw), ("dense", dense)), key=lambda lr: lr[1].overall.ndcg10)
        paired = compare(best, hybrid, best_label, "hybrid").rows[0]
        rows.append(
            f"| {name} ({len(queries)}) | {fmt(plain)} | {fmt(kw)} | {fmt(dense)} | **{fmt(hybrid)}** | "
            f"{hybrid.overall.ndcg10 - plain.overall.ndcg10:+.1f} (README {hybrid.overall.ndcg10 - readme:+.1f}) | {hybrid.overall.ndcg10 - best.overall.ndcg10:+.1f} ({best_label}) | "
            f"{paired['b_wins']} / {paired['b_losses']} (p{_p(paired['p_sign'])}) |"
        )
        print(rows[-1], flush=True)
        if name == "toolpool":
            parts = [
                f"{split} {hybrid.splits[split].ndcg10:.1f} (plain {plain.splits[split].ndcg10:.1f}, keyword {kw.splits[split].ndcg10:.1f}, dense {dense.splits[split].ndcg10:.1f})"
                for split in sorted(hybrid.splits)
            ]
            origin_line = "toolpool hybrid nDCG@10 per origin: " + "; ".join(parts) + "."
            m = hybrid.overall
            latency = (
                f"Hybrid search latency at {len(tools):,} tools with query vectors cached (the eval's "
                f"rankings, wall time, load average {os.getloadavg()[0]:.1f}): p50 {m.latency_p50_ms:.1f} ms, p95 {m.latency_p95_ms:.1f} ms "
                f"(keyword alone p50 {kw.overall.latency_p50_ms:.1f} ms). New-query latency, which "
                "includes running the model, is in the embedding-speed section."
            )
        if args.plot:
            curves = {label: recall_curve(r, queries) for label, r in (("plain BM25", plain), ("keyword", kw), ("dense", dense), ("hybrid", hybrid))}
            (DOCS / "img").mkdir(parents=True, exist_ok=True)
            plot_recall(curves, DOCS / "img" / f"recall-{name}.png", title=f"{name}: recall@k")
    body = (
        "R@1 / R@5 / nDCG@10, percent, all columns from the same run and the same queries. "
        "Dense only = `search_type=\"semantic\"`; hybrid = the `auto` default with the `embed` extra "
        "(fusion rule in docs/hybrid.md). Wins / losses: queries whose nDCG@10 the hybrid raises / "
        "lowers against the better single backend of that set, with a two-sided sign test.\n\n"
        + "\n".join(rows)
        + (f"\n\n{origin_line}" if origin_line else "")
        + (f"\n\n{latency}" if latency else "")
        + "\n\nAutoCut on the top 5 (the cliff rule, as `find_tools` applies it): rows kept on average, "
        "and the share of queries with a relevant tool in the top 5 where AutoCut cut every relevant "
        "tool away. Hybrid scores are the square root of the fused sum (same order); the last "
        "column applies AutoCut to the sum itself, as before that change.\n\n"
        + "\n".join(cut_rows)
        + (
            "\n\nQuery encoders (nDCG@10, same run, same tool vectors; `enable_hybrid(..., query_encoder=...)`):\n\n"
            + "\n".join(enc_rows)
            if encoders
            else ""
        )
        + f"\n\nWhole run: {time.perf_counter() - started:.0f} s."
    )
    print(body)
    if not args.no_write:
        command = "python benchmarks/hybrid_quality.py" + (" --plot" if args.plot else "")
        command += f" --query-encoders {args.query_encoders}" if encoders else ""
        write_section("hybrid-quality", "Hybrid search quality", command, body)


def _autocut_effect(index: ToolIndex, queries: list) -> list[str]:
    """Per scoring (keyword; hybrid as shipped; hybrid on the squared scale): rows AutoCut
    keeps of the top 5, and how often it cuts away every relevant tool the top 5 held."""
    kept = [0, 0, 0]
    lost = [0, 0, 0]
    held = [0, 0, 0]
    for q in queries:
        relevant = set().union(*q.relevant_groups())
        keyword = index.search(q.query, limit=5, mode="keyword", autocut=False).hits
        hybrid = index.search(q.query, limit=5, mode="hybrid", autocut=False).hits
        for i, (hits, power) in enumerate(((keyword, 1), (hybrid, 1), (hybrid, 2))):
            if not hits:
                continue
            k = autocut([h.score**power for h in hits])
            kept[i] += k
            found = [j for j, h in enumerate(hits) if h.tool.name in relevant]
            if found:
                held[i] += 1
                lost[i] += min(found) >= k
    n = max(len(queries), 1)
    return [f"{kept[i] / n:.2f} rows, {100 * lost[i] / max(held[i], 1):.1f}% cut away" for i in range(3)]


def _run(index: ToolIndex, embedder: object, store: Store, encoder: str | None, primed: list[str], queries: list, modes: tuple[str, ...]) -> dict:
    """Reports per mode with ``encoder`` (None: the default) embedding the queries (primed in
    batches, cached)."""
    options = {} if encoder is None else {"query_encoder": query_encoder(encoder)}
    search = enable_hybrid(index, embedder, store=store, progress=True, **options)  # type: ignore[arg-type]
    index.search("warm up", limit=1, mode="semantic")  # builds the dense index (cached vectors)
    search.dense.prime_queries(primed)
    return {mode: evaluate(queries, index_ranker(index, mode)) for mode in modes}


if __name__ == "__main__":
    main()
