"""Vectors cached in the store, keyed by model id and text hash.

A restart or a one-tool change re-embeds only the texts whose hash is new. All vectors of
one model live in one blob (``ns="embeddings"``, ``key=model_id``): restoring 10k vectors
is then one read and one ``np.frombuffer``, not 10k row lookups. A blob that does not
parse (truncated, another format) is treated as empty with a warning, never trusted.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any, Protocol

import numpy as np

from .base import Embedder, check_vectors

__all__ = ["BlobStore", "VectorCache", "text_key"]

NAMESPACE = "embeddings"
_FORMAT = 1
_KEY_BYTES = 16


class BlobStore(Protocol):
    """The part of :class:`toolscout.storage.Store` the cache needs."""

    def put(self, ns: str, key: str, value: bytes | str, meta: dict[str, Any] | None = None) -> None: ...

    def get(self, ns: str, key: str) -> Any: ...


def text_key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=_KEY_BYTES).digest()


class VectorCache:
    """Embed texts through ``embedder``, reusing vectors computed before.

    ``store`` is optional: without it the cache lives in memory only. ``max_entries`` bounds
    the blob: vectors of texts no longer in the catalog are kept (a tool often comes back)
    until the bound, then the oldest go first.
    """

    def __init__(
        self,
        embedder: Embedder,
        store: BlobStore | None = None,
        *,
        max_entries: int = 200_000,
        batch_size: int = 256,
    ) -> None:
        self.embedder = embedder
        self.store = store
        self.max_entries = max_entries
        self.batch_size = batch_size
        self.warnings: list[str] = []
        self.stats = {"reused": 0, "embedded": 0}
        self._rows: dict[bytes, int] = {}
        self._matrix = np.zeros((0, embedder.dim), dtype=np.float32)
        self._loaded = False

    # -- persistence -----------------------------------------------------------------
    def _load(self) -> None:
        self._loaded = True
        if self.store is None:
            return
        try:
            entry = self.store.get(NAMESPACE, self.embedder.model_id)
        except Exception as exc:  # a damaged store file: re-embed rather than crash
            self.warnings.append(f"vector cache unreadable ({exc}); re-embedding")
            return
        if entry is None:
            return
        try:
            keys, matrix = _decode(entry.value, entry.meta, self.embedder.dim)
        except ValueError as exc:
            self.warnings.append(f"vector cache for {self.embedder.model_id} is corrupt ({exc}); re-embedding")
            return
        self._rows = {k: i for i, k in enumerate(keys)}
        self._matrix = matrix

    def _merge_stored(self) -> None:
        """Adopt vectors another process saved since we loaded (same store, same model)."""
        try:
            entry = self.store.get(NAMESPACE, self.embedder.model_id) if self.store else None
            if entry is None:
                return
            keys, matrix = _decode(entry.value, entry.meta, self.embedder.dim)
        except Exception:
            return  # unreadable: it is about to be overwritten with a good blob
        new = [i for i, k in enumerate(keys) if k not in self._rows]
        if new:
            base = len(self._matrix)
            self._matrix = np.concatenate([self._matrix, matrix[new]])
            self._rows.update({keys[i]: base + j for j, i in enumerate(new)})

    def _save(self, keep_first: list[bytes]) -> None:
        if self.store is None:
            return
        self._merge_stored()
        keys = list(dict.fromkeys(keep_first))
        if len(keys) < self.max_entries:
            wanted = set(keys)
            extra = [k for k in self._rows if k not in wanted]
            keys += extra[-(self.max_entries - len(keys)) :] if extra else []
        rows = np.fromiter((self._rows[k] for k in keys), dtype=np.int64, count=len(keys))
        matrix = np.ascontiguousarray(self._matrix[rows])
        value = b"".join(keys) + matrix.tobytes()
        meta = {"format": _FORMAT, "dim": self.embedder.dim, "count": len(keys)}
        try:
            self.store.put(NAMESPACE, self.embedder.model_id, value, meta)
        except Exception as exc:
            self.warnings.append(f"could not save vector cache ({exc})")

    # -- use -------------------------------------------------------------------------
    def embed(self, texts: list[str], progress: Callable[[int], None] | None = None) -> np.ndarray:
        """Vectors for ``texts`` (cached ones reused); ``progress(n)`` after each batch."""
        if not self._loaded:
            self._load()
        keys = [text_key(t) for t in texts]
        missing = list(dict.fromkeys(k for k in keys if k not in self._rows))
        by_key = {k: t for k, t in zip(keys, texts, strict=True)}
        self.stats["reused"] += len(texts) - len(missing)
        if progress is not None:
            progress(len(texts) - len(missing))
        if missing:
            fresh: list[np.ndarray] = []
            for start in range(0, len(missing), self.batch_size):
                batch = [by_key[k] for k in missing[start : start + self.batch_size]]
                vectors = self.embedder.embed(batch)
                fresh.append(check_vectors(vectors, len(batch), self.embedder.dim, self.embedder.model_id))
                if progress is not None:
                    progress(len(batch))
            base = len(self._matrix)
            self._matrix = np.concatenate([self._matrix, *fresh])
            self._rows.update({k: base + i for i, k in enumerate(missing)})
            self.stats["embedded"] += len(missing)
            self._save(keys)
        rows = np.fromiter((self._rows[k] for k in keys), dtype=np.int64, count=len(keys))
        return self._matrix[rows]

    def missing(self, texts: list[str]) -> int:
        """How many of ``texts`` would need embedding (for a progress bar's total)."""
        if not self._loaded:
            self._load()
        return len({k for k in map(text_key, texts) if k not in self._rows})


def _decode(value: bytes | str, meta: dict[str, Any], dim: int) -> tuple[list[bytes], np.ndarray]:
    if isinstance(value, str) or not isinstance(meta, dict):
        raise ValueError("not a vector blob")
    if meta.get("format") != _FORMAT or meta.get("dim") != dim:
        raise ValueError(f"format/dim {json.dumps(meta)} does not match dim {dim}")
    count = meta.get("count")
    if not isinstance(count, int) or len(value) != count * (_KEY_BYTES + 4 * dim):
        raise ValueError("size does not match its header")
    split = count * _KEY_BYTES
    keys = [value[i : i + _KEY_BYTES] for i in range(0, split, _KEY_BYTES)]
    matrix = np.frombuffer(value, dtype=np.float32, offset=split).reshape(count, dim).copy()
    if not np.isfinite(matrix).all():
        raise ValueError("non-finite values")
    return keys, matrix
