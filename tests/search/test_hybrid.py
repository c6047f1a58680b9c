"""Hybrid fusion: only real hits, confidence gating, fallbacks (fake embedder, small catalog)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from _fake_embed import FakeEmbedder
from toolscout.catalog import Catalog
from toolscout.errors import EmbeddingUnavailable
from toolscout.model import Tool
from toolscout.search.hybrid import FusionInput, confidences, enable_hybrid, fuse, rewrite
from toolscout.search.index import ToolIndex
from toolscout.storage import SQLiteStore as Store

TOOLS = [
    Tool("send_slack_message", "Post a message to a Slack channel"),
    Tool("get_weather", "Current weather forecast for a city"),
    Tool("refund_payment", "Give a customer their money back"),
    Tool("create_invoice", "Create an invoice for a customer order"),
    Tool("list_files", "List files in a directory"),
    Tool("empty_tool"),
]
# The fake model "understands" these paraphrases; keyword search cannot.
SYNONYMS = {"reimburse": "money", "buyer": "customer", "notify": "slack", "team": "channel"}


def _index(embedder: FakeEmbedder | None = None, store: Store | None = None) -> tuple[Catalog, ToolIndex]:
    catalog = Catalog(TOOLS)
    index = ToolIndex(catalog)
    enable_hybrid(index, embedder or FakeEmbedder(synonyms=SYNONYMS), store=store, progress=False)
    return catalog, index


def _names(outcome) -> list[str]:  # type: ignore[no-untyped-def]
    return [h.tool.name for h in outcome.hits]


def test_rewrite_strips_question_words_and_finds_identifiers() -> None:
    variants = rewrite("Can you please help me call `write_file` or getWeather?")
    kinds = {v.kind: v.text for v in variants}
    assert kinds["original"].startswith("Can you")
    assert kinds["stripped"] == "call `write_file` or getWeather"
    assert [v.text for v in variants if v.kind == "identifier"] == ["write_file", "getWeather"]
    assert rewrite("list files") == rewrite("list files")[:1]  # nothing to rewrite


def test_auto_is_hybrid_and_paraphrase_finds_the_tool() -> None:
    _, index = _index()
    assert index.resolve_mode("auto") == "hybrid"
    assert _names(index.search("reimburse the buyer", limit=3))[0] == "refund_payment"
    # keyword alone finds nothing for the paraphrase: it falls back to semantic, and says so
    fallback = index.search("reimburse the buyer", limit=3, mode="keyword")
    assert _names(fallback)[0] == "refund_payment" and fallback.hits[0].why == "semantic"
    assert "keyword search found nothing; these are semantic results" in fallback.warnings
    assert ToolIndex(index.catalog).search("reimburse the buyer", limit=3, mode="keyword").hits == []  # keyword only


def test_fusion_returns_only_what_backends_returned() -> None:
    inp = FusionInput(
        kw_docs=np.array([4, 1]), kw_scores=np.array([3.0, 1.0]),
        dense_docs=np.array([2]), dense_scores=np.array([0.6]),
    )
    docs = {h.doc for h in fuse(inp, limit=10)}
    assert docs == {4, 1, 2}  # no zero-score tail, no doc neither backend returned


def _arr(*xs: float) -> np.ndarray:
    return np.array(xs, dtype=float)


def test_confidence_gating_follows_the_backend_that_is_sure() -> None:
    docs = np.arange(6)
    # keyword: one tool stands far out; dense: flat scores in another order (guessing)
    sure_kw = FusionInput(docs, _arr(9, 1, 1, 1, 1, 1), docs[::-1], _arr(0.31, 0.30, 0.30, 0.29, 0.29, 0.28))
    zk, zd = confidences(sure_kw)
    assert zk > 2 > zd
    assert fuse(sure_kw, 3)[0].doc == 0
    # the mirror case: dense is sure, keyword is flat
    sure_dense = FusionInput(docs, _arr(2.0, 1.9, 1.9, 1.9, 1.8, 1.8), docs[::-1], _arr(0.8, 0.3, 0.3, 0.29, 0.29, 0.28))
    zk, zd = confidences(sure_dense)
    assert zd > 2 > zk
    assert fuse(sure_dense, 3)[0].doc == 5


def test_flat_lists_still_return_every_hit_in_order() -> None:
    inp = FusionInput(np.array([3, 1]), _arr(1.0, 1.0), np.zeros(0, int), np.zeros(0))
    assert [h.doc for h in fuse(inp, 5)] == [3, 1]


def test_exact_name_still_wins_in_hybrid() -> None:
    _, index = _index()
    assert _names(index.search("list_files", limit=3))[0] == "list_files"


def test_semantic_mode_and_masks() -> None:
    _, index = _index()
    out = index.search("reimburse the buyer", limit=5, mode="semantic", exclude=["refund_payment"])
    assert "refund_payment" not in _names(out)
    assert out.mode == "semantic"


def test_one_tool_change_reembeds_only_that_tool(tmp_path: Path) -> None:
    fake = FakeEmbedder(synonyms=SYNONYMS)
    catalog, index = _index(fake, Store(tmp_path / "v.db"))
    index.search("weather", limit=1)
    assert sum(len(c) for c in fake.calls if len(c) > 1) == len(TOOLS)
    fake.calls.clear()
    catalog.add(Tool("get_weather", "Weather forecast for any city, hourly"), replace=True)
    index.search("weather in paris", limit=1)
    embedded = [t for call in fake.calls for t in call]
    assert embedded == ["get weather: Weather forecast for any city, hourly", "weather in paris"]

    fake.calls.clear()  # a restart: same store, new index: nothing re-embedded but the query
    _, again = _index(fake, Store(tmp_path / "v.db"))
    catalog2 = again.catalog
    catalog2.add(Tool("get_weather", "Weather forecast for any city, hourly"), replace=True)
    again.search("weather in paris", limit=1)
    assert [t for call in fake.calls for t in call] == ["weather in paris"]


class _Broken(FakeEmbedder):
    """Works for the catalog, then the endpoint goes down."""

    def __init__(self) -> None:
        super().__init__(synonyms=SYNONYMS)
        self.down = False

    def embed(self, texts: list[str]) -> np.ndarray:
        if self.down:
            raise EmbeddingUnavailable("embedding endpoint http://127.0.0.1:9 unreachable")
        return super().embed(texts)


def test_endpoint_down_falls_back_to_keyword_with_warning() -> None:
    broken = _Broken()
    _, index = _index(broken)
    index.search("weather", limit=1)
    broken.down = True
    out = index.search("customer invoice", limit=3)
    assert _names(out)[0] == "create_invoice"  # keyword results
    assert any("keyword results only" in w and "unreachable" in w for w in out.warnings)
    sem = index.search("customer invoice", limit=3, mode="semantic")
    assert any("semantic search unavailable" in w for w in sem.warnings)  # and it says so
    assert _names(sem)[0] == "create_invoice" and "semantic search found nothing; these are keyword results" in sem.warnings


class _WrongDim(FakeEmbedder):
    def embed(self, texts: list[str]) -> np.ndarray:
        return np.ones((len(texts), self.dim + 1), dtype=np.float32)


def test_wrong_dimension_is_a_warning_not_a_wrong_ranking() -> None:
    _, index = _index(_WrongDim())
    out = index.search("customer invoice", limit=3)
    assert _names(out)[0] == "create_invoice"
    assert any("dimension" in w for w in out.warnings)


def test_unknown_model_spec_is_a_config_error() -> None:
    from toolscout.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown embedding model"):
        enable_hybrid(ToolIndex(Catalog(TOOLS)), "word2vec-please")


def test_identifier_inside_a_request_is_an_exact_name_and_a_typo_is_close() -> None:
    _, index = _index()
    assert _names(index.search("please run list_files in my home folder", limit=3))[0] == "list_files"
    out = index.search("how do I call create_invoise for an order", limit=3)
    assert _names(out)[0] == "create_invoice"
    assert "name" in out.hits[0].why


def test_multi_part_request_is_split_into_clauses() -> None:
    variants = rewrite("Forecast the weather in Paris tomorrow. Then post the summary to our slack channel.")
    clauses = [v.text for v in variants if v.kind == "clause"]
    assert clauses == ["Forecast the weather in Paris tomorrow.", "Then post the summary to our slack channel."]
    assert not [v for v in rewrite("get the weather in Paris") if v.kind == "clause"]


def test_each_clause_is_matched_on_its_own_by_the_dense_side() -> None:
    fake = FakeEmbedder(synonyms=SYNONYMS)
    _, index = _index(fake)
    # A request that asks for two things (sub-intents): its clauses are matched too.
    out = index.search("Please give the buyer a reimburse today. Then notify the team about it.", limit=6, mode="semantic")
    names = _names(out)[:2]
    assert set(names) == {"refund_payment", "send_slack_message"}
    batched = [c for c in fake.calls if any("notify" in t for t in c)]
    assert len(batched) == 1 and len(batched[0]) == 3  # query + 2 clauses in one model call


def test_enable_if_available_leaves_keyword_when_the_model_cannot_load(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolscout.errors import MissingExtra
    from toolscout.search import hybrid

    def missing(*_a: object, **_k: object) -> None:
        raise MissingExtra("The default embedding model", "embed")

    monkeypatch.setattr(hybrid, "enable_hybrid", missing)
    index = ToolIndex(Catalog(TOOLS))
    assert hybrid.enable_hybrid_if_available(index) is None
    assert index.resolve_mode("auto") == "keyword"


def test_dense_scores_are_the_best_cosine_over_query_and_clauses() -> None:
    from toolscout.search.dense import DenseBackend

    fake = FakeEmbedder(dim=64)
    dense = DenseBackend(fake, progress=False)
    dense.rebuild(TOOLS)
    texts = ["refund a payment", "post to slack now"]
    expected = (dense._matrix.astype(np.float64) @ fake.embed(texts).T.astype(np.float64)).max(axis=1)
    np.testing.assert_allclose(dense.scores(texts[0], texts[1:]), expected, atol=1e-5)
    np.testing.assert_allclose(dense.scores(texts[0]), dense._matrix @ fake.embed(texts[:1])[0], atol=1e-5)


def test_a_query_that_is_a_tool_name_does_not_run_the_model() -> None:
    fake = FakeEmbedder()
    _, index = _index(fake)
    index.search("warm up", limit=3, mode="hybrid")
    calls = len(fake.calls)
    assert _names(index.search("List-Files", limit=3, mode="hybrid"))[0] == "list_files"
    assert len(fake.calls) == calls
    index.search("list the files", limit=3, mode="hybrid")
    assert len(fake.calls) == calls + 1
    out = index.search("list_files", limit=3, mode="hybrid", exclude=["list_files"])  # not allowed: not a name here
    assert "list_files" not in _names(out) and len(fake.calls) == calls + 2


def test_a_query_resent_with_other_spacing_reuses_its_vector() -> None:
    fake = FakeEmbedder(synonyms=SYNONYMS)
    _, index = _index(fake)
    first = _names(index.search("reimburse the buyer", limit=3, mode="hybrid"))
    calls = len(fake.calls)
    assert _names(index.search("  reimburse the\nbuyer ", limit=3, mode="hybrid")) == first
    assert len(fake.calls) == calls


def test_a_requests_parts_reuse_the_vectors_of_the_clauses_that_hold_them() -> None:
    """A request with several sub-intents embeds the request and its clauses once; each
    part's own search reads the vector of the clause it comes from instead of embedding
    the part again (the same words, a few fewer)."""
    fake = FakeEmbedder(synonyms=SYNONYMS)
    _, index = _index(fake)
    request = "Create an invoice for the customer order. Then notify the team about it."
    out = index.search(request, limit=4, mode="hybrid")
    assert out.intents == ["Create an invoice for the customer order", "notify the team about it"]
    assert {"create_invoice", "send_slack_message"} <= set(_names(out))
    embedded = [t for call in fake.calls for t in call]
    assert len(embedded) == len(set(embedded))  # no text twice
    assert request in embedded and "Then notify the team about it." in embedded
    assert not [t for t in embedded if t.startswith("notify")]  # the part alone is not embedded
    before = len(fake.calls)
    index.search("notify the team about it", limit=3, mode="hybrid")  # asked on its own later: its own vector
    assert ["notify the team about it"] in fake.calls[before:]


def test_dense_scores_follow_a_rebuild() -> None:
    """The product of a text's vector with every tool vector is kept for the next texts of a
    request; a catalog change must not answer from the old tools' products."""
    from toolscout.search.dense import DenseBackend

    fake = FakeEmbedder(dim=64)
    dense = DenseBackend(fake, progress=False)
    dense.rebuild(TOOLS)
    first = dense.scores("refund a payment").copy()
    np.testing.assert_array_equal(dense.scores("refund a payment"), first)
    dense.rebuild(TOOLS[::-1])
    np.testing.assert_allclose(dense.scores("refund a payment"), first[::-1], atol=1e-6)
    dense.rebuild(TOOLS[:2])
    assert dense.scores("refund a payment").shape == (2,)


def test_a_clause_that_holds_two_parts_stands_for_neither() -> None:
    fake = FakeEmbedder(synonyms=SYNONYMS)
    _, index = _index(fake)
    request = "Create an invoice for the customer order and notify the team about it. Then list the files in the folder."
    out = index.search(request, limit=5, mode="hybrid")
    assert len(out.intents or []) == 3
    embedded = [t for call in fake.calls for t in call]
    # the first sentence holds two parts: each is embedded on its own
    assert "Create an invoice for the customer order" in embedded and "notify the team about it" in embedded
    assert "list the files in the folder" not in embedded  # read from "Then list the files in the folder."
    assert "Then list the files in the folder." in embedded
