"""Ranking signals in one finishing step: a signal changes every mode's ranking, is applied
once per search, and its share of a score is recorded; the index works through the
``Backend`` seam alone."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from _fake_embed import FakeEmbedder
from toolscout.catalog import Catalog
from toolscout.model import Tool
from toolscout.search.base import Backend, Hit, Snapshots
from toolscout.search.hybrid import enable_hybrid
from toolscout.search.index import ToolIndex
from toolscout.search.keyword_snapshot import SNAPSHOT_NS
from toolscout.search.ranking import Ranking, Ranks
from toolscout.search.signals import (
    ExactName,
    FuzzyName,
    Intent,
    SignalContext,
    Usage,
    default_signals,
)
from toolscout.storage import open_store

MODES = ("keyword", "regex", "semantic", "hybrid")
QUERY = {"keyword": "email", "regex": "email", "semantic": "email", "hybrid": "email"}


def _catalog() -> Catalog:
    return Catalog([
        Tool("send_email", "Send an email message to a recipient."),
        Tool("read_email", "Read the emails in an inbox."),
        Tool("archive_email", "Archive an old email thread."),
        Tool("get_weather", "Current weather for a city."),
    ])


class Lift:
    """A test signal: adds ``amount`` full matches to one tool's score, and counts its calls."""

    name = "lift"

    def __init__(self, tool: str, amount: float = 5.0) -> None:
        self.tool = tool
        self.amount = amount
        self.calls = 0

    def apply(self, ranked: Ranking, query: str, context: SignalContext) -> Ranking:
        self.calls += 1
        doc = next(i for i, t in enumerate(context.tools) if t.name == self.tool)

        def adjust(scores: np.ndarray, bound: float) -> np.ndarray:
            scores[doc] += self.amount * bound
            return scores

        def explain(docs: Sequence[int], scores: Sequence[float] | None, bound: float) -> dict[int, float]:
            return {d: self.amount for d in docs if d == doc}

        ranked.rescore(self.name, adjust, explain)
        return ranked


def _index(*extra: Lift) -> ToolIndex:
    index = ToolIndex(_catalog())
    index.signals.extend(extra)
    enable_hybrid(index, FakeEmbedder(dim=256), query_encoder=None)
    return index


def _names(index: ToolIndex, mode: str) -> list[str]:
    return [h.tool.name for h in index.search(QUERY[mode], limit=5, mode=mode, autocut=False).hits]


@pytest.mark.parametrize("mode", MODES)
def test_a_signal_changes_the_ranking_in_every_mode_and_runs_once(mode: str) -> None:
    plain = _names(_index(), mode)
    last = next(n for n in reversed(plain) if n.endswith("_email"))
    assert plain[0] != last  # the tool the signal lifts is not first without it
    lift = Lift(last)
    index = _index(lift)
    assert _names(index, mode)[0] == last
    assert lift.calls == 1  # one finishing step per search, whatever the mode


@pytest.mark.parametrize("mode", ["keyword", "regex"])
def test_a_signals_share_is_in_the_explanation_and_the_parts_add_up(mode: str) -> None:
    index = _index(Lift("archive_email"))
    out = index.search(QUERY[mode], limit=5, mode=mode, autocut=False)
    top = out.hits[0]
    assert top.tool.name == "archive_email" and top.why.endswith(" + lift")
    assert dict(top.parts)["lift"] > 0 and top.parts[0][0] == mode
    for hit in out.hits:
        assert sum(v for _, v in hit.parts) == pytest.approx(hit.score)


@pytest.mark.parametrize("mode", MODES)
def test_every_mode_explains_its_scores(mode: str) -> None:
    out = _index().search(QUERY[mode], limit=5, mode=mode, autocut=False)
    assert out.hits
    for hit in out.hits:
        assert hit.parts and sum(v for _, v in hit.parts) == pytest.approx(hit.score)


@pytest.mark.parametrize("mode", MODES)
def test_the_exact_name_signal_pins_in_every_mode(mode: str) -> None:
    out = _index().search("`get_weather`", limit=3, mode=mode, autocut=False)
    assert out.hits[0].tool.name == "get_weather" and out.hits[0].why == "exact name"
    assert out.hits[0].parts == (("exact name", out.hits[0].score),)


def test_without_signals_names_are_only_ranked() -> None:
    index = ToolIndex(_catalog(), signals=[])
    assert index.search("read emails", limit=3).hits[0].why != "exact name"
    assert index.search("read_email", limit=3).hits[0].why.startswith("keyword")


def test_the_default_signals_and_their_order() -> None:
    index = ToolIndex(_catalog())
    assert [s.name for s in index.signals] == ["intent", "usage", "name", "exact name"]
    assert [type(s) for s in default_signals()] == [Intent, Usage, FuzzyName, ExactName]
    usage = next(s for s in index.signals if isinstance(s, Usage))
    learner = object()
    index.usage = learner  # type: ignore[assignment]  # what the gateway sets
    assert usage.learner is learner and index.usage is learner


class Minimal:
    """A third-party backend implementing only the seam: substring match on names."""

    name = "keyword"

    def __init__(self) -> None:
        self.names: list[str] = []

    def rebuild(self, tools: Sequence[Tool]) -> None:
        self.names = [t.name for t in tools]

    def search(self, query: str, *, limit: int, mask: np.ndarray | None = None) -> list[Hit]:
        words = query.lower().split()
        hits = [
            Hit(i, float(sum(w in n for w in words)), "minimal")
            for i, n in enumerate(self.names)
            if (mask is None or mask[i]) and any(w in n for w in words)
        ]
        return sorted(hits, key=lambda h: -h.score)[:limit]


def test_the_index_works_with_a_backend_that_only_implements_the_seam(tmp_path) -> None:  # type: ignore[no-untyped-def]
    minimal = Minimal()
    assert isinstance(minimal, Backend) and not isinstance(minimal, Ranks | Snapshots)
    store = open_store(tmp_path / "s.db")
    index = ToolIndex(_catalog(), keyword=minimal, snapshots=store)
    out = index.search("weather", limit=5)
    assert [h.tool.name for h in out.hits] == ["get_weather"] and out.hits[0].why == "minimal"
    assert out.total_matches == 1 and out.hits[0].relevance == 1.0
    assert index.search("`read_email`", limit=5).hits[0].why == "exact name"  # signals still pin
    assert not store.keys(SNAPSHOT_NS)  # no snapshot capability: none saved
    assert index.explain("weather", "get_weather") == []
    assert index.search("email", limit=5, category="nope").hits == []  # filters still apply
    store.close()
