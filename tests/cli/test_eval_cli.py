"""The ``toolscout eval`` contract, through typer's CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from _paths import FIXTURES
from toolscout.cli import app

FIXTURE = FIXTURES / "eval_small"
runner = CliRunner()


def test_json_summary_is_one_object() -> None:
    result = runner.invoke(app, ["eval", str(FIXTURE), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["queries"] == 4
    for key in ("R@1", "R@5", "nDCG@10", "Hit@1", "latency_p50_ms", "latency_p95_ms"):
        assert isinstance(data[key], int | float)


def test_run_out_writes_one_line_per_query(tmp_path: Path) -> None:
    out = tmp_path / "runs.jsonl"
    result = runner.invoke(app, ["eval", str(FIXTURE), "--type", "keyword", "--run-out", str(out)])
    assert result.exit_code == 0, result.output
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [line["id"] for line in lines] == ["q1", "q2", "q3", "4"]
    assert lines[0]["ranked"][0] == "get_weather" and len(lines[0]["ranked"]) <= 10
    assert set(lines[0]) == {"id", "ranked"}
    assert "R@1" in result.stdout and "nDCG@10" in result.stdout


def test_split_and_max_queries_options() -> None:
    result = runner.invoke(app, ["eval", str(FIXTURE), "--json", "--split", "b", "--max-queries", "1"])
    assert json.loads(result.stdout)["queries"] == 1


def test_malformed_line_is_reported_with_its_number(tmp_path: Path) -> None:
    (tmp_path / "tools.jsonl").write_text((FIXTURE / "tools.jsonl").read_text())
    (tmp_path / "queries.jsonl").write_text('{"id": "q", "query": "x", "relevant": []}\n\n[1, 2]\n')
    result = runner.invoke(app, ["eval", str(tmp_path)])
    assert result.exit_code == 2
    assert "queries.jsonl:3" in result.output and "invalid_declaration" in result.output


def test_unknown_type_and_missing_dir_fail_cleanly(tmp_path: Path) -> None:
    assert runner.invoke(app, ["eval", str(FIXTURE), "--type", "bogus"]).exit_code == 2
    result = runner.invoke(app, ["eval", str(tmp_path / "nope")])
    assert result.exit_code == 2 and "not found" in result.output
