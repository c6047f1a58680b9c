"""The audit record: one per call made through Gateway.execute, with the caller, the
decision and the outcome (never argument values unless asked, and then secrets masked),
kept in the store (SQLite, PostgreSQL) and read back by time, caller and tool."""

from __future__ import annotations

import asyncio
import io
import json
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolscout import Catalog, Tool
from toolscout.access.audit import AuditLog, AuditRecord, JsonLines, mask_secrets, parse_since
from toolscout.cli import app
from toolscout.context import CallContext, Principal
from toolscout.gateway import Gateway
from toolscout.request import CallRequest
from toolscout.storage import open_store

OBJ = {"type": "object", "properties": {"to": {"type": "string"}, "api_key": {"type": "string"}}}


def _gateway() -> Gateway:
    cat = Catalog()
    cat.add(Tool("send_email", "Send an email.", OBJ), handler=lambda a: "sent")
    cat.add(Tool("drop_table", "Drop a table.", {"type": "object"}, permission="dangerous"), handler=lambda a: "dropped")
    cat.add(Tool("crash", "Fail.", {"type": "object"}), handler=lambda a: 1 / 0)
    return Gateway(cat, learn=False)


def _run(gw: Gateway, name: str, ctx: CallContext, arguments: dict | None = None) -> None:
    asyncio.run(gw.execute(CallRequest.parse(name, arguments or {}), ctx))


def test_every_call_is_recorded_with_its_caller_and_decision() -> None:
    gw = _gateway()
    seen: list[AuditRecord] = []
    gw.recorders.append(seen.append)
    alice = CallContext(session_id="s1", principal=Principal("alice", "user"))
    bob = CallContext(principal=Principal("bob", "user"), allow=lambda t: t.name != "drop_table")
    _run(gw, "send_email", alice, {"to": "x@example.com", "api_key": "sk-123"})
    _run(gw, "drop_table", bob)
    _run(gw, "drop_table", alice.replace(approve=lambda tool, args: False))
    _run(gw, "drop_table", alice.replace(approve=lambda tool, args: True))
    _run(gw, "crash", alice)
    _run(gw, "no_such_tool", alice)
    rows = [(r.principal, r.tool, r.decision, r.outcome) for r in seen]
    assert rows == [
        ("alice", "send_email", "allowed", "ok"),
        ("bob", "drop_table", "denied", "denied"),
        ("alice", "drop_table", "refused", "approval_denied"),
        ("alice", "drop_table", "approved", "ok"),
        ("alice", "crash", "allowed", "tool_error"),
        ("alice", "no_such_tool", "refused", "unknown_tool"),
    ]
    assert seen[0].session == "s1" and seen[0].arguments is None and seen[0].replica


def test_arguments_only_when_asked_and_secrets_masked() -> None:
    gw = _gateway()
    gw.audit_arguments = True
    lines = io.StringIO()
    gw.recorders.append(JsonLines(lines))
    _run(gw, "send_email", CallContext(principal=Principal("alice", "user")), {"to": "x@example.com", "api_key": "sk-123"})
    record = json.loads(lines.getvalue())["audit"]
    assert record["arguments"] == {"to": "x@example.com", "api_key": "***"}
    assert "sk-123" not in lines.getvalue()
    assert mask_secrets({"nested": [{"password": "p", "ok": 1}], "Authorization": "Bearer x"}) == {
        "nested": [{"password": "***", "ok": 1}],
        "Authorization": "***",
    }


GH = "ghp_" + "R8xk2Lq9Zt4Wm7Pv3Nc6Hb1Jd5Fs0Ga2Ye8U"
SECRET_SHAPES = {  # value -> what must be gone from the record
    GH: GH,
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz": "github_pat_11ABC",
    "xoxb-123456789012-abcdefghijkl": "xoxb-1234",
    "AKIAIOSFODNN7EXAMPLE": "AKIAIOSFODNN7EXAMPLE",
    "sk_live_51Hx9LkQ2mZp8Vt4Rw": "sk_live_51Hx",
    "rk_test_51Hx9LkQ2mZp8Vt4Rw": "rk_test_51Hx",
    "sk-proj-Ab3Cd4Ef5Gh6Ij7Kl8Mn9Op0Qr": "Ab3Cd4Ef5Gh6",
    "sk-ant-api03-Zz9Yy8Xx7Ww6Vv5Uu4Tt3": "Zz9Yy8Xx7Ww6",
    "AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY": "9tSrke72Pou",
    "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl": "eyJzdWIiOiJhbGljZSJ9",
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----": "b3BlbnNzaC1rZXk",
    "curl -H 'Authorization: Bearer abc123.def456' https://api.example.com": "abc123.def456",
    "log in as bob, password: hunter22, then open the page": "hunter22",
    "my password is Tr0ub4dor and I forget it": "Tr0ub4dor",
    "postgres://app:s3cr3tpass@db.internal/app": "s3cr3tpass",
    "key Xq9fK2mP8vL4nR7tW1zY6bC3dH5jG0sA in a note": "Xq9fK2mP8vL4nR7tW1zY6bC3dH5jG0sA",
}
ORDINARY = [  # kept verbatim: words, ids, digests, hyphenated and CamelCase names
    "Reset the password for user bob and tell him the secret of good tokens",
    "550e8400-e29b-41d4-a716-446655440000",
    "commit 3f786850e387550fdab836ed7e6dc881de23001b on main",
    "sha256:79df250540d19884f3b0fbd8885dc348f2d130b4754e5d86a0545ff1c2b01ae5",
    "skip-ahead-of-the-queue-tomorrow-morning1",
    "getUserAccountSettingsByIdV2Handler2024",
    "com_example_really_long_module_name_for_testing_v2",
    "/usr/local/lib/python3.11/site-packages/toolscout/audit.py",
    "order 12345678 for Alice, sku ABC-1234-XYZ",
    "Bearer of bad news",
    "skills and task-management for the sk team",
]


def test_secrets_are_masked_by_their_shape_too_inside_free_text() -> None:
    gw = _gateway()
    gw.audit_arguments = True
    lines = io.StringIO()
    gw.recorders.append(JsonLines(lines))
    arguments = {f"a{i}": value for i, value in enumerate(SECRET_SHAPES)}
    arguments.update({"pw": "hunter2", "user_pwd": "hunter3", "clientSecret": "x1", "x_access_token": "x2"})
    arguments["nested"] = [{"note": f"use {GH} for the push"}]
    _run(gw, "send_email", CallContext(principal=Principal("alice", "user")), arguments)
    text = lines.getvalue()
    for value, leaked in SECRET_SHAPES.items():
        assert leaked not in text, value
    for leaked in ("hunter2", "hunter3", "x1", "x2"):
        assert f'"{leaked}"' not in text
    record = json.loads(text)["audit"]["arguments"]
    assert record["pw"] == record["user_pwd"] == "***"
    assert record["nested"] == [{"note": "use *** for the push"}]  # the rest of the text stays readable
    assert record["a12"] == "log in as bob, password: ***, then open the page"


def test_ordinary_words_and_ids_are_not_masked() -> None:
    for text in ORDINARY:
        assert mask_secrets(text) == text[:200]
    kept = {"pwm": "on", "spin": "fast", "description": "pw is short for password; the password is wrong"}
    assert mask_secrets(kept) == kept


def test_a_long_value_is_masked_before_it_is_cut() -> None:
    text = "x" * 190 + " " + GH
    assert GH[:9] not in mask_secrets(text)


def test_a_failing_recorder_never_fails_the_call() -> None:
    gw = _gateway()

    def broken(record: AuditRecord) -> None:
        raise RuntimeError("disk full")

    seen: list[AuditRecord] = []
    gw.recorders += [broken, seen.append]
    result = asyncio.run(gw.execute(CallRequest.parse("send_email", {}), CallContext()))
    assert result.ok and len(seen) == 1 and seen[0].principal == "anonymous"


def _query_checks(log: AuditLog) -> None:
    now = time.time()
    for i, (who, tool) in enumerate([("alice", "a"), ("bob", "b"), ("alice", "b")]):
        log.record(AuditRecord(now - 60 + i, who, "user", tool, "allowed", "ok", 1.0))
    log.record(AuditRecord(now - 7200, "alice", "user", "old", "allowed", "ok", 1.0))
    recent = log.query(since=parse_since("1h", now=now))
    assert [(r.principal, r.tool) for r in recent] == [("alice", "b"), ("bob", "b"), ("alice", "a")]  # newest first
    assert [r.tool for r in log.query(since=now - 3600, principal="alice")] == ["b", "a"]
    assert [r.principal for r in log.query(since=now - 3600, tool="b", limit=1)] == ["alice"]
    assert len(log.query()) == 4


def test_the_log_in_sqlite_and_the_cli(tmp_path: Path) -> None:
    path = tmp_path / "gw.db"
    with open_store(str(path)) as store:
        _query_checks(AuditLog(store))
    config = tmp_path / "gw.json"
    config.write_text(json.dumps({"mcpServers": {}, "store": str(path)}))
    runner = CliRunner()
    shown = runner.invoke(app, ["audit-log", "-c", str(config), "--since", "1h", "--principal", "alice", "--json"])
    assert shown.exit_code == 0, shown.output
    assert [json.loads(line)["tool"] for line in shown.output.splitlines()] == ["b", "a"]
    bad = runner.invoke(app, ["audit-log", "-c", str(config), "--since", "yesterday"])
    assert bad.exit_code == 2 and "expected a duration" in bad.output


@pytest.mark.usefixtures("postgres")
def test_the_log_in_postgresql(pg_dsn: str) -> None:
    with open_store(pg_dsn) as store:
        _query_checks(AuditLog(store))
