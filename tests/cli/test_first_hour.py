"""A newcomer's first hour with the CLI (issue 34): each command through a real subprocess,
stdout a pipe and ``COLUMNS=80``, as ``| cat`` or a script runs it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

TOOLSCOUT = str(Path(sys.executable).with_name("toolscout"))
ENV = {**os.environ, "COLUMNS": "80", "NO_COLOR": "1"}
BOX = set("┃│┏┓┗┛━─╭╮╰╯┡┩")


def cli(*args: str, env: dict[str, str] = ENV, **kwargs) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [TOOLSCOUT, *args], capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL, env=env, **kwargs
    )


def test_the_demo_piped_is_plain_whole_and_suggests_a_step_not_just_run() -> None:
    run = cli("demo")
    assert run.returncode == 0, run.stderr
    assert not BOX & set(run.stdout), "a boxed table in piped output"
    lines = run.stdout.splitlines()
    assert any("weather_get_forecast" in line and '"location": "Lisbon"' in line for line in lines)  # never cut to 80
    assert lines[-1].startswith("Done in") and "toolscout demo --query" in lines[-1]
    mine = cli("demo", "--query", "open a jira ticket", "--format", "anthropic")
    assert mine.returncode == 0 and "toolscout demo --query" not in mine.stdout.splitlines()[-1]  # not what was just run


def test_one_token_count_for_the_demo_catalog_in_every_command() -> None:
    shown = json.loads(cli("demo", "--json").stdout)["tokens"]
    counted = json.loads(cli("tokens", "demo", "--json").stdout)
    assert shown["meta_only"] == counted["meta_only"] and shown["static"] == counted["static"]
    assert shown["after_searches"] == counted["after_searches"] and counted["tools"] == 316


def test_an_unknown_format_name_is_refused_with_the_listed_ones() -> None:
    for name in ("claude", "bogus"):
        refused = cli("search", "demo", "send an email", "--format", name)
        assert refused.returncode == 2 and "use one of: openai, openai-responses, anthropic" in refused.stderr
    assert "'claude' is 'anthropic'" in cli("tokens", "demo", "--format", "claude").stderr


def test_errors_give_a_person_something_to_type_not_a_models_instruction() -> None:
    unknown = cli("call", "demo", "slak_send_mesage")
    assert unknown.returncode == 1 and "Did you mean: slack_send_message" in unknown.stderr
    assert "toolscout search CATALOG" in unknown.stderr and "Call find_tools" not in unknown.stderr
    approval = cli("call", "demo", "jira_delete_issue", "--args", '{"issue_key": "OPS-1"}')
    assert approval.returncode == 1 and "approval_denied" in approval.stderr
    assert "--yes" in approval.stderr and "Ask the user" not in approval.stderr


def test_a_plain_text_file_given_as_a_catalog_is_told_it_is_not_one(tmp_path: Path) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("remember the milk\n")
    refused = cli("search", str(notes), "milk")
    assert refused.returncode == 2 and "is not a catalog" in refused.stderr and "delete it" not in refused.stderr
    assert notes.read_text() == "remember the milk\n"


async def test_serve_demo_serves_a_catalog_without_a_config_file() -> None:
    params = StdioServerParameters(command=TOOLSCOUT, args=["serve", "demo"], env=ENV)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        found = await session.call_tool("find_tools", {"query": "send an email", "limit": 3})
        names = [r["tool_name"] for r in found.structured_content["tool_references"]]
        assert "gmail_send_email" in names


def test_serve_without_a_catalog_or_config_says_what_to_give() -> None:
    refused = cli("serve")
    assert refused.returncode == 2 and "toolscout serve demo" in refused.stderr


def _write(tmp_path: Path, config: dict) -> Path:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps(config))
    return path


def test_install_checks_that_the_gateway_starts_before_writing(tmp_path: Path) -> None:
    target = tmp_path / "client.json"
    spec = tmp_path / "pets.json"
    spec.write_text(json.dumps({"openapi": "3.0.0", "info": {"title": "p", "version": "1"}, "paths": {}}))
    broken = _write(tmp_path, {"mcpServers": {}, "openapi": {"pets": {
        "spec": str(spec), "baseUrl": "http://127.0.0.1:9", "headers": {"Authorization": "Bearer ${TS_UNSET_FOR_INSTALL}"}}}})
    refused = cli("install", "cursor", "--config", str(broken), "--file", str(target))
    assert refused.returncode == 2 and not target.exists()
    assert "not installed: the gateway would not start" in refused.stderr and "TS_UNSET_FOR_INSTALL" in refused.stderr
    skipped = cli("install", "cursor", "--config", str(broken), "--file", str(target), "--no-check")
    assert skipped.returncode == 0 and target.exists()  # the user's call


def test_install_names_an_upstream_that_does_not_list_and_still_installs(tmp_path: Path) -> None:
    target = tmp_path / "client.json"
    config = _write(tmp_path, {"mcpServers": {"gone": {"command": str(tmp_path / "no-such-server")}}})
    done = cli("install", "cursor", "--config", str(config), "--file", str(target), "--timeout", "20")
    assert done.returncode == 0, done.stderr
    assert "warning: gone did not list its tools" in done.stderr and "0 of 1 sources ready" in done.stderr
    assert json.loads(target.read_text())["mcpServers"]["toolscout"]["args"][0] == "serve"


def test_audit_log_piped_is_plain_with_whole_tool_names(tmp_path: Path) -> None:
    import time

    from toolscout.access.audit import AuditLog, AuditRecord
    from toolscout.storage import open_store

    long_name = "github_create_pull_request_review_comment_reply"
    with open_store(str(tmp_path / "gw.db")) as store:
        AuditLog(store).record(AuditRecord(time.time() - 5, "alice", "user", long_name, "allowed", "ok", 12.0))
    config = _write(tmp_path, {"mcpServers": {}, "store": str(tmp_path / "gw.db")})
    shown = cli("audit-log", "-c", str(config), "--since", "1h")
    assert shown.returncode == 0, shown.stderr
    assert not BOX & set(shown.stdout) and long_name in shown.stdout  # never github_cre…
    header, row = shown.stdout.splitlines()[:2]
    assert header.split()[:4] == ["time", "(UTC)", "principal", "tool"] and "alice" in row
