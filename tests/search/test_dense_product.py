"""One product per request: a request's texts scored against every tool vector at once,
packed or not, with the same cosines as one einsum per text (fake embedder, small catalog)."""

from __future__ import annotations

import numpy as np
import pytest

from _fake_embed import FakeEmbedder
from toolscout.catalog import Catalog
from toolscout.model import Tool
from toolscout.search import dense_product
from toolscout.search.dense import DenseBackend
from toolscout.search.dense_product import PackedProduct, einsum_product
from toolscout.search.hybrid import enable_hybrid
from toolscout.search.index import ToolIndex

TOOLS = [
    Tool("send_slack_message", "Post a message to a Slack channel"),
    Tool("get_weather", "Current weather forecast for a city"),
    Tool("refund_payment", "Give a customer their money back"),
    Tool("create_invoice", "Create an invoice for a customer order"),
    Tool("list_files", "List files in a directory"),
]
SYNONYMS = {"reimburse": "money", "buyer": "customer", "notify": "slack", "team": "channel"}
needs_pack = pytest.mark.skipif(not dense_product.available(), reason="needs the embed extra (onnxruntime, onnx)")


def _unit(rows: int, dim: int, seed: int) -> np.ndarray:
    m = np.random.default_rng(seed).standard_normal((rows, dim)).astype(np.float32)
    return m / np.linalg.norm(m, axis=1, keepdims=True)


def test_einsum_product_is_one_einsum_per_vector() -> None:
    matrix, vectors = _unit(50, 16, 0), _unit(3, 16, 1)
    out = einsum_product(matrix, vectors)
    assert out.shape == (3, 50) and out.dtype == np.float32
    for row, v in enumerate(vectors):
        np.testing.assert_array_equal(out[row], np.einsum("ij,j->i", matrix, v))


@needs_pack
def test_packed_product_agrees_with_einsum_to_rounding() -> None:
    matrix = _unit(700, 48, 2)
    product = PackedProduct(matrix)
    for k in (1, 3, 7):
        vectors = _unit(k, 48, k)
        np.testing.assert_allclose(product(vectors), einsum_product(matrix, vectors), atol=1e-6)
    assert product(_unit(1, 48, 9)[0]).shape == (1, 700)  # one vector, as a row


@needs_pack
def test_a_packed_backend_scores_as_the_einsum_one_and_follows_a_rebuild() -> None:
    fake = FakeEmbedder(dim=64)
    packed, plain = DenseBackend(fake, progress=False, packed=True), DenseBackend(fake, progress=False, packed=False)
    for dense in (packed, plain):
        dense.rebuild(TOOLS)
    assert packed.packed and not plain.packed
    np.testing.assert_allclose(
        packed.scores("refund a payment", ["post to slack now"]), plain.scores("refund a payment", ["post to slack now"]), atol=1e-6
    )
    packed.rebuild(TOOLS[::-1])  # the packed copy is of the old tools: replaced, never read
    np.testing.assert_allclose(packed.scores("refund a payment"), plain.scores("refund a payment")[::-1], atol=1e-6)
    packed.rebuild(TOOLS[:2])
    assert packed.scores("refund a payment").shape == (2,)


def test_a_small_catalog_is_not_packed_by_default() -> None:
    dense = DenseBackend(FakeEmbedder(dim=64), progress=False)
    dense.rebuild(TOOLS)
    assert not dense.packed  # below PACK_FROM: einsum costs microseconds


@pytest.mark.parametrize("packed", [False, pytest.param(True, marks=needs_pack)])
def test_a_request_encodes_each_text_once_and_scores_them_in_one_product(packed: bool) -> None:
    """A request with several sub-intents: one encoder call holding each distinct text once
    (the request, its clauses), and one product of all of them with the tool vectors; the
    sub-searches read both. Asked again, it runs neither."""
    fake = FakeEmbedder(synonyms=SYNONYMS)
    index = ToolIndex(Catalog(TOOLS))
    search = enable_hybrid(index, fake, progress=False)
    search.dense.packing = packed  # read at the first search's rebuild
    index.search("warm up the index", limit=3, mode="hybrid")
    assert search.dense.packed is packed
    calls, products = len(fake.calls), search.dense.products
    request = "Create an invoice for the customer order. Then notify the team about it. Also list the files in the folder."
    out = index.search(request, limit=5, mode="hybrid")
    assert len(out.intents) == 3
    new = fake.calls[calls:]
    assert len(new) == 1 and len(new[0]) == len(set(new[0])) >= 4  # the request and its three clauses, once each
    assert search.dense.products == products + 1
    assert {"create_invoice", "send_slack_message", "list_files"} <= {h.tool.name for h in out.hits}
    index.search(request, limit=5, mode="hybrid")
    assert len(fake.calls) == calls + 1 and search.dense.products == products + 1


def test_a_single_text_request_is_one_call_and_one_product() -> None:
    fake = FakeEmbedder(synonyms=SYNONYMS)
    index = ToolIndex(Catalog(TOOLS))
    search = enable_hybrid(index, fake, progress=False)
    index.search("warm up the index", limit=3, mode="hybrid")
    calls, products = len(fake.calls), search.dense.products
    assert index.search("reimburse the buyer", limit=3, mode="hybrid").hits[0].tool.name == "refund_payment"
    assert fake.calls[calls:] == [["reimburse the buyer"]] and search.dense.products == products + 1


@needs_pack
def test_a_failing_packed_product_falls_back_to_einsum() -> None:
    fake = FakeEmbedder(dim=64)
    dense = DenseBackend(fake, progress=False, packed=True)
    dense.rebuild(TOOLS)
    expected = DenseBackend(fake, progress=False, packed=False)
    expected.rebuild(TOOLS)

    class Broken:
        rows = len(TOOLS)

        def __call__(self, vectors: np.ndarray) -> np.ndarray:
            raise RuntimeError("onnxruntime failed")

    dense._product = (dense._matrix, Broken())  # type: ignore[assignment]  # a runtime that fails mid-run
    np.testing.assert_allclose(dense.scores("refund a payment"), expected.scores("refund a payment"), atol=1e-6)
    assert not dense.packed  # dropped: the next searches use einsum
