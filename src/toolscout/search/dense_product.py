"""The cosines of a request's query vectors with every tool vector, in one matrix product.

Why: a never-seen request encodes its text and, for a request of several sentences, each
sentence (a doc scores its best similarity over them), then scores every tool against each
vector. numpy's ``einsum`` reads the whole tool matrix once per vector (0.8 ms per vector at
13.6k x 384 on one core), and OpenBLAS's own single-threaded ``sgemm`` is no faster for a few
rows (it repacks the 21 MB matrix at every call). onnxruntime's GEMM packs a constant operand
once, when the session is built: the products of 1, 3 and 7 vectors then cost about 0.7, 0.9
and 1.2 ms instead of 0.8, 2.4 and 5.6 (docs/benchmarks.md, "hybrid stages").

The packed copy costs the matrix's size again in memory and a few hundred milliseconds to build
at 13.6k tools, so :class:`~toolscout.search.dense.DenseBackend` builds it beside the searches
(a background thread after each rebuild) and uses ``einsum`` until it is ready, only for
catalogs that are searched exactly (below :data:`~toolscout.search.ann.ANN_FROM`). Results
agree with ``einsum`` to float rounding (~1e-7 on a cosine).
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np

__all__ = ["PackedProduct", "available", "einsum_product"]


def available() -> bool:
    """Whether onnxruntime and onnx (the ``embed`` extra) are installed, without importing them."""
    return all(importlib.util.find_spec(name) is not None for name in ("onnx", "onnxruntime"))


def einsum_product(matrix: np.ndarray, vectors: np.ndarray) -> np.ndarray:
    """``vectors @ matrix.T`` one vector at a time on the calling thread: BLAS would spread a
    product this small over every core, which on shared cores next to the encoder's thread made
    it 12 ms instead of 1 ms (docs/embeddings.md); einsum's own loop never starts threads."""
    out = np.empty((len(vectors), len(matrix)), np.float32)
    for row, vector in enumerate(vectors):
        np.einsum("ij,j->i", matrix, vector, out=out[row])
    return out


class PackedProduct:
    """``vectors @ matrix.T`` by onnxruntime with ``matrix`` packed once (one thread, the
    caller's). Raises ``ImportError`` without the ``embed`` extra."""

    def __init__(self, matrix: np.ndarray) -> None:
        import onnxruntime as ort
        from onnx import TensorProto, helper

        rows, dim = matrix.shape
        weights = helper.make_tensor("tools", TensorProto.FLOAT, [dim, rows], np.ascontiguousarray(matrix.T, np.float32).tobytes(), raw=True)
        graph = helper.make_graph(
            [helper.make_node("MatMul", ["queries", "tools"], ["cosines"])],
            "cosines",
            [helper.make_tensor_value_info("queries", TensorProto.FLOAT, ["k", dim])],
            [helper.make_tensor_value_info("cosines", TensorProto.FLOAT, ["k", rows])],
            initializer=[weights],
        )
        del weights
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
        del graph
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1  # the calling thread: a few rows are not worth a second core
        options.inter_op_num_threads = 1
        self._session: Any = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        self.rows, self.dim = rows, dim

    def __call__(self, vectors: np.ndarray) -> np.ndarray:
        """``(len(vectors), rows)`` float32 cosines."""
        queries = np.ascontiguousarray(vectors, np.float32).reshape(-1, self.dim)
        return self._session.run(None, {"queries": queries})[0]  # type: ignore[no-any-return]
