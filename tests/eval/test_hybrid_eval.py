"""eval --compare / --plot helpers: paired comparison and recall curves."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolscout.eval.compare import compare, plot_recall, recall_curve, sign_test
from toolscout.eval.dataset import EvalQuery
from toolscout.eval.runner import evaluate

QUERIES = [
    EvalQuery("q1", "send message", ("slack",), split="chat"),
    EvalQuery("q2", "weather", ("weather",), split="info"),
    EvalQuery("q3", "refund", ("refund",), split="pay"),
]
A = {"send message": ["x", "slack"], "weather": ["weather"], "refund": ["x", "y", "z"]}
B = {"send message": ["slack"], "weather": ["weather"], "refund": ["x", "refund"]}


def _reports():  # type: ignore[no-untyped-def]
    a = evaluate(QUERIES, lambda q: A[q])
    b = evaluate(QUERIES, lambda q: B[q])
    return a, b


def test_compare_pairs_queries_and_counts_wins_per_split() -> None:
    a, b = _reports()
    cmp = compare(a, b, "keyword", "hybrid")
    overall = cmp.rows[0]
    assert overall["split"] == "all" and overall["queries"] == 3
    assert (overall["b_wins"], overall["b_losses"]) == (2, 0)
    assert overall["delta"] > 0
    by_split = {r["split"]: r for r in cmp.rows}
    assert by_split["info"]["delta"] == 0 and by_split["info"]["b_wins"] == 0
    assert by_split["pay"]["keyword"] == 0.0


def test_sign_test() -> None:
    assert sign_test(0, 0) == 1.0
    assert sign_test(10, 0) == pytest.approx(2 / 1024)
    assert sign_test(5, 5) == 1.0


def test_recall_curve_and_png(tmp_path: Path) -> None:
    a, b = _reports()
    curve_a = recall_curve(a, QUERIES, ks=(1, 2, 3))
    assert curve_a == pytest.approx([100 / 3, 200 / 3, 200 / 3])
    pytest.importorskip("matplotlib")
    out = plot_recall({"A": curve_a, "B": recall_curve(b, QUERIES, ks=(1, 2, 3))}, tmp_path / "r.png", ks=(1, 2, 3))
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_cli_compare_and_plot(tmp_path: Path) -> None:
    import json

    from typer.testing import CliRunner

    from toolscout.cli import app

    tools = [
        {"name": "send_message", "description": "Send a chat message to a channel"},
        {"name": "get_weather", "description": "Weather forecast for a city"},
        {"name": "weather_alerts", "description": "Storm alerts"},
    ]
    queries = [
        {"id": "1", "query": "chat message", "relevant": ["send_message"], "split": "a"},
        {"id": "2", "query": "weather", "relevant": ["weather_alerts"], "split": "b"},
    ]
    (tmp_path / "tools.jsonl").write_text("\n".join(json.dumps(t) for t in tools))
    (tmp_path / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries))
    png = tmp_path / "curves.png"
    args = ["eval", str(tmp_path), "--type", "keyword", "--compare", "regex"]
    pytest.importorskip("matplotlib")
    result = CliRunner().invoke(app, [*args, "--plot", str(png)])
    assert result.exit_code == 0, result.output
    assert "keyword vs regex" in result.output and "wins" in result.output
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_cli_compare_with_a_saved_run_file(tmp_path: Path) -> None:
    """--compare also takes a run file written by --run-out (an earlier version's rankings)."""
    import json

    from typer.testing import CliRunner

    from toolscout.cli import app

    tools = [
        {"name": "send_message", "description": "Send a chat message to a channel"},
        {"name": "get_weather", "description": "Weather forecast for a city"},
    ]
    queries = [
        {"id": "1", "query": "chat message", "relevant": ["send_message"]},
        {"id": "2", "query": "weather forecast", "relevant": ["get_weather"]},
    ]
    (tmp_path / "tools.jsonl").write_text("\n".join(json.dumps(t) for t in tools))
    (tmp_path / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries))
    # the "old version" ranked query 1 wrong and never saw query 2
    old = tmp_path / "old-runs.jsonl"
    old.write_text(json.dumps({"id": "1", "ranked": ["get_weather", "send_message"]}) + "\n")
    result = CliRunner().invoke(app, ["eval", str(tmp_path), "--type", "keyword", "--compare", str(old)])
    assert result.exit_code == 0, result.output
    assert "keyword vs old-runs.jsonl" in result.output
    overall = [line for line in result.output.splitlines() if line.strip().startswith("│ all")][-1]
    assert "31.5" in overall and "-68.5" in overall  # the file: rank 2 on query 1 (63.1), nothing on 2
    # a file from another data set is a usage error with a hint, not a crash
    other = tmp_path / "other.jsonl"
    other.write_text(json.dumps({"id": "zz", "ranked": []}) + "\n")
    bad = CliRunner().invoke(app, ["eval", str(tmp_path), "--type", "keyword", "--compare", str(other)])
    assert bad.exit_code == 2 and "no query id" in bad.output
    missing = CliRunner().invoke(app, ["eval", str(tmp_path), "--type", "keyword", "--compare", str(tmp_path / "nope.jsonl")])
    assert missing.exit_code == 2
