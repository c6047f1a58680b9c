"""complete@k and coverage@k (issue 32): a multi-tool request is served only when every
tool it needs is shown; eval reports them beside R@k and nDCG, single- and multi-tool apart."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from toolscout.cli import app
from toolscout.eval.compare import compare
from toolscout.eval.dataset import EvalQuery
from toolscout.eval.metrics import complete_at, coverage_at, group_positions
from toolscout.eval.runner import evaluate, score_ranking


def test_complete_and_coverage_count_every_needed_tool() -> None:
    groups = [frozenset({"a", "a_copy"}), frozenset({"b"}), frozenset({"c"})]
    pos = group_positions(["a_copy", "x", "b", "a", "y", "c"], groups)
    assert complete_at(pos, 3, 6) == 1.0 and complete_at(pos, 3, 5) == 0.0
    assert coverage_at(pos, 3, 5) == 2 / 3 and coverage_at(pos, 3, 1) == 1 / 3
    assert complete_at([], 0, 10) == 0.0 and coverage_at([], 0, 10) == 0.0


def test_the_report_splits_single_and_multi_tool_requests() -> None:
    queries = [
        EvalQuery("1", "one", ("a",)),
        EvalQuery("2", "two", ("a", "b")),
        EvalQuery("3", "three", ("a", "b", "c")),
    ]
    ranked = {"one": ["a"], "two": ["a", "x", "b"], "three": ["c", "a"]}
    report = evaluate(queries, lambda text: ranked[text])
    assert report.sizes["single"].complete10 == 100.0 and report.sizes["single"].queries == 1
    multi = report.sizes["multi"]
    assert multi.queries == 2 and multi.complete10 == 50.0
    assert abs(multi.coverage10 - 100 * (1 + 2 / 3) / 2) < 1e-9
    data = report.to_dict()
    for key in ("R@1", "R@5", "nDCG@10", "Hit@1", "complete@10", "coverage@10"):
        assert key in data  # the old keys stay, the new ones are added
    assert data["by_size"]["multi"]["complete@10"] == 50.0


def test_compare_pairs_complete_and_coverage() -> None:
    q = EvalQuery("2", "two", ("a", "b"))
    before = evaluate([q], lambda _t: ["a", "x"])
    after = evaluate([q], lambda _t: ["a", "b"])
    row = compare(before, after, "before", "after").rows[0]
    assert row["complete@10 A"] == 0.0 and row["complete@10 B"] == 100.0
    assert row["coverage@10 A"] == 50.0 and row["coverage@10 B"] == 100.0
    assert score_ranking(q, ["b", "a"]).needed == 2


def test_cli_shows_the_new_columns_and_rows(tmp_path: Path) -> None:
    tools = [
        {"name": "get_weather", "description": "Current weather for a city.", "input_schema": {}},
        {"name": "send_message", "description": "Send a chat message to a channel.", "input_schema": {}},
    ]
    queries = [
        {"id": "1", "query": "weather in Paris", "relevant": ["get_weather"]},
        {"id": "2", "query": "get the weather in Paris and send a message to the team", "relevant": ["get_weather", "send_message"]},
    ]
    (tmp_path / "tools.jsonl").write_text("\n".join(json.dumps(t) for t in tools))
    (tmp_path / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries))
    out = CliRunner().invoke(app, ["eval", str(tmp_path), "--type", "keyword", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    assert data["by_size"]["multi"]["complete@10"] == 100.0 and data["complete@10"] == 100.0
    grid = CliRunner().invoke(app, ["eval", str(tmp_path), "--type", "keyword", "--csv"])
    assert "complete10" in grid.output and "multi-tool" in grid.output
