"""Embeddings from an OpenAI-compatible ``/embeddings`` endpoint (OpenAI, vLLM, Ollama, ...).

Failures (unreachable, HTTP error, malformed body, wrong dimension) all become
:class:`~toolscout.errors.EmbeddingUnavailable`, which the hybrid ranker turns into a
keyword-only answer with a warning instead of a crash or a wrong ranking.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import EmbeddingUnavailable
from .base import check_vectors

if TYPE_CHECKING:
    import httpx

__all__ = ["OpenAIEmbedder"]


class OpenAIEmbedder:
    """POST ``{"model", "input": [...]}`` to ``{base_url}/embeddings``.

    ``dim`` is probed with one request when not given. ``api_key`` defaults to the
    ``OPENAI_API_KEY`` environment variable (none is sent when unset: local servers).
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        *,
        dim: int | None = None,
        api_key: str | None = None,
        batch_size: int = 128,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        import httpx  # on first use: httpx loads rich, which the serve path never needs

        key = api_key if api_key is not None else os.environ.get("OPENAI_API_KEY")
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._client = httpx.Client(
            base_url=base_url.rstrip("/"), headers=headers, timeout=timeout, transport=transport
        )
        self.model = model
        self.model_id = f"openai:{base_url.rstrip('/')}:{model}"
        self.batch_size = batch_size
        self.dim = dim if dim is not None else int(self._request(["dimension probe"]).shape[1])

    def embed(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        parts = [self._request(texts[i : i + self.batch_size]) for i in range(0, len(texts), self.batch_size)]
        return check_vectors(np.concatenate(parts), len(texts), self.dim, self.model_id)

    def _request(self, texts: list[str]) -> np.ndarray:
        import httpx  # loaded by __init__ already: a dictionary lookup

        inputs = [t if t.strip() else " " for t in texts]  # endpoints reject empty strings
        try:
            response = self._client.post("/embeddings", json={"model": self.model, "input": inputs})
        except httpx.HTTPError as exc:
            raise EmbeddingUnavailable(f"embedding endpoint {self._client.base_url} unreachable: {exc}") from exc
        if response.status_code != 200:
            raise EmbeddingUnavailable(
                f"embedding endpoint {self._client.base_url} answered HTTP {response.status_code}",
                status=response.status_code,
            )
        try:
            data: list[dict[str, Any]] = response.json()["data"]
            ordered = sorted(data, key=lambda item: item.get("index", 0))
            matrix = np.asarray([item["embedding"] for item in ordered], dtype=np.float32)
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingUnavailable(f"embedding endpoint returned a malformed body: {exc}") from exc
        if matrix.ndim != 2 or len(matrix) != len(texts):
            raise EmbeddingUnavailable(f"embedding endpoint returned {len(matrix)} vectors for {len(texts)} texts")
        if getattr(self, "dim", None) is not None and matrix.shape[1] != self.dim:
            check_vectors(matrix, len(texts), self.dim, self.model_id)  # raises with both dims
        return matrix

    def close(self) -> None:
        self._client.close()
