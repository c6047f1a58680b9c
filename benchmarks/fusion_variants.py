"""Fusion and query-handling variants side by side: what was tried for hybrid quality.

For every set in ../shared/data, in one run and on the same vectors: nDCG@10 of keyword,
dense, the shipped hybrid, the hybrid without request understanding (search/intent.py), and
fusion variants that were tried and not kept: equal confidences, confidence from the gap
between a backend's first and second (or fifth) z, 30 or 300 candidates per backend, dense
pseudo-relevance feedback, standardising against the whole catalog instead of the
candidates, a hubness correction of dense scores (CSLS), and (``--multiview``, sets up to 2,000 tools) a second vector per tool from its
name and first sentence, clause vectors mean-pooled from one pass of the model over the whole
request (instead of a pass per clause: half the tokens of a multi-part request), and
(``--second-model``) a second embedding model next to MiniLM: the
Universal Sentence Encoder of ``toolscout[multilingual]``, the only other model that installs
offline here and reads English (its similarities averaged with MiniLM's, or fused as a third
backend). docs/hybrid.md reads the table.

Vectors come from benchmarks/hybrid_quality.py's cache (run that first).

    .venv/bin/python benchmarks/fusion_variants.py [--sets a,b] [--multiview] [--second-model] [--no-write]
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import write_section
from hybrid_quality import CACHE
from search_quality import DEFAULT_DATA, SETS
from toolscout.catalog import Catalog
from toolscout.embed import load_embedder
from toolscout.embed.cache import VectorCache
from toolscout.embed.onnx import default_embedder
from toolscout.embed.text import split_name
from toolscout.eval.dataset import load_queries, load_tools
from toolscout.eval.runner import score_ranking, select_queries
from toolscout.search.hybrid import (
    _DENSE_VARIANTS,
    POOL,
    FusionInput,
    _top,
    enable_hybrid,
    fuse,
    keyword_input,
    rewrite,
)
from toolscout.search.index import ToolIndex
from toolscout.search.intent import matching_text
from toolscout.storage import SQLiteStore as Store

Row = dict[str, Any]
Method = Callable[[np.ndarray, Row], list[int]]
_SENTENCE = re.compile(r"(?<=[.!?])\s+")


def _z(x: np.ndarray) -> np.ndarray:
    if len(x) <= 1:
        return np.ones(len(x))
    sd = float(x.std())
    return (x - x.mean()) / sd if sd > 1e-12 else np.zeros(len(x))


def _dense(matrix: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    return (matrix @ vectors.T).max(axis=1).astype(np.float64)


def _fused(lists: list[tuple[np.ndarray, np.ndarray]], conf: Callable[[np.ndarray], float], row: Row) -> list[int]:
    """The shipped rule (sum of confidence x positive z) with a pluggable confidence and z."""
    scores: dict[int, float] = {}
    for docs, z in lists:
        if not len(docs):
            continue
        w, n = conf(z), len(docs)
        for rank, (d, v) in enumerate(zip(docs.tolist(), z.tolist(), strict=True)):
            scores[d] = scores.get(d, 0.0) + w * max(v, 0.0) + 1e-3 * (n - rank) / n
    for d in row["fuzzy"]:
        scores[d] = scores.get(d, 0.0) + 1.0
    if row["exact"]:
        top = max(scores.values(), default=0.0) + 1.0
        for i, d in enumerate(row["exact"]):
            scores[d] = top + len(row["exact"]) - i
    return sorted(scores, key=lambda d: (-scores[d], d))[:10]


def shipped(matrix: np.ndarray, row: Row, dense: np.ndarray | None = None, pool: int = POOL, plain: bool = False) -> list[int]:
    ds = _dense(matrix, row["plain_vectors" if plain else "vectors"]) if dense is None else dense
    dd, dv = _top(ds, pool, 0.0)
    kd, ks = row["plain_kw" if plain else "kw"]
    hits = fuse(FusionInput(kd[:pool], ks[:pool], dd, dv), 10, exact=row["exact"], fuzzy=row["fuzzy"])
    return [h.doc for h in hits]


def _variant(conf: Callable[[np.ndarray], float], whole_dense: bool = False, whole_kw: bool = False) -> Method:
    def rank(matrix: np.ndarray, row: Row) -> list[int]:
        ds = _dense(matrix, row["vectors"])
        dd, dv = _top(ds, POOL, 0.0)
        kd, ks = row["kw"]
        zd = (dv - ds.mean()) / (ds.std() or 1.0) if whole_dense else _z(dv)
        if whole_kw:
            every = np.zeros(len(matrix))
            every[kd] = ks
            zk = (ks - every.mean()) / (every.std() or 1.0)
        else:
            zk = _z(ks)
        return _fused([(kd, zk), (dd, zd)], conf, row)

    return rank


def _gap(k: int) -> Callable[[np.ndarray], float]:
    return lambda z: max(float(z[0] - (z[min(k, len(z) - 1)] if len(z) > 1 else 0.0)), 0.0)


def _prf(beta: float, k: int) -> Method:
    """Dense pseudo-relevance feedback: the query vector moved towards the fused top ``k``."""

    def rank(matrix: np.ndarray, row: Row) -> list[int]:
        top = shipped(matrix, row)
        vectors = row["vectors"] + beta * matrix[top[:k]].mean(axis=0)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        return shipped(matrix, row, _dense(matrix, vectors))

    return rank


_HUBS: dict[int, np.ndarray] = {}


def _hubness(matrix: np.ndarray, k: int = 10) -> np.ndarray:
    """Each doc's mean cosine with its k nearest other docs (CSLS's r_d, Conneau et al. 2018),
    computed once per catalog matrix."""
    key = id(matrix)
    if key not in _HUBS:
        r = np.zeros(len(matrix))
        for i in range(0, len(matrix), 2048):
            sims = matrix[i : i + 2048] @ matrix.T
            sims[np.arange(len(sims)), np.arange(i, i + len(sims))] = -np.inf
            r[i : i + 2048] = np.partition(sims, sims.shape[1] - k, axis=1)[:, -k:].mean(axis=1)
        _HUBS[key] = r
    return _HUBS[key]


def _csls(beta: float) -> Method:
    """Hubness correction: dense score minus beta x the doc's neighbourhood density."""
    return lambda m, r: shipped(m, r, _dense(m, r["vectors"]) - beta * _hubness(m))


METHODS: dict[str, tuple[str, Method]] = {
    "keyword": ("keyword alone", lambda m, r: r["kw"][0][:10].tolist()),
    "dense": ("dense alone", lambda m, r: np.argsort(-_dense(m, r["vectors"]), kind="stable")[:10].tolist()),
    "shipped": ("**hybrid as shipped**", shipped),
    "plain": ("hybrid without request understanding", lambda m, r: shipped(m, r, plain=True)),
    "equal": ("equal confidences (no gating)", _variant(lambda z: 1.0)),
    "gap1": ("confidence = gap between 1st and 2nd z", _variant(_gap(1))),
    "gap4": ("confidence = gap between 1st and 5th z", _variant(_gap(4))),
    "pool30": ("30 candidates per backend", lambda m, r: shipped(m, r, pool=30)),
    "pool300": ("300 candidates per backend", lambda m, r: shipped(m, r, pool=300)),
    "prf": ("dense pseudo-relevance feedback (fused top 3)", _prf(1.0, 3)),
    "whole": ("dense z against the whole catalog", _variant(lambda z: max(float(z[0]), 0.0), whole_dense=True)),
    "whole2": ("dense and keyword z against the whole catalog", _variant(lambda z: max(float(z[0]), 0.0), True, True)),
    "csls": ("hubness correction (CSLS: dense minus 0.5 x mean cosine of the doc's 10 nearest docs)", _csls(0.5)),
    "pooled_dense": (
        "clauses pooled from one pass over the whole request: dense alone",
        lambda m, r: np.argsort(-_dense(m, r["pooled"]), kind="stable")[:10].tolist(),
    ),
    "pooled": ("clauses pooled from one pass over the whole request: hybrid", lambda m, r: shipped(m, r, _dense(m, r["pooled"]))),
}


def _averaged(m: np.ndarray, r: Row, m2: np.ndarray) -> list[int]:
    """The two models' similarities averaged (what concatenating their unit vectors gives)."""
    return shipped(m, r, (_dense(m, r["vectors"]) + _dense(m2, r["vectors2"])) / 2)


def _third_backend(m: np.ndarray, r: Row, m2: np.ndarray) -> list[int]:
    """The second model as a third backend, gated by its own confidence like the others."""
    lists = [(d, _z(s)) for d, s in (r["kw"], _top(_dense(m, r["vectors"]), POOL, 0.0), _top(_dense(m2, r["vectors2"]), POOL, 0.0))]
    return _fused(lists, lambda z: max(float(z[0]), 0.0), r)


def _pooled_clauses(embedder: Any, query: str, kinds: list[tuple[str, str]], separate: np.ndarray) -> np.ndarray:
    """The query's dense texts, each clause mean-pooled from the model's token states over the
    whole request (one pass) instead of embedded alone; other texts as embedded alone."""
    enc = embedder._tokenizer.encode(query)
    ids = np.array([enc.ids], np.int64)
    feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids)}
    if "token_type_ids" in embedder._inputs:
        feeds["token_type_ids"] = np.zeros_like(ids)
    states = embedder._session.run(None, feeds)[0][0]
    out = separate.copy()
    for i, (kind, text) in enumerate(kinds):
        start = query.find(text.strip()) if kind == "clause" else -1
        if start < 0:
            continue
        end = start + len(text.strip())
        tokens = [t for t, (a, b) in enumerate(enc.offsets) if b > a and a >= start and b <= end]
        if tokens:
            v = states[tokens].mean(axis=0)
            out[i] = v / (np.linalg.norm(v) or 1.0)
    return out


def _hybrid(tools: list[Any], queries: list[Any], embedder: Any, store: Store) -> Any:
    """A hybrid search over ``tools`` with ``embedder``, its dense index built and the
    queries (and their dense variants) embedded."""
    search = enable_hybrid(ToolIndex(Catalog(tools)), embedder, store=store, progress=True)
    search.index.search("warm up", limit=1, mode="semantic")
    texts = [q.query.strip() for q in queries]
    search.dense.prime_queries(list(dict.fromkeys(texts + [v.text for t in texts for v in rewrite(t) if v.kind in _DENSE_VARIANTS])))
    return search


def _rows(
    name: str, data: Path, selection: dict[str, object], embedder: Any, store: Store, second: Any = None
) -> tuple[list[Row], Any, list[Any], Any]:
    tools = load_tools(data / name / "tools.jsonl")
    queries = select_queries(load_queries(data / name / "queries.jsonl"), **selection)  # type: ignore[arg-type]
    search = _hybrid(tools, queries, embedder, store)
    index = search.index
    other = _hybrid(tools, queries, second, store) if second is not None else None
    kw = index.backend("keyword")
    everyone = np.ones(len(index.tools), bool)
    rows = []
    for q in queries:
        variants = rewrite(q.query)
        dense_variants = [v for v in variants if v.kind == "original" or v.kind in _DENSE_VARIANTS]
        squash = [" ".join(v.text.split()) for v in dense_variants]
        first: dict[str, tuple[str, str]] = {}
        for v in dense_variants:
            first.setdefault(" ".join(v.text.split()), (v.kind, v.text))
        kinds = list(first.values())  # aligned with the vectors of dict.fromkeys(squash)
        plain = [" ".join(v.text.split()) for v in variants if v.kind in ("original", "clause")]
        exact, fuzzy = search._names(variants, everyone)
        vectors = search.dense.query_vectors(list(dict.fromkeys(squash)))
        rows.append({
            "query": q,
            "kw": keyword_input(kw, matching_text(q.query), None),  # type: ignore[arg-type]
            "plain_kw": keyword_input(kw, q.query, None),  # type: ignore[arg-type]
            "vectors": vectors,
            "pooled": _pooled_clauses(embedder, q.query, kinds, vectors) if len(vectors) > 1 else vectors,
            "plain_vectors": search.dense.query_vectors(list(dict.fromkeys(plain))),
            "vectors2": other.dense.query_vectors(list(dict.fromkeys(squash))) if other is not None else None,
            "exact": exact,
            "fuzzy": fuzzy,
        })
    return rows, search, index.tools, other


def _ndcg(rows: list[Row], names: list[str], rank: Callable[[Row], list[int]]) -> float:
    return 100.0 * float(np.mean([score_ranking(r["query"], [names[d] for d in rank(r)]).ndcg10 for r in rows]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--sets", default="")
    parser.add_argument("--multiview", action="store_true", help="also a second vector per tool (sets <= 2,000 tools)")
    parser.add_argument("--second-model", action="store_true", help="also MiniLM with a second model (needs toolscout[multilingual])")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    wanted = set(filter(None, args.sets.split(",")))
    embedder, store = default_embedder(), Store(CACHE)
    use_model = load_embedder("multilingual") if args.second_model else None
    started = time.perf_counter()
    results: dict[str, dict[str, float]] = {}
    for name, selection, _ in SETS:
        if wanted and name not in wanted:
            continue
        rows, search, tools, other = _rows(name, args.data, selection, embedder, store, use_model)
        matrix, names = search.dense._matrix, [t.name for t in tools]
        results[name] = {key: _ndcg(rows, names, lambda r, f=f, m=matrix: f(m, r)) for key, (_, f) in METHODS.items()}
        if other is not None:
            m2 = other.dense._matrix
            results[name]["dense2"] = _ndcg(rows, names, lambda r, m2=m2: np.argsort(-_dense(m2, r["vectors2"]), kind="stable")[:10].tolist())
            results[name]["hybrid2"] = _ndcg(rows, names, lambda r, m2=m2: shipped(m2, r, _dense(m2, r["vectors2"])))
            results[name]["dense_avg"] = _ndcg(
                rows, names, lambda r, m=matrix, m2=m2: np.argsort(-(_dense(m, r["vectors"]) + _dense(m2, r["vectors2"])), kind="stable")[:10].tolist()
            )
            results[name]["second"] = _ndcg(rows, names, lambda r, m=matrix, m2=m2: _averaged(m, r, m2))
            results[name]["third"] = _ndcg(rows, names, lambda r, m=matrix, m2=m2: _third_backend(m, r, m2))
        if args.multiview and len(tools) <= 2000:
            short = [f"{split_name(t.name) or t.name}: {_SENTENCE.split(' '.join(t.description.split()), 1)[0]}".rstrip(": ") for t in tools]
            short_vectors = VectorCache(embedder, store).embed(short)
            results[name]["multiview"] = _ndcg(
                rows, names, lambda r, m=matrix, s=short_vectors: shipped(m, r, np.maximum(_dense(m, r["vectors"]), _dense(s, r["vectors"])))
            )
        print(name, {k: round(v, 1) for k, v in results[name].items()}, flush=True)
    labels = {key: label for key, (label, _) in METHODS.items()} | {
        "multiview": "second vector per tool (name + first sentence), max",
        "dense2": "USE (Universal Sentence Encoder multilingual v3) instead of MiniLM: dense alone",
        "hybrid2": "USE instead of MiniLM: hybrid",
        "dense_avg": "MiniLM and USE, similarities averaged (concatenated vectors): dense alone",
        "second": "MiniLM and USE, similarities averaged: hybrid",
        "third": "MiniLM and USE, USE as a third backend gated by its own confidence",
    }
    sets = list(results)
    lines = ["| variant | " + " | ".join(sets) + " |", "|---|" + "---|" * len(sets)]
    for key, label in labels.items():
        if any(key in results[s] for s in sets):
            cells = [f"{results[s][key]:.1f}" if key in results[s] else "" for s in sets]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    body = (
        "nDCG@10, percent, same vectors and queries for every row (metatool every 10th query, "
        "toollens its test split). Only the shipped row is what `search_type=\"hybrid\"` runs; "
        "the others were tried and not kept (docs/hybrid.md says why).\n\n"
        + "\n".join(lines)
        + f"\n\nWhole run: {time.perf_counter() - started:.0f} s."
    )
    print(body)
    if not args.no_write:
        command = "python benchmarks/fusion_variants.py --multiview" + (" --second-model" if use_model is not None else "")
        write_section("fusion-variants", "Hybrid: fusion and query-handling variants", command, body)


if __name__ == "__main__":
    main()
