"""Evaluation metrics, data reading and the run_eval library call."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from _paths import FIXTURES
from toolscout.errors import DeclarationError
from toolscout.eval import EvalQuery, evaluate, load_queries, load_tools, run_eval
from toolscout.eval.metrics import group_positions, hit_at, ndcg_at, recall_at

FIXTURE = FIXTURES / "eval_small"


def test_metrics_by_hand() -> None:
    groups = (frozenset({"a"}), frozenset({"b"}))
    pos = group_positions(["x", "b", "y", "a"], groups)
    assert pos == [1, 3]
    assert recall_at(pos, 2, 1) == 0.0 and recall_at(pos, 2, 2) == 0.5 and recall_at(pos, 2, 5) == 1.0
    assert hit_at(pos, 1) == 0.0 and hit_at(pos, 2) == 1.0
    ideal = 1 + 1 / math.log2(3)
    assert ndcg_at(pos, 2, 10) == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / ideal)
    assert ndcg_at([0, 1], 2, 10) == pytest.approx(1.0)


def test_equivalent_copies_count_once() -> None:
    groups = (frozenset({"a", "a_copy"}), frozenset({"b"}))
    pos = group_positions(["a_copy", "a", "b"], groups)
    assert pos == [0, 2]  # the second copy is neither a hit nor a new group
    assert recall_at(pos, 2, 2) == 0.5
    q = EvalQuery("q", "text", ("a", "a_copy"), groups=(frozenset({"a", "a_copy"}),))
    run = evaluate([q], lambda _: ["a_copy", "zzz"]).overall
    assert (run.r1, run.hit1, run.ndcg10) == (100.0, 100.0, 100.0)


def test_without_groups_each_relevant_name_is_its_own_group() -> None:
    q = EvalQuery("q", "text", ("a", "b"))
    assert evaluate([q], lambda _: ["a", "b"]).overall.r1 == 50.0


def test_loaders_read_fixture_and_ignore_extra_fields() -> None:
    tools = load_tools(FIXTURE / "tools.jsonl")
    assert [t.name for t in tools][:2] == ["send_email", "send_email_v2"]
    assert tools[0].category == "mail"
    queries = load_queries(FIXTURE / "queries.jsonl")
    assert queries[1].relevant_groups() == (frozenset({"send_email", "send_email_v2"}),)
    assert queries[3].id == "4"


def test_malformed_line_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "queries.jsonl"
    bad.write_text('{"id": "q1", "query": "x", "relevant": ["a"]}\n{not json}\n')
    with pytest.raises(DeclarationError) as err:
        load_queries(bad)
    assert err.value.line == 2 and "queries.jsonl:2" in err.value.message
    bad.write_text('{"id": "q1", "query": "x", "relevant": "a"}\n')
    with pytest.raises(DeclarationError) as err:
        load_queries(bad)
    assert err.value.field == "relevant"
    tools = tmp_path / "tools.jsonl"
    tools.write_text('{"name": "a", "description": "x"}\n{"name": "a", "description": "y"}\n')
    with pytest.raises(DeclarationError) as err:
        load_tools(tools)
    assert err.value.line == 2 and "duplicate" in err.value.message


def test_run_eval_on_fixture() -> None:
    report = run_eval(FIXTURE, search_type="keyword")
    assert report.overall.queries == 4 and report.tools == 5
    runs = {r.id: r for r in report.runs}
    assert runs["q1"].ranked[0] == "get_weather" and runs["q1"].r1 == 1.0
    assert runs["q2"].r1 == 1.0  # either copy of send_email counts
    assert runs["4"].ranked == [] and runs["4"].ndcg10 == 0.0
    assert set(report.splits) == {"a", "b"} and report.splits["a"].queries == 2
    data = report.to_dict()
    assert {"R@1", "R@5", "nDCG@10", "Hit@1", "latency_p50_ms", "latency_p95_ms", "splits"} <= set(data)


def test_run_eval_split_and_max_queries() -> None:
    assert run_eval(FIXTURE, split="b").overall.queries == 2
    assert run_eval(FIXTURE, max_queries=1).overall.queries == 1
