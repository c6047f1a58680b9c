"""Models loaded through other libraries, imported only when a user asks for them.

These libraries download their models on first use, so they need network access once;
toolscout itself never does. Neither is a dependency of any toolscout extra.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import EmbeddingUnavailable
from .base import check_vectors

__all__ = ["FastEmbedEmbedder", "SentenceTransformerEmbedder"]


class FastEmbedEmbedder:
    """A fastembed ``TextEmbedding`` model by name (``pip install fastembed``)."""

    def __init__(self, model_name: str, **kwargs: Any) -> None:
        try:
            from fastembed import TextEmbedding
        except ImportError as exc:
            raise EmbeddingUnavailable(
                f"fastembed model {model_name!r} needs the fastembed package", hint="pip install fastembed"
            ) from exc
        try:
            self._model = TextEmbedding(model_name, **kwargs)
            probe = np.asarray(list(self._model.embed(["probe"])), dtype=np.float32)
        except Exception as exc:
            raise EmbeddingUnavailable(f"cannot load fastembed model {model_name}: {exc}") from exc
        self.dim = int(probe.shape[1])
        self.model_id = f"fastembed:{model_name}"

    def embed(self, texts: list[str]) -> np.ndarray:
        vectors = np.asarray(list(self._model.embed(texts)), dtype=np.float32).reshape(len(texts), -1)
        return check_vectors(vectors, len(texts), self.dim, self.model_id)


class SentenceTransformerEmbedder:
    """A sentence-transformers model by name or path (``pip install sentence-transformers``;
    this pulls torch, which is why it is no toolscout extra)."""

    def __init__(self, model_name: str, **kwargs: Any) -> None:
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbeddingUnavailable(
                f"sentence-transformers model {model_name!r} needs that package",
                hint="pip install sentence-transformers",
            ) from exc
        try:
            self._model = SentenceTransformer(model_name, **kwargs)
        except Exception as exc:
            raise EmbeddingUnavailable(f"cannot load sentence-transformers model {model_name}: {exc}") from exc
        self.dim = int(self._model.get_sentence_embedding_dimension() or 0)
        self.model_id = f"sentence-transformers:{model_name}"

    def embed(self, texts: list[str]) -> np.ndarray:
        vectors = self._model.encode(texts, convert_to_numpy=True, normalize_embeddings=True)
        return check_vectors(np.asarray(vectors, dtype=np.float32), len(texts), self.dim, self.model_id)
