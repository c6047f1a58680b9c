"""Keyword ranking without per-doc passes (``KeywordBackend.rank``: MaxScore, bitmaps for
common terms) must return exactly what scoring every doc returns: the same docs, scores,
order (ties in catalog order, also at the cut), explanations and match counts."""

from __future__ import annotations

import numpy as np
import pytest

import toolscout.search.keyword as keyword
from toolscout.catalog import Catalog
from toolscout.model import Tool
from toolscout.search.index import ToolIndex
from toolscout.search.keyword import KeywordBackend

WORDS = ["get", "send", "list", "create", "delete", "update", "weather", "email", "stock", "price", "city", "forecast", "user", "file", "search", "translate", "image", "video", "music", "calendar", "event", "invoice", "payment", "order", "ticket", "data"]


def _tools(n: int, seed: int = 7) -> list[Tool]:
    """Tools with a skewed vocabulary (a few words everywhere, most rare) and exact
    duplicates, so scores tie and common terms cover most docs."""
    rng = np.random.default_rng(seed)
    weights = 1.0 / np.arange(1, len(WORDS) + 1)
    weights /= weights.sum()
    out = []
    for i in range(n):
        words = rng.choice(WORDS, size=int(rng.integers(2, 9)), p=weights)
        text = " ".join(words) if i % 5 else "send email to a user"  # every 5th is a duplicate
        out.append(Tool(f"t{i}_{words[0]}", text, {"properties": {str(words[-1]): {"type": "string"}}}))
    return out


QUERIES = ["send email", "get weather forecast for a city", "data", "stock price order payment",
           "unknownword", "list user file search translate image video music calendar"]


def _dense(kw: KeywordBackend, query: str, limit: int, mask: np.ndarray | None) -> tuple[list, int]:
    scores, used = kw.scores(query)
    if mask is not None:
        scores = np.where(mask, scores, 0.0)
    return [(h.doc, h.score, h.why) for h in kw.top(scores, used, limit)], kw.count_matches(scores)


@pytest.mark.parametrize("bitmaps_from", [0, 10**9])
def test_rank_equals_scoring_every_doc(monkeypatch: pytest.MonkeyPatch, bitmaps_from: int) -> None:
    monkeypatch.setattr(keyword, "_BITMAPS_FROM", bitmaps_from)
    monkeypatch.setattr(keyword, "_SPARSE_FROM", 0)  # the large-catalog path on a small one
    tools = _tools(3000)
    kw = KeywordBackend()
    kw.rebuild(tools)
    assert bool(kw._bitmaps) == (bitmaps_from == 0)  # both counting paths are exercised
    rng = np.random.default_rng(3)
    masks = [None, rng.random(len(tools)) < 0.5, rng.random(len(tools)) < 0.005, np.zeros(len(tools), bool)]
    for query in QUERIES:
        for mask in masks:
            for limit in (0, 1, 5, 50):
                hits, total = kw.rank(query, limit, mask)
                assert ([(h.doc, h.score, h.why) for h in hits], total) == _dense(kw, query, limit, mask)


def test_ties_at_the_cut_go_to_the_earlier_tool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keyword, "_SAMPLE", 8)  # small sample: the bound path is taken
    monkeypatch.setattr(keyword, "_SPARSE_FROM", 0)
    tools = [Tool(f"twin_{i}", "send an email message") for i in range(200)]
    kw = KeywordBackend()
    kw.rebuild(tools)
    hits, total = kw.rank("send email", 5, None)
    assert [h.doc for h in hits] == [0, 1, 2, 3, 4]
    assert total == 200
    mask = np.ones(200, bool)
    mask[:3] = False
    assert [h.doc for h in kw.rank("send email", 2, mask)[0]] == [3, 4]


def test_index_counts_filtered_matches() -> None:
    tools = _tools(500)
    index = ToolIndex(Catalog(tools))
    kw = index.backend("keyword")
    assert isinstance(kw, KeywordBackend)
    out = index.search("send email", limit=5, autocut=False)
    assert out.total_matches == _dense(kw, "send email", 5, None)[1]
    first = out.hits[0].tool.name
    rest = index.search("send email", limit=5, autocut=False, exclude=[first])
    assert rest.total_matches == out.total_matches - 1
    assert first not in [h.tool.name for h in rest.hits]


def test_large_catalog_scores_equal_the_small_path(monkeypatch: pytest.MonkeyPatch) -> None:
    """Above ``_SCIPY_ABOVE`` entries the fields are summed column-wise in scipy: the same
    float32 scores, bit for bit, as the small-catalog path."""
    tools = _tools(2000)
    small = KeywordBackend()
    small.rebuild(tools)
    monkeypatch.setattr(keyword, "_SCIPY_ABOVE", 0)
    monkeypatch.setattr(keyword, "_CHUNK", 300)  # several analysis chunks, stitched together
    big = KeywordBackend()
    big.rebuild(tools)
    for kw in (small, big):
        assert kw._scores.data.dtype == np.float32
    order = [big._vocab[t] for t in sorted(small._vocab, key=small._vocab.__getitem__)]
    for term, col in zip(sorted(small._vocab, key=small._vocab.__getitem__), order, strict=True):
        a = small._scores
        b = big._scores
        i = small._vocab[term]
        assert np.array_equal(a.indices[a.indptr[i] : a.indptr[i + 1]], b.indices[b.indptr[col] : b.indptr[col + 1]])
        assert np.array_equal(a.data[a.indptr[i] : a.indptr[i + 1]], b.data[b.indptr[col] : b.indptr[col + 1]])


def test_tools_without_mappings_share_one_read_only_empty_map() -> None:
    import json

    a, b = Tool("a", "x"), Tool("b", "y", meta={"k": "v"})
    assert a.meta is Tool("c").display  # one object for every empty mapping
    assert json.dumps(a.meta) == "{}" and dict(a.descriptions) == {}
    with pytest.raises(TypeError):
        a.meta["k"] = "v"  # type: ignore[index]
    assert Tool("a", "x") == a and b.meta == {"k": "v"}


def test_snapshot_restores_scores_without_recomputing(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    from toolscout.store import Store

    tools = _tools(400)
    store = Store(tmp_path / "s.db")
    first = ToolIndex(Catalog(tools), snapshots=store)
    expected = [(h.tool.name, h.score) for h in first.search("send email user", limit=10, autocut=False).hits]

    def boom(self: KeywordBackend) -> None:
        raise AssertionError("scores recomputed")

    monkeypatch.setattr(KeywordBackend, "_compute_scores", boom)
    again = ToolIndex(Catalog(tools), snapshots=store)
    assert [(h.tool.name, h.score) for h in again.search("send email user", limit=10, autocut=False).hits] == expected
    store.close()


def test_hybrid_keyword_side_takes_the_large_catalog_path_with_the_same_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    """Hybrid fusion reads the keyword backend's best ``POOL`` hits; on a large catalog they
    come from MaxScore (no pass over every doc) and must be the full pass's, tie order too."""
    from toolscout.search.hybrid import keyword_input

    tools = _tools(3000)
    kw = KeywordBackend()
    kw.rebuild(tools)
    rng = np.random.default_rng(5)
    masks = [None, rng.random(len(tools)) < 0.3]
    full = {(q, i): keyword_input(kw, q, m) for q in QUERIES for i, m in enumerate(masks)}
    assert not kw.sparse
    monkeypatch.setattr(keyword, "_SPARSE_FROM", 0)
    assert kw.sparse
    calls: list[str] = []
    monkeypatch.setattr(kw, "scores", lambda *a, **k: calls.append("scores"))  # must not be used
    for (query, i), (docs, scores) in full.items():
        sparse_docs, sparse_scores = keyword_input(kw, query, masks[i])
        assert sparse_docs.tolist() == docs.tolist() and sparse_scores.tolist() == scores.tolist()
    assert calls == []
