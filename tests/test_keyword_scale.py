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

WORDS = (
    "get send list create delete update weather email stock price city forecast user file "
    "search translate image video music calendar event invoice payment order ticket data"
).split()


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
