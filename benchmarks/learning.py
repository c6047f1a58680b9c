"""Learning from usage: nDCG@10 with and without a replayed usage log, and its latency cost.

Each set's queries are shuffled (per seed) and split in halves: the log half becomes a usage
log (``{"query", "called": <its relevant tools>}`` per line, one session each, the
``toolscout eval --learn`` format), the test half is evaluated exactly as ``toolscout eval``
does, without learning, with the log, and with a noisy log in which 30% of events name a
wrong tool taken from the same query's own results. "shared" rows keep only test queries
whose relevant tools were called somewhere in the log (where learning can help at all).
Latency: keyword ``ToolIndex.search`` p50 at 10,000 toolpool tools, without and with the
toolpool log's prior.

    .venv/bin/python benchmarks/learning.py [--seeds 3] [--max-queries 4000] [--no-write]
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import DATA, write_section
from toolscout.catalog import Catalog
from toolscout.eval.dataset import EvalQuery, load_queries, load_tools
from toolscout.eval.runner import evaluate, index_ranker
from toolscout.search.index import ToolIndex
from toolscout.search.learning import UsageLearner, replay_log

SETS = ("sealtools", "stabletoolbench", "apibench", "metatool", "toollens", "toolpool")
NOISE = 0.3


def _log(queries: list[EvalQuery], ranker, rng: random.Random, noise: float) -> list[dict]:  # type: ignore[no-untyped-def]
    out = []
    for q in queries:
        called = list(q.relevant)
        if noise and rng.random() < noise:
            wrong = [n for n in ranker(q.query) if n not in q.relevant]
            if wrong:
                called = [rng.choice(wrong)]
        out.append({"query": q.query, "called": called})
    return out


def run_set(name: str, seeds: int, max_queries: int) -> dict[str, list[float]]:
    d = DATA / name
    tools = load_tools(d / "tools.jsonl")
    every = load_queries(d / "queries.jsonl")
    index = ToolIndex(Catalog(tools))
    index.refresh()
    ranker = index_ranker(index, "keyword")
    out: dict[str, list[float]] = {k: [] for k in ("plain", "learn", "noisy", "s_plain", "s_learn", "s_noisy", "shared_n", "test_n")}
    for seed in range(seeds):
        rng = random.Random(seed)
        queries = list(every)
        rng.shuffle(queries)
        queries = queries[:max_queries]
        half = len(queries) // 2
        log_q, test_q = queries[:half], queries[half:]
        called = {n for q in log_q for n in q.relevant}
        shared = [q for q in test_q if set(q.relevant) & called]
        for label, noise in (("plain", None), ("learn", 0.0), ("noisy", NOISE)):
            index.usage = None
            if noise is not None:
                learner = UsageLearner()
                replay_log(learner, _log(log_q, ranker, rng, noise), ranker)
                index.usage = learner
            out[label].append(evaluate(test_q, ranker).overall.ndcg10)
            out["s_" + label].append(evaluate(shared, ranker).overall.ndcg10 if shared else 0.0)
        out["shared_n"].append(len(shared))
        out["test_n"].append(len(test_q))
    index.usage = None
    return out


def latency(max_queries: int) -> tuple[float, float]:
    d = DATA / "toolpool"
    tools = load_tools(d / "tools.jsonl")[:10_000]
    queries = load_queries(d / "queries.jsonl")
    rng = random.Random(0)
    rng.shuffle(queries)
    queries = queries[:max_queries]
    half = len(queries) // 2
    index = ToolIndex(Catalog(tools))
    index.refresh()
    ranker = index_ranker(index, "keyword")
    learner = UsageLearner()
    names = {t.name for t in tools}
    replay_log(learner, [{"query": q.query, "called": [n for n in q.relevant if n in names]} for q in queries[:half]], ranker)
    test = [q.query for q in queries[half:]]

    def p50() -> float:
        ms = []
        for text in test:
            start = time.perf_counter()
            index.search(text, limit=10, mode="keyword")
            ms.append((time.perf_counter() - start) * 1000)
        return statistics.median(ms)

    plain, learned = [], []
    for _ in range(5):  # interleaved, so drift hits both alike
        index.usage = None
        plain.append(p50())
        index.usage = learner
        learned.append(p50())
    return statistics.median(plain), statistics.median(learned)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--max-queries", type=int, default=4000)
    ap.add_argument("--sets", default=",".join(SETS))
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    rows = []
    below: list[str] = []
    worse: list[str] = []
    for name in args.sets.split(","):
        r = run_set(name, args.seeds, args.max_queries)

        def m(k: str, r: dict[str, list[float]] = r) -> float:
            return statistics.mean(r[k])

        rows.append(
            f"| {name} | {m('test_n'):.0f} | {m('plain'):.1f} | {m('learn'):.1f} ({m('learn') - m('plain'):+.1f}) "
            f"| {m('noisy'):.1f} ({m('noisy') - m('plain'):+.1f}) | {m('shared_n'):.0f} | {m('s_plain'):.1f} "
            f"| {m('s_learn'):.1f} ({m('s_learn') - m('s_plain'):+.1f}) | {m('s_noisy'):.1f} ({m('s_noisy') - m('s_plain'):+.1f}) |"
        )
        print(rows[-1], flush=True)
        if m("s_learn") - m("s_plain") < 3:
            below.append(f"{name} ({m('s_learn') - m('s_plain'):+.1f})")
        if m("noisy") < m("plain") or m("s_noisy") < m("s_plain"):
            worse.append(name)
    plain, learned = latency(args.max_queries)
    print(f"latency p50 plain {plain:.4f} ms, learned {learned:.4f} ms", flush=True)
    body = (
        f"Keyword search, {args.seeds} seeds (mean), up to {args.max_queries} queries per set split half log / half test; "
        "the log names each log query's relevant tools as called (one session per line); the noisy log replaces "
        f"the called tools of {NOISE:.0%} of events with a wrong tool from that query's own top 10. "
        "\"shared\": test queries whose relevant tools were called somewhere in the log. nDCG@10, percent.\n\n"
        "| set | test queries | no learning | learning | noisy log (30%) | shared queries | shared: no learning | shared: learning | shared: noisy |\n"
        "|---|---|---|---|---|---|---|---|---|\n" + "\n".join(rows) + "\n\n"
        f"Keyword p50 at 10,000 toolpool tools (`ToolIndex.search`, limit 10, median of 5 interleaved passes): "
        f"{plain:.3f} ms without a prior, {learned:.3f} ms with the toolpool log's prior "
        f"({(learned - plain) * 1000:+.0f} µs).\n\n"
        "Targets: >= +3 nDCG@10 on shared queries: "
        + ("met on every set" if not below else "missed on " + ", ".join(below))
        + "; noisy log never worse than no learning: "
        + ("met on every set" if not worse else "missed on " + ", ".join(worse))
        + f"; <= 0.1 ms added to keyword p50 at 10k: {'met' if learned - plain <= 0.1 else 'missed'}.\n\n"
        "Read with care: metatool (199 tools) and toollens (464) have many queries per tool, so nearly every "
        "test query shares tools with the log and learning mostly learns which tools the set's queries ask "
        "for; sealtools has fewer queries than tools (2,054 for 4,076) and a high baseline, so little is left to learn. The log "
        "here is ideal (the labelled tools, one call each); real calls are noisier, which the 30% rows bound. "
        "The ranking is `toolscout eval`'s (`index_ranker`, `replay_log` as `run_eval(learn=...)` does), in one "
        "process so each index is built once; `toolscout eval DIR --learn LOG.jsonl` gives the same figures for "
        "a log file.\n"
    )
    if not args.no_write:
        write_section(
            "learning", "Learning from usage: nDCG@10 with a replayed log",
            f".venv/bin/python benchmarks/learning.py --seeds {args.seeds} --max-queries {args.max_queries}", body,
        )
    else:
        print(body)


if __name__ == "__main__":
    main()
