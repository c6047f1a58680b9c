"""callbus with its own defaults: ``BM25Scorer`` (bm25s, stemmed, over the tool document as
JSON), ``DenseScorer`` (cosine over ``name: description``) and ``HybridScorer`` (RRF k=60 of
the two, BM25's zero-score tail dropped). The dense side uses MiniLM, not callbus's own
8B backbone, so every hybrid peer runs the same model."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


class _Encoder:
    """callbus's ``TextEncoder`` port: corpus batches from the cache, queries live."""

    def __init__(self, cache: Any) -> None:
        from _minilm import MiniLM

        self._model = MiniLM(cache)
        self.name = self._model.name

    def encode(self, texts: Sequence[str], *, kind: str = "document") -> np.ndarray:
        texts = list(texts)
        return self._model.documents(texts) if kind == "document" else self._model.encode(texts)


def build(method: str, tools: list[dict[str, Any]], ctx: dict[str, Any]):
    from callbus.adapters.bm25 import BM25Scorer
    from callbus.domain import Query, Tool

    corpus = [
        Tool(
            id=t["name"],
            doc={
                "name": t["name"],
                "description": t.get("description") or "",
                "parameters": t.get("input_schema") or {},
            },
            category=str(t.get("source") or ""),
        )
        for t in tools
    ]
    if method == "callbus-bm25":
        scorer: Any = BM25Scorer()
    else:
        from callbus.adapters.dense import DenseScorer

        scorer = DenseScorer(_Encoder(ctx["cache"]))
        if method == "callbus-hybrid":
            from callbus.adapters.hybrid import HybridScorer

            scorer = HybridScorer(scorer, BM25Scorer())
    scorer.index(corpus)
    ctx["notes"].append(scorer.name)

    def search(query: str, k: int) -> list[str]:
        return scorer.rank([Query(id="q", text=query, qrels={})], k)[0].tool_ids

    return search
