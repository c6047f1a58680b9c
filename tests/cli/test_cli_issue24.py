"""The CLI as a newcomer and an operator meet it (issue 24, items 4, 5 and 7), each through
a real subprocess with ``COLUMNS=80`` and stdout a pipe, as a script or ``| grep`` runs it."""

from __future__ import annotations

import csv
import io
import json
import os
import select
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from _paths import FIXTURES
from toolscout.sources.mcp.cache import ToolListCache

TOOLSCOUT = str(Path(sys.executable).with_name("toolscout"))
ENV = {**os.environ, "COLUMNS": "80", "NO_COLOR": "1"}


def cli(*args: str, timeout: float = 120, env: dict[str, str] = ENV, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TOOLSCOUT, *args], capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, env=env, **kwargs
    )


def _config(tmp_path: Path) -> Path:
    cfg = tmp_path / "servers.json"
    cfg.write_text(json.dumps({"mcpServers": {"up": {"command": sys.executable, "args": ["-c", "pass"]}}}))
    return cfg


# -- one error style ---------------------------------------------------------------------------


def test_a_missing_argument_is_a_usage_error_in_the_one_style() -> None:
    done = cli("search", "demo")
    assert done.returncode == 2 and done.stdout == ""
    first, hint = done.stderr.splitlines()
    assert first == "usage_error: Missing argument 'QUERY'."
    assert "toolscout search --help" in hint and "Error:" not in done.stderr


def test_every_missing_input_speaks_the_same_style(tmp_path: Path) -> None:
    for args in (("search", str(tmp_path / "none.yaml"), "x"), ("nope",), ("search", "demo", "x", "--limit", "0"), ("audit",)):
        done = cli(*args)
        assert done.returncode == 2, (args, done.stderr)
        code, _, message = done.stderr.splitlines()[0].partition(": ")
        assert code in ("usage_error", "config_error") and message, done.stderr


# -- serve -----------------------------------------------------------------------------------


def test_serve_on_a_busy_port_exits_2_with_one_line_and_no_banner(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = cli("serve", "-c", str(_config(tmp_path)), "--no-cache", "--transport", "http", "--port", str(port))
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [f"address_in_use: 127.0.0.1:{port} is in use by another process; pick another --port."]


def _read_until(stream, text: bytes, deadline_s: float = 60.0) -> bytes:
    """Read ``stream`` until ``text`` shows up or the deadline passes (a bound, not a delay)."""
    buf = b""
    end = time.monotonic() + deadline_s
    while text not in buf and time.monotonic() < end:
        ready, _, _ = select.select([stream], [], [], max(0.0, end - time.monotonic()))
        chunk = os.read(stream.fileno(), 65536) if ready else b""
        if not chunk:
            break
        buf += chunk
    return buf


INITIALIZE = {
    "jsonrpc": "2.0", "id": 1, "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}


@pytest.mark.parametrize("json_lines", [False, True])
def test_serve_logs_one_line_per_event(tmp_path: Path, json_lines: bool) -> None:
    """An upstream that dies at start: readable lines (or JSON lines), never Python's raw
    ``WARNING:toolscout.mcp:`` format."""
    args = [TOOLSCOUT, "serve", "-c", str(_config(tmp_path)), "--no-cache", *(["--log-json"] if json_lines else [])]
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=ENV)
    try:
        proc.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
        proc.stdin.flush()
        logged = _read_until(proc.stderr, b"cannot list tools").decode()
    finally:
        proc.terminate()
        proc.communicate(timeout=60)
    lines = [line for line in logged.splitlines() if line]
    assert lines and "WARNING:" not in logged and "Traceback" not in logged, logged
    if json_lines:
        events = [json.loads(line) for line in lines]
        assert {e["level"] for e in events} == {"warning"} and all(e["logger"] == "toolscout.mcp" for e in events)
        assert any("upstream up" in e["message"] for e in events)
    else:
        assert all(line.split()[1] == "warning" and line.split()[2] == "mcp:" for line in lines), logged


# -- output a pipe can read ---------------------------------------------------------------------


def test_piped_search_output_is_plain_and_unwrapped() -> None:
    """At 80 columns a boxed table split ``twilio_send_verification_code`` and every summary."""
    done = cli("search", "demo", "send an email")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert any(line.startswith("twilio_send_verification_code ") for line in lines), done.stdout
    assert "Send a one-time verification code by SMS, voice or email." in done.stdout
    assert not any(ch in done.stdout for ch in "│┃━─")


def test_search_reports_the_search_time_apart_from_the_build() -> None:
    title, *rest = cli("search", "demo", "send an email").stdout.splitlines()
    assert ", search " in title and " ms (keyword)" in title
    assert any(line.startswith("Catalog loaded and indexed in ") for line in rest)
    search_ms = float(title.split(", search ")[1].split(" ms")[0])
    assert search_ms < 200  # the index build (hundreds of ms) is no longer counted in


def test_search_nl_and_csv_print_one_row_each() -> None:
    rows = [json.loads(line) for line in cli("search", "demo", "send an email", "--nl", "-n", "3").stdout.splitlines()]
    assert len(rows) == 3 and set(rows[0]) == {"tool", "score", "tokens", "summary"}
    assert isinstance(rows[0]["score"], float) and rows[0]["tool"] == "sendgrid_send_email"
    table = list(csv.reader(io.StringIO(cli("search", "demo", "send an email", "--csv", "-n", "3").stdout)))
    assert table[0] == ["tool", "score", "tokens", "summary"] and len(table) == 4
    assert [r[0] for r in table[1:]] == [r["tool"] for r in rows]


def test_tokens_and_eval_tables_have_nl_and_csv() -> None:
    tokens = [json.loads(line) for line in cli("tokens", "demo", "--nl").stdout.splitlines()]
    assert [row["sent"] for row in tokens][1] == "meta-tools only"
    evaluated = cli("eval", str(FIXTURES / "eval_small"), "--csv").stdout.splitlines()
    assert evaluated[0] == "split,queries,R@1,R@5,nDCG@10,Hit@1,p50_ms,p95_ms,complete10,coverage10"
    assert evaluated[1].startswith("all,4,")


# -- call, and search over a gateway's cache ------------------------------------------------


def test_call_runs_a_tool_and_prints_its_result() -> None:
    done = cli("call", "demo", "weather_get_current", "--args", '{"location": "Paris"}')
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["location"] == "Paris"


def test_call_errors_are_structured_with_the_exit_rule() -> None:
    missing = cli("call", "demo", "weather_get_current", "--args", "{}")
    assert missing.returncode == 2 and missing.stderr.startswith("invalid_arguments: ") and missing.stdout == ""
    not_json = cli("call", "demo", "weather_get_current", "--args", "{x")
    assert not_json.returncode == 2 and not_json.stderr.startswith("invalid_arguments: --args is not JSON")
    unknown = cli("call", "demo", "no_such_tool")
    assert unknown.returncode == 1 and unknown.stderr.startswith("unknown_tool: ")


def test_call_of_a_dangerous_tool_needs_yes_off_a_terminal() -> None:
    args = ("call", "demo", "jira_delete_issue", "--args", '{"issue_key": "OPS-1"}')
    refused = cli(*args)
    assert refused.returncode == 1 and refused.stderr.startswith("approval_denied: ") and "--yes" in refused.stderr
    approved = cli(*args, "--yes")
    assert approved.returncode == 0 and json.loads(approved.stdout)["status"] == "deleted"


def test_search_finds_the_tools_of_a_gateways_cache(tmp_path: Path) -> None:
    """``serve --cache`` keeps each upstream's tools/list; searching the file used to say it
    holds no tools."""
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    cache = ToolListCache.open(tmp_path / "cache.db")
    cache.save("notes", "h1", [{"name": "append_note", "description": "Append a line to the notebook.", "inputSchema": schema}])
    cache.save("clock", "h2", [{"name": "now", "description": "The current time in a timezone.", "inputSchema": schema}])
    cache.store.close()
    done = cli("search", str(tmp_path / "cache.db"), "append a note", "--nl")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[0])["tool"] == "notes_append_note"


# -- install into a client, shell completion ------------------------------------------------


def test_install_merges_into_the_clients_file_with_a_backup(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    env = {"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    target = tmp_path / "xdg" / "Claude" / "claude_desktop_config.json"  # Linux's place for it
    target.parent.mkdir(parents=True)
    mine = {"mcpServers": {"other": {"command": "other-server"}}, "theme": "dark"}
    target.write_text(json.dumps(mine))
    preview = cli("install", "claude-desktop", "--config", str(cfg), "--dry-run", env={**ENV, **env})
    assert preview.returncode == 0 and '+    "toolscout": {' in preview.stdout and "serve" in preview.stdout
    assert json.loads(target.read_text()) == mine  # a dry run writes nothing
    done = cli("install", "claude-desktop", "--config", str(cfg), env={**ENV, **env})
    assert done.returncode == 0, done.stderr
    written = json.loads(target.read_text())
    assert written["theme"] == "dark" and written["mcpServers"]["other"] == {"command": "other-server"}
    assert written["mcpServers"]["toolscout"]["args"] == ["serve", "--config", str(cfg.resolve())]
    assert json.loads(target.with_name(target.name + ".bak").read_text()) == mine


def test_install_for_vscode_uses_its_key_and_refuses_a_broken_file(tmp_path: Path) -> None:
    cfg = _config(tmp_path)
    done = cli("install", "vscode", "--config", str(cfg), "--name", "scout", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    entry = json.loads((tmp_path / ".vscode" / "mcp.json").read_text())["servers"]["scout"]
    assert entry["type"] == "stdio" and entry["args"][0] == "serve"
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    refused = cli("install", "cursor", "--config", str(cfg), "--file", str(broken))
    assert refused.returncode == 2 and refused.stderr.startswith("config_error: ") and broken.read_text() == "{not json"


def test_shell_completion_is_offered() -> None:
    script = cli("--show-completion", "bash")
    assert script.returncode == 0 and "_toolscout_completion" in script.stdout
    words = cli(env={**ENV, "_TOOLSCOUT_COMPLETE": "complete_bash", "COMP_WORDS": "toolscout se", "COMP_CWORD": "1"})
    assert words.stdout.split() == ["search", "serve", "servers"]


def test_readmes_python_source_imports_from_the_config_folder_without_python_path(tmp_path: Path) -> None:
    """README's ``"python": {"units": {"module": "mytools.units:tools"}}`` failed unless the
    config also said ``"pythonPath": "."``; the call also runs through ``call --config``."""
    (tmp_path / "mytools").mkdir()
    (tmp_path / "mytools" / "__init__.py").write_text("")
    (tmp_path / "mytools" / "units.py").write_text(
        'def km_to_miles(km: float) -> float:\n    """Convert kilometres to miles."""\n    return round(km * 0.621371, 3)\n\n'
        "tools = [km_to_miles]\n"
    )
    cfg = tmp_path / "servers.json"
    cfg.write_text(json.dumps({"python": {"units": {"module": "mytools.units:tools", "timeout": 5}}}))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = cli("call", "--config", str(cfg), "--cache", str(tmp_path / "c.db"), "units_km_to_miles", "--args", '{"km": 10}', cwd=elsewhere)
    assert done.returncode == 0, done.stderr
    assert "6.214" in done.stdout
