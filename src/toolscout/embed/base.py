"""The one interface every embedding model sits behind, plus checks shared by all of them.

Vectors are float32 and L2-normalised, so a dot product is the cosine similarity and a
dense index is one matrix product. Every embedder returns exactly ``(len(texts), dim)``;
anything else is refused here rather than allowed to corrupt a ranking silently.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Protocol, runtime_checkable

import numpy as np

from ..errors import EmbeddingUnavailable

__all__ = ["Embedder", "check_vectors", "file_sha256", "normalize", "verify_file"]


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into unit vectors. ``model_id`` names the model *and* its settings, so
    vectors cached under one id are never mixed with another model's."""

    model_id: str
    dim: int

    def embed(self, texts: list[str]) -> np.ndarray:
        """``(len(texts), dim)`` float32, each row L2-normalised."""
        ...


def normalize(matrix: np.ndarray) -> np.ndarray:
    """Row-wise L2 normalisation; all-zero rows stay zero instead of becoming NaN."""
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return matrix / norms


def check_vectors(vectors: np.ndarray, count: int, dim: int, model_id: str) -> np.ndarray:
    """Refuse output of the wrong shape or with NaN/inf (a broken model or endpoint)."""
    if vectors.ndim != 2 or vectors.shape[0] != count:
        raise EmbeddingUnavailable(
            f"embedding model {model_id} returned {vectors.shape[0] if vectors.ndim else 0} "
            f"vectors for {count} texts"
        )
    if vectors.shape[1] != dim:
        raise EmbeddingUnavailable(
            f"embedding model {model_id} returned dimension {vectors.shape[1]}, expected {dim}",
            hint="The model or endpoint changed; set the right dimension or rebuild the index.",
            expected=dim,
            got=int(vectors.shape[1]),
        )
    if not np.isfinite(vectors).all():
        raise EmbeddingUnavailable(f"embedding model {model_id} returned NaN or inf values")
    return normalize(vectors)


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def verify_file(path: Path, sha256: str | None, what: str) -> None:
    """Refuse a missing file or one whose sha256 is not the pinned one (never load it)."""
    if not path.is_file():
        raise EmbeddingUnavailable(f"{what} not found: {path}", path=str(path))
    if sha256 is None:
        return
    found = file_sha256(path)
    if found != sha256.lower():
        raise EmbeddingUnavailable(
            f"{what} {path} has sha256 {found[:12]}…, expected {sha256[:12]}…; refusing to load it",
            hint="Reinstall the package that provides it, or pass the hash of the file you trust.",
            path=str(path),
            expected=sha256,
            found=found,
        )
