import json

from typer.testing import CliRunner

from toolscout.cli import app

runner = CliRunner()


def test_search_json_returns_seed_shape_in_requested_format():
    out = runner.invoke(app, ["search", "demo", "send an email", "--json", "-n", "2", "-f", "openai"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.stdout)
    assert len(data["tools"]) <= 2 and data["tools"][0]["type"] == "function"
    assert data["tool_references"][0]["tool_name"] == data["tools"][0]["function"]["name"]


def test_search_error_exits_non_zero_with_structured_text():
    out = runner.invoke(app, ["search", "demo", "   "])
    assert out.exit_code == 2  # bad input: the exit-code rule of docs/cli.md
    assert "empty_query" in out.output
    nothing = runner.invoke(app, ["search", "demo", "zzzqqq xyzzy"])
    assert nothing.exit_code == 1 and "no_match" in nothing.output  # ran, found nothing


def test_search_a_jsonl_catalog(tmp_path):
    path = tmp_path / "tools.jsonl"
    rows = [
        {"name": "pdf_merge", "description": "Merge several PDF files into one.", "input_schema": {}, "source": "pdf"},
        {"name": "img_resize", "description": "Resize an image.", "input_schema": {}, "source": "img"},
    ]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    out = runner.invoke(app, ["search", str(tmp_path), "combine pdf documents", "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.stdout)["tool_references"][0]["tool_name"] == "pdf_merge"


def test_missing_catalog_is_a_usage_error():
    out = runner.invoke(app, ["search", "/nonexistent/tools.yaml", "x"])
    assert out.exit_code == 2


def test_show_renders_one_format_and_suggests_on_typos():
    out = runner.invoke(app, ["show", "demo", "slack_send_message", "--format", "anthropic"])
    assert out.exit_code == 0
    assert json.loads(out.stdout)["name"] == "slack_send_message"
    typo = runner.invoke(app, ["show", "demo", "slack_send_mesage"])
    assert typo.exit_code == 1 and "slack_send_message" in typo.output


def test_tokens_report_shows_savings():
    out = runner.invoke(app, ["tokens", "demo", "--json"])
    assert out.exit_code == 0
    report = json.loads(out.stdout)
    assert report["meta_only"] < report["after_searches"] < report["static"]
    assert report["meta_pct"] < 2.0


def test_show_says_when_an_openai_definition_is_not_strict(tmp_path):
    path = tmp_path / "tools.jsonl"
    row = {"name": "free_form", "description": "Takes anything.", "source": "x",
           "input_schema": {"type": "object", "properties": {"blob": {"type": "object"}}}}
    path.write_text(json.dumps(row))
    out = runner.invoke(app, ["show", str(tmp_path), "free_form", "--format", "openai"])
    assert out.exit_code == 0
    assert "not strict" in out.output
    quiet = runner.invoke(app, ["show", str(tmp_path), "free_form", "--format", "anthropic"])
    assert "not strict" not in quiet.output


def test_search_kinds_option(tmp_path):
    path = tmp_path / "d.yaml"
    path.write_text("team_wiki:\n  desc: How the team writes release notes.\n  kind: skill\nrelease_tool:\n  desc: Publish release notes.\n")
    tools_only = json.loads(runner.invoke(app, ["search", str(path), "release notes", "--json"]).stdout)
    assert [r["tool_name"] for r in tools_only["tool_references"]] == ["release_tool"]
    skills = runner.invoke(app, ["search", str(path), "release notes", "--kinds", "skill", "--json"])
    assert skills.exit_code == 0 and [r["tool_name"] for r in json.loads(skills.stdout)["tool_references"]] == ["team_wiki"]
    bad = runner.invoke(app, ["search", str(path), "release notes", "--kinds", "widget"])
    assert bad.exit_code == 2 and "unknown kind" in bad.output



def test_piped_output_is_not_wrapped_at_the_terminal_width(tmp_path):
    """Output that is not a terminal (a pipe, CI log, this runner) keeps each message on one
    line whatever COLUMNS says, so scripts can grep it."""
    path = tmp_path / "tools.jsonl"
    path.write_text(json.dumps({"name": "a", "description": "A.", "input_schema": {}}))
    out = runner.invoke(app, ["tokens", str(path)])
    assert out.exit_code == 0, out.output
    advice = [line for line in out.output.splitlines() if line.startswith("Tool search does not pay off")]
    assert advice and advice[0].endswith("tools).")  # the whole sentence (>80 columns) on one line
