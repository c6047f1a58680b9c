"""Static query vectors distilled from the model: a table lookup instead of a transformer.

Each wordpiece of the tokenizer's vocabulary is run through the model once, alone
(``[CLS] piece [SEP]``; the piece's own output vector), and kept in a table; a query's
vector is then the mean of its wordpieces' rows (the model2vec idea, without the PCA: the
table stays in the model's own vector space, so tool vectors computed by the model are
reused unchanged). A query costs tokenisation plus a few row reads: well under a
millisecond, against several for the model. Word order and context are lost, so the
ranking is not the model's (docs/hybrid.md, Latency, has the measured quality).

The table (vocabulary x dimension, float16, 23 MB for MiniLM) takes about a minute to
build on one core; with a store it is kept in the ``static-tables`` namespace under
``static:<model id>`` and built only once.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .base import check_vectors

__all__ = ["StaticEmbedder", "distil_table"]

_NAMESPACE = "static-tables"
_FORMAT = 2  # 1: pooled over [CLS] piece [SEP]; 2: the piece's own output
_BATCH = 512


def distil_table(session: Any, vocab_size: int, cls_id: int, sep_id: int, dim: int) -> np.ndarray:
    """Row ``i``: the model's output at the piece for the input ``[CLS] i [SEP]`` (unit norm);
    measured on toolpool queries it is closer to the model's query vectors than the pooled
    mean of all three positions (median cosine 0.30 vs 0.23)."""
    table = np.zeros((vocab_size, dim), dtype=np.float32)
    inputs = {i.name for i in session.get_inputs()}
    for start in range(0, vocab_size, _BATCH):
        ids = np.arange(start, min(start + _BATCH, vocab_size), dtype=np.int64)
        batch = np.stack([np.full_like(ids, cls_id), ids, np.full_like(ids, sep_id)], axis=1)
        feeds = {"input_ids": batch, "attention_mask": np.ones_like(batch)}
        if "token_type_ids" in inputs:
            feeds["token_type_ids"] = np.zeros_like(batch)
        table[ids] = session.run(None, feeds)[0][:, 1]
    norms = np.linalg.norm(table, axis=1, keepdims=True)
    return table / np.maximum(norms, 1e-12)


class StaticEmbedder:
    """An :class:`~toolscout.embed.Embedder` over a distilled table: mean of the query's
    wordpiece rows (special tokens left out), normalised."""

    def __init__(self, tokenizer: Any, table: np.ndarray, model_id: str) -> None:
        self._tokenizer = tokenizer
        self._table = table
        self.dim = int(table.shape[1])
        self.model_id = model_id

    @classmethod
    def from_model(cls, model: Any, store: Any = None) -> StaticEmbedder:
        """Distil (or load from ``store``) the table of an :class:`~toolscout.embed.onnx.OnnxEmbedder`."""
        tokenizer = model._tokenizer
        model_id = f"static:{model.model_id}"
        vocab = tokenizer.get_vocab_size()
        table = _load(store, model_id, vocab, model.dim)
        if table is None:
            cls_id, sep_id = tokenizer.token_to_id("[CLS]"), tokenizer.token_to_id("[SEP]")
            table = distil_table(model._session, vocab, cls_id, sep_id, model.dim).astype(np.float16)
            if store is not None:
                meta = {"format": _FORMAT, "vocab": vocab, "dim": model.dim}
                store.put(_NAMESPACE, model_id, table.tobytes(), meta)
        return cls(tokenizer, table, model_id)

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):  # on this thread: encode_batch's pool costs more
            ids = self._tokenizer.encode(text or " ", add_special_tokens=False).ids
            if ids:
                out[row] = self._table[ids].astype(np.float32).mean(axis=0)
        out[~out.any(axis=1), 0] = 1.0  # no wordpiece at all: any unit vector, never NaN
        return check_vectors(out, len(texts), self.dim, self.model_id)


def _load(store: Any, key: str, vocab: int, dim: int) -> np.ndarray | None:
    """The stored table, or ``None`` when absent or not of this shape (then rebuilt)."""
    if store is None:
        return None
    try:
        entry = store.get(_NAMESPACE, key)
    except Exception:
        return None
    if entry is None or not isinstance(entry.value, bytes) or entry.meta != {"format": _FORMAT, "vocab": vocab, "dim": dim}:
        return None
    if len(entry.value) != vocab * dim * 2:
        return None
    table = np.frombuffer(entry.value, dtype=np.float16).reshape(vocab, dim)
    return table if np.isfinite(table).all() else None
