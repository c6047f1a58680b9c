"""A deterministic embedder for logic tests: bag of hashed words, so texts sharing words are close."""

from __future__ import annotations

import hashlib

import numpy as np

from toolscout.embed.base import normalize


class FakeEmbedder:
    def __init__(self, dim: int = 1024, model_id: str = "fake-bow", synonyms: dict[str, str] | None = None) -> None:
        self.dim = dim
        self.model_id = model_id
        self.synonyms = synonyms or {}
        self.calls: list[list[str]] = []

    def _word(self, word: str) -> int:
        word = self.synonyms.get(word, word)
        return int.from_bytes(hashlib.md5(word.encode()).digest()[:4], "little") % self.dim

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().replace(":", " ").replace(",", " ").replace(".", " ").split():
                out[row, self._word(word)] += 1.0
        return normalize(out)
