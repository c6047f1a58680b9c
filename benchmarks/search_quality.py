"""Keyword search quality on every set in ../shared/data, against plain BM25 in the same run.

For each set: R@1, R@5, nDCG@10 (percent) of

* ``plain BM25``: a reproduction of the data README's baseline (bm25s-style Lucene BM25,
  k1=1.5, b=0.75, over name + description; names split on ``_ - . /`` and camelCase,
  lower-cased, Lucene's English stop words, no stemming);
* ``BM25 + analyzer``: the same single bag of words with toolscout's analyzer (stemming,
  compounds, CJK), to separate the analyzer's gain from the field weighting's;
* ``toolscout BM25F``: the shipped keyword search (fields and weights in keyword.py);

and the AutoCut rules' effect on the shipped search (a list AutoCut shortens is scored as is).
metatool uses every 10th query and toollens its test split, as the README's peer table does.

    .venv/bin/python benchmarks/search_quality.py [--data ../shared/data] [--no-write]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import fmt_metrics as fmt
from _report import write_section
from toolscout.catalog import Catalog
from toolscout.eval.dataset import EvalQuery, load_queries, load_tools
from toolscout.eval.runner import EvalReport, evaluate, index_ranker, select_queries
from toolscout.search.index import ToolIndex
from toolscout.search.keyword import FIELD_WEIGHTS, KeywordBackend

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"

# (set, query selection, README plain-BM25 nDCG@10 from its peer table)
SETS: list[tuple[str, dict[str, object], float]] = [
    ("toolpool", {}, 34.6),
    ("sealtools", {}, 81.5),
    ("stabletoolbench", {}, 62.8),
    ("apibench", {}, 14.3),
    ("metatool", {"every": 10}, 45.6),
    ("toollens", {"split": "test"}, 23.0),
]

ABLATIONS: dict[str, dict[str, object]] = {
    "shipped": {},
    "all weights 1": {"weights": dict.fromkeys(FIELD_WEIGHTS, 1.0)},
    "name 1": {"weights": {**FIELD_WEIGHTS, "name": 1.0}},
    "param text 1": {"weights": {**FIELD_WEIGHTS, "param_text": 1.0}},
    "no labels": {"weights": {**FIELD_WEIGHTS, "labels": 0.0}},
    "k1 2.0": {"k1": 2.0},
    "b 0.5": {"b": 0.5},
}

_WORDS = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+|[^\W\d_]+")
_LUCENE_STOP = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no", "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this", "to", "was", "will", "with"]
)


def plain_analyzer(text: str) -> list[str]:
    """The README baseline's tokenizer: split words and camelCase, lower-case, stop words."""
    out = []
    for word in _WORDS.findall(text):
        for part in _CAMEL.findall(word) or [word]:
            part = part.lower()
            if part not in _LUCENE_STOP:
                out.append(part)
    return out


def run(index: ToolIndex, queries: list[EvalQuery], *, cut: bool = False) -> EvalReport:
    if not cut:
        return evaluate(queries, index_ranker(index, "keyword"))

    def rank(text: str) -> list[str]:
        try:
            return [h.tool.name for h in index.search(text, limit=10, mode="keyword").hits]
        except Exception:
            return []

    return evaluate(queries, rank)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--ablation", action="store_true", help="also score other field weights and k1/b")
    args = parser.parse_args()
    ablation = ["| set | " + " | ".join(ABLATIONS) + " |", "|---|" + "---|" * len(ABLATIONS)]

    quality = ["| set (queries) | plain BM25 (README nDCG@10) | BM25 + analyzer | **toolscout BM25F** | nDCG@10 gain vs plain |",
               "|---|---|---|---|---|"]
    cut_rows = ["| set | no AutoCut R@5 / nDCG@10 | cliff (ratio > 2) | band (>= top/2) |", "|---|---|---|---|"]
    origin_line = ""
    started = time.perf_counter()
    for name, selection, readme in SETS:
        d = args.data / name
        tools = load_tools(d / "tools.jsonl")
        queries = select_queries(load_queries(d / "queries.jsonl"), **selection)  # type: ignore[arg-type]
        plain = run(ToolIndex(Catalog(tools), keyword=KeywordBackend(variant="bm25", k1=1.5, analyzer=plain_analyzer)), queries)
        single = run(ToolIndex(Catalog(tools), keyword=KeywordBackend(variant="bm25")), queries)
        index = ToolIndex(Catalog(tools))
        ours = run(index, queries)
        gain = ours.overall.ndcg10 - plain.overall.ndcg10
        quality.append(
            f"| {name} ({len(queries)}) | {fmt(plain)} ({readme}) | {fmt(single)} | **{fmt(ours)}** | "
            f"{gain:+.1f} (vs README {ours.overall.ndcg10 - readme:+.1f}) |"
        )
        cuts = []
        for rule in ("cliff", "band"):
            index.autocut_rule = rule
            r = run(index, queries, cut=True).overall
            cuts.append(f"{r.r5:.1f} / {r.ndcg10:.1f}")
        cut_rows.append(f"| {name} | {ours.overall.r5:.1f} / {ours.overall.ndcg10:.1f} | {cuts[0]} | {cuts[1]} |")
        if args.ablation:
            cells = [
                f"{run(ToolIndex(Catalog(tools), keyword=KeywordBackend(**kw)), queries).overall.ndcg10:.1f}"  # type: ignore[arg-type]
                for kw in ABLATIONS.values()
            ]
            ablation.append(f"| {name} | " + " | ".join(cells) + " |")
        if name == "toolpool":
            parts = [
                f"{split} {ours.splits[split].ndcg10:.1f} (plain {plain.splits[split].ndcg10:.1f})"
                for split in sorted(ours.splits)
            ]
            origin_line = "toolpool nDCG@10 per origin: " + ", ".join(parts) + "."
        print(quality[-1], flush=True)
        print(cut_rows[-1], flush=True)

    body = (
        "R@1 / R@5 / nDCG@10, percent. Plain BM25 is reproduced in the same run; the README's "
        "figure is in brackets.\n\n"
        + "\n".join(quality)
        + f"\n\n{origin_line}\n\n**AutoCut** on the shipped search (R@5 / nDCG@10 of the cut list):\n\n"
        + "\n".join(cut_rows)
        + f"\n\nWhole run: {time.perf_counter() - started:.0f} s."
    )
    if args.ablation:
        body += (
            "\n\n**Sensitivity** (nDCG@10 of other weights and k1/b; a check that the principled "
            "defaults are not on a knife edge, not a search for the best set):\n\n" + "\n".join(ablation)
        )
    print(body)
    if not args.no_write:
        write_section("search-quality", "Keyword search quality", "python benchmarks/search_quality.py", body)


if __name__ == "__main__":
    main()
