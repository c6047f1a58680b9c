"""toolpicker: its own BM25 retriever alone, or its ``ToolPicker`` facade (BM25 + semantic
fused by RRF) with MiniLM plugged in through its ``EmbeddingProvider`` protocol."""

from __future__ import annotations

from typing import Any


class _Embedder:
    """toolpicker's ``EmbeddingProvider``: corpus batches from the cache, queries live."""

    dimensions = 384

    def __init__(self, cache: Any) -> None:
        from _minilm import MiniLM

        self._model = MiniLM(cache)

    def embed(self, texts: list[str]) -> list[list[float]]:
        vecs = self._model.encode(texts) if len(texts) == 1 else self._model.documents(texts)
        return vecs.tolist()


def build(method: str, tools: list[dict[str, Any]], ctx: dict[str, Any]):
    from toolpicker import BM25Retriever, FunctionSchemaSource, ToolPicker

    source = FunctionSchemaSource(
        [
            {
                "name": t["name"],
                "description": t.get("description") or "",
                "parameters": t.get("input_schema") or {},
            }
            for t in tools
        ]
    )
    if method == "toolpicker-bm25":
        bm25 = BM25Retriever(source.tools())
        return lambda query, k: [tid for tid, _ in bm25.retrieve(query, k=k)]
    picker = ToolPicker(source, embedder=_Embedder(ctx["cache"]))
    return lambda query, k: [t.id for t in picker.select(query, k=k)]
