"""Keyword ranking on a large catalog (``KeywordBackend.rank``: a float32 scratch
accumulator, a pool bounded by the k-th best, float64 rescoring) must return exactly what
scoring every doc returns: the same docs, scores, order (ties in catalog order, also at the
cut), explanations and match counts."""

from __future__ import annotations

import numpy as np
import pytest

import toolscout.search.sparse as sparse
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
    hits, total = kw.top(scores, used, limit)
    return [(h.doc, h.score, h.why) for h in hits], total


@pytest.mark.parametrize("matvec", [True, False])
def test_rank_equals_scoring_every_doc(monkeypatch: pytest.MonkeyPatch, matvec: bool) -> None:
    if not matvec:
        # Reach-in, on purpose: scipy's compiled product missing (np.add.at instead) is a
        # state of the installation, not a setting a user makes, so it has no public seam.
        monkeypatch.setattr(sparse, "_MATVEC", [None])
    assert (sparse.matvec() is not None) == matvec
    tools = _tools(3000)
    kw = KeywordBackend(sparse_from=0)  # the large-catalog path on a small one
    kw.rebuild(tools)
    rng = np.random.default_rng(3)
    masks = [None, rng.random(len(tools)) < 0.5, rng.random(len(tools)) < 0.005, np.zeros(len(tools), bool)]
    for query in QUERIES:
        for mask in masks:
            for limit in (0, 1, 5, 50):
                hits, total = kw.rank(query, limit, mask)
                assert ([(h.doc, h.score, h.why) for h in hits], total) == _dense(kw, query, limit, mask)


def test_ties_at_the_cut_go_to_the_earlier_tool() -> None:
    tools = [Tool(f"twin_{i}", "send an email message") for i in range(200)]
    kw = KeywordBackend(sparse_from=0, sample=8)  # small sample: the bound path is taken
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
    monkeypatch.setattr(sparse, "SCIPY_ABOVE", 0)
    big = KeywordBackend(chunk=300)  # several analysis chunks, stitched together, and several blocks of docs summed
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


def test_snapshot_restores_scores_without_recomputing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from toolscout.storage import SQLiteStore as Store

    tools = _tools(400)
    store = Store(tmp_path / "s.db")
    first = ToolIndex(Catalog(tools), snapshots=store)
    expected = [(h.tool.name, h.score) for h in first.search("send email user", limit=10, autocut=False).hits]
    assert first.backend("keyword").loaded_from == "build"  # type: ignore[attr-defined]
    again = ToolIndex(Catalog(tools), snapshots=store)
    assert again.backend("keyword").loaded_from == "snapshot"  # type: ignore[attr-defined]
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
    kw.sparse_from = 0
    assert kw.sparse
    calls: list[str] = []
    monkeypatch.setattr(kw, "scores", lambda *a, **k: calls.append("scores"))  # must not be used
    for (query, i), (docs, scores) in full.items():
        sparse_docs, sparse_scores = keyword_input(kw, query, masks[i])
        assert sparse_docs.tolist() == docs.tolist() and sparse_scores.tolist() == scores.tolist()
    assert calls == []


def _reference(kw: KeywordBackend, query: str, limit: int, mask: np.ndarray | None) -> tuple[list, int]:
    """Every doc scored, without any pruning: the query's term columns summed in float64 in
    query-term order, sorted by (score descending, doc ascending)."""
    m = kw._scores
    scores = np.zeros(len(kw), np.float64)
    for term in kw.terms(query):
        i = kw._vocab.get(term)
        if i is None:
            continue
        column = np.zeros(len(kw), np.float64)
        column[m.indices[m.indptr[i] : m.indptr[i + 1]]] = m.data[m.indptr[i] : m.indptr[i + 1]]
        scores = scores + column
    if mask is not None:
        scores[~mask] = 0.0
    docs = sorted(np.flatnonzero(scores > 0).tolist(), key=lambda d: (-scores[d], d))
    return [(d, float(scores[d])) for d in docs[:limit]], int(np.count_nonzero(scores > 0))


def _tied_tools(n: int, rng: np.random.Generator) -> list[Tool]:
    """Tools drawn from few words (Zipf-like), most of them copies of a few dozen texts, so
    many docs tie exactly and near-ties (same words, other lengths) are common."""
    vocab = [f"w{i}" for i in range(60)]
    p = 1.0 / np.arange(1, len(vocab) + 1) ** 0.8
    p /= p.sum()
    texts = [" ".join(rng.choice(vocab, size=int(rng.integers(1, 12)), p=p)) for _ in range(40)]
    out = []
    for i in range(n):
        if rng.random() < 0.7:
            text = texts[int(rng.integers(len(texts)))]
        else:
            text = " ".join(rng.choice(vocab, size=int(rng.integers(1, 12)), p=p))
        out.append(Tool(f"t{i}", text))
    return out


@pytest.mark.parametrize("seed", [1, 2, 3, 4, 5])
def test_rank_never_drops_a_top_doc(seed: int) -> None:
    """A randomized comparison with exhaustive scoring, on catalogs full of exact ties:
    long and short queries, masks from none to almost nothing, limits from 1 to more than
    match. A small sample makes the bound from a sample of a term's docs run too."""
    rng = np.random.default_rng(seed)
    tools = _tied_tools(2500, rng)
    kw = KeywordBackend(sparse_from=0, sample=16)
    kw.rebuild(tools)
    vocab = [f"w{i}" for i in range(60)] + ["nowhere"]
    for _ in range(40):
        query = " ".join(rng.choice(vocab, size=int(rng.integers(1, 30))))
        mask = None if rng.random() < 0.4 else rng.random(len(tools)) < rng.choice([0.9, 0.3, 0.01, 0.001])
        limit = int(rng.choice([1, 2, 5, 10, 50, 3000]))
        hits, total = kw.rank(query, limit, mask)
        assert ([(h.doc, h.score) for h in hits], total) == _reference(kw, query, limit, mask), query
        assert not kw._acc.any()  # the scratch is all zeros again


def test_rank_resets_the_scratch_either_way() -> None:
    """Few postings are put back to zero one by one, many by clearing the whole vector;
    a search while another holds the scratch uses its own: the same answers."""
    tools = _tools(3000)
    kw = KeywordBackend(sparse_from=0)
    kw.rebuild(tools)
    for query in QUERIES:  # "data" alone touches few docs; the long query most
        expected = _dense(kw, query, 5, None)
        hits, total = kw.rank(query, 5, None)
        assert ([(h.doc, h.score, h.why) for h in hits], total) == expected
        assert not kw._acc.any()
        with kw._acc_lock:  # held by "another search"
            hits, total = kw.rank(query, 5, None)
        assert ([(h.doc, h.score, h.why) for h in hits], total) == expected


def test_float32_rounding_cannot_hide_the_best_doc() -> None:
    """The accumulator sums in float32, which can order two docs the other way round from
    their exact (float64) scores: doc 1's three scores sum to 1 + 0.75 ulp exactly but to
    1.0 in float32, doc 0's two to 1 + 0.6 ulp exactly but 1 + 1 ulp in float32. Doc 1 is
    the best; the pool's rounding margin must keep it."""
    ulp = 2.0**-23
    kw = KeywordBackend(analyzer=str.split, sparse_from=0)
    kw._vocab = {"a": 0, "b": 1, "c": 2}
    kw._tools = [Tool("zero"), Tool("one")]
    kw._n = 2
    # term a: both docs 1.0; term b: doc 0 0.6 ulp, doc 1 0.375 ulp; term c: doc 1 0.375 ulp
    data = np.array([1.0, 1.0, 0.6 * ulp, 0.375 * ulp, 0.375 * ulp], np.float32)
    kw._scores = sparse.Sparse(data, np.array([0, 1, 0, 1, 1], np.int32), np.array([0, 2, 4, 5], np.int64))
    kw._idf = np.ones(3, np.float32)
    kw._index_terms()
    exact = [float(np.float64(data[0]) + np.float64(data[2])), float(np.float64(data[1]) + np.float64(data[3]) + np.float64(data[4]))]
    assert exact[1] > exact[0]
    assert np.float32(np.float32(data[1]) + data[3]) + data[4] < np.float32(data[0]) + data[2]  # float32 disagrees
    hits, total = kw.rank("a b c", 1)
    assert [(h.doc, h.score) for h in hits] == [(1, exact[1])]
    assert total == 2


@pytest.mark.parametrize("sparse_from", [0, 10**9])
def test_few_allowed_docs_rank_as_scoring_every_doc(sparse_from: int) -> None:
    """A mask of a few docs (a server's siblings) scores each on its own instead of reading
    the postings: the same docs, scores, order, explanations and counts, on both paths."""
    tools = _tools(3000)
    kw = KeywordBackend(sparse_from=sparse_from)
    kw.rebuild(tools)
    rng = np.random.default_rng(11)
    masks = []
    for size in (1, 2, 7, 25):
        mask = np.zeros(len(tools), bool)
        mask[rng.choice(len(tools), size, replace=False)] = True
        masks.append(mask)
    masks[-1][:5] = True  # duplicates of one text: ties broken by doc order
    for query in QUERIES:
        for mask in masks:
            for limit in (0, 1, 3, 50):
                hits, total = kw.rank(query, limit, mask)
                assert ([(h.doc, h.score, h.why) for h in hits], total) == _dense(kw, query, limit, mask)


def test_small_catalog_hits_name_the_terms_they_hold() -> None:
    """Below the large-catalog threshold the hits' terms come from one pass over the query's
    postings: the same explanations as looking each hit up in each term's postings."""
    tools = _tools(2000, seed=5)
    kw = KeywordBackend()
    kw.rebuild(tools)
    assert not kw.sparse
    half = np.random.default_rng(2).random(len(tools)) < 0.5
    for query in QUERIES:
        for mask in (None, half):
            hits, total = kw.rank(query, 10, mask)
            assert ([(h.doc, h.score, h.why) for h in hits], total) == _dense(kw, query, 10, mask)
            assert all(h.why.startswith("keyword: ") for h in hits)


def test_uncounted_search_gives_the_same_hits() -> None:
    """``count=False`` (a sub-intent's search, whose total nobody reads) skips the pass that
    counts a large catalog's matches: the same hits, and their number as the total."""
    tools = _tools(3000)
    kw = KeywordBackend(sparse_from=0)
    kw.rebuild(tools)
    half = np.random.default_rng(4).random(len(tools)) < 0.5
    for query in QUERIES:
        for mask in (None, half):
            for limit in (0, 1, 10):
                counted, total = kw.rank(query, limit, mask)
                hits, number = kw.rank(query, limit, mask, count=False)
                assert [(h.doc, h.score, h.why) for h in hits] == [(h.doc, h.score, h.why) for h in counted]
                assert number == len(hits) <= total


def test_multi_step_request_counts_the_whole_request() -> None:
    """A request of several steps reports the whole request's matches, not a sub-search's."""
    tools = _tools(3000)
    index = ToolIndex(Catalog(tools), keyword=KeywordBackend(sparse_from=0))
    query = "send an email to the user, then get the weather forecast for a city"
    found = index.search(query, limit=5, mode="keyword")
    assert len(found.intents) == 2
    assert found.total_matches == index.backend("keyword").rank(query, 0)[1] > len(found.hits)
