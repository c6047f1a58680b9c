"""``toolscout demo``: runs offline and shows searches, calls and the token table."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from toolscout.cli import app
from toolscout.demo.runner import CALLS, SEARCHES, run_demo

runner = CliRunner()


@pytest.fixture(scope="module")
def scripted() -> dict:
    return run_demo(format="openai")


def test_demo_output_shows_search_call_and_savings() -> None:
    result = runner.invoke(app, ["demo"])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "316 tools" in out
    assert "github_create_pull_request" in out  # the exact-name search
    assert "42.1648128" in out  # units_convert really ran: 26.2 mi in km
    assert "invalid_arguments" in out and "/channel" in out
    assert "unknown_tool" in out and "did you mean" in out and "slack_send_message" in out
    assert "empty_query" in out
    assert "static list (316 tools)" in out and "meta-tools only" in out


def test_scripted_run_data(scripted: dict) -> None:
    assert len(scripted["searches"]) == len(SEARCHES)
    by_label = {s["label"]: s for s in scripted["searches"]}
    assert [r["tool_name"] for r in by_label["exact name"]["tool_references"]] == ["github_create_pull_request"]
    assert {r["tool_name"] for r in by_label["select:"]["tool_references"]} == {"math_evaluate", "units_convert"}
    assert by_label["empty query"]["error"]["code"] == "empty_query"
    assert by_label["empty query"]["tools"] == []
    assert by_label["Chinese"]["tool_references"], "a Chinese query finds the bilingual tools"
    calls = {c["label"]: c for c in scripted["calls"]}
    assert len(calls) == len(CALLS)
    assert calls["simulated service"]["ok"] and calls["simulated service"]["structured"]["simulated"] is True
    assert calls["real tool"]["structured"]["result"] == pytest.approx(42.1648128)
    assert calls["invalid arguments"]["error"]["code"] == "invalid_arguments"
    pointers = {e["pointer"] for e in calls["invalid arguments"]["error"]["details"]["errors"]}
    assert pointers == {"/channel", "/text"}
    assert "slack_send_message" in calls["unknown tool"]["error"]["details"]["suggestions"]
    assert calls["use_tool, clear"]["tool"] == "units_convert"
    assert calls["use_tool, clear"]["structured"]["result"] == pytest.approx(232.7777777778)
    assert calls["use_tool, ambiguous"]["error"]["code"] == "ambiguous"
    assert len(calls["use_tool, ambiguous"]["error"]["details"]["candidates"]) >= 2
    tokens = scripted["tokens"]
    assert tokens["tools"] == 316
    assert tokens["meta_only"] < tokens["after_searches"] < tokens["static"]


def test_json_output_is_machine_readable() -> None:
    result = runner.invoke(app, ["demo", "--json", "--format", "anthropic"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["format"] == "anthropic"
    found = next(s for s in data["searches"] if s["tools"])
    assert "input_schema" in found["tools"][0]  # rendered in the Anthropic dialect


def test_own_query_replaces_the_script() -> None:
    result = runner.invoke(app, ["demo", "--query", "github_merge_pull_request", "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert len(data["searches"]) == 1 and data["calls"] == []
    assert data["searches"][0]["tool_references"][0]["tool_name"] == "github_merge_pull_request"


def test_unknown_format_is_a_usage_error() -> None:
    result = runner.invoke(app, ["demo", "--format", "klingon"])
    assert result.exit_code == 2
    assert "use one of" in result.output


def test_demo_shows_usage_changing_a_ranking() -> None:
    from toolscout.demo.runner import run_demo

    learning = run_demo()["learning"]
    chosen = learning["chosen"]
    assert learning["before"].index(chosen) == 2  # third before any session chose it
    assert learning["after"][0] == chosen and learning["usage_boost"][chosen] > 0
    rest = [n for n in learning["after"][1:] if n in learning["before"]]
    # the rest keep their order (tools two sessions saw and passed over may sink out of the top 5)
    assert rest == [n for n in learning["before"] if n in rest] and len(rest) >= 2
    assert all(b <= 0 for n, b in learning["usage_boost"].items() if n != chosen)  # shown, not chosen: they sink
