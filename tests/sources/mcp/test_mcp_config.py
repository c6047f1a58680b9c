"""The mcpServers config: shapes users already have, and errors that name server and field."""

from __future__ import annotations

import json

import pytest

from toolscout.errors import ConfigError
from toolscout.sources.mcp.config import load_config, parse_config


def test_claude_desktop_shape_with_toolscout_options() -> None:
    cfg = parse_config(
        {
            "mcpServers": {
                "files": {"command": "npx", "args": ["-y", "server"], "env": {"TOKEN": "s3cret"}},
                "remote": {"url": "https://example.test/mcp", "headers": {"Authorization": "Bearer x"}},
                "off": {"command": "x", "enabled": False, "prefix": "o", "deny": ["rm*"]},
            },
            "otherClientKey": {"kept": True},
        }
    )
    assert cfg.servers["files"].transport == "stdio"
    assert cfg.servers["remote"].transport == "http"
    assert list(cfg.enabled()) == ["files", "remote"]
    assert cfg.prefix_for("files") == "files" and cfg.prefix_for("off") == "o"
    assert cfg.model_extra == {"otherClientKey": {"kept": True}}


def test_public_view_hides_secrets() -> None:
    cfg = parse_config(
        {
            "mcpServers": {
                "a": {"command": "/usr/bin/srv", "env": {"API_KEY": "s3cret"}},
                "b": {"url": "https://user:pw@h.test/mcp?key=s3cret", "headers": {"X-Key": "s3cret"}},
            }
        }
    )
    text = json.dumps([cfg.servers["a"].public(), cfg.servers["b"].public()])
    assert "s3cret" not in text and "pw" not in text
    assert "API_KEY" in text and "X-Key" in text


def test_config_hash_follows_what_changes_the_tool_list() -> None:
    base = {"command": "srv", "args": ["--a"]}
    h = parse_config({"mcpServers": {"s": base}}).servers["s"].config_hash()
    assert parse_config({"mcpServers": {"s": {**base, "timeout": 5}}}).servers["s"].config_hash() == h
    assert parse_config({"mcpServers": {"s": {**base, "args": ["--b"]}}}).servers["s"].config_hash() != h


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({}, "(entry)"),
        ({"command": "x", "url": "http://h/mcp"}, "(entry)"),
        ({"url": "ftp://h"}, "url"),
        ({"command": "x", "timeout": -1}, "timeout"),
        ({"command": "x", "args": "not-a-list"}, "args"),
        ({"command": "x", "defer": "sometimes"}, "defer"),
    ],
)
def test_bad_entry_names_server_and_field(entry: dict, field: str) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config({"mcpServers": {"broken": entry}})
    assert "server 'broken'" in str(info.value)
    assert f"field '{field}'" in str(info.value)
    assert info.value.info().details["server"] == "broken"


def test_allow_and_deny_globs() -> None:
    cfg = parse_config({"mcpServers": {"s": {"command": "x", "allow": ["get_*", "list_*"], "deny": ["*_secret"]}}})
    keeps = cfg.servers["s"].keeps
    assert keeps("get_user") and keeps("list_files")
    assert not keeps("delete_user") and not keeps("get_secret")


def test_load_config_reports_file_problems(tmp_path) -> None:
    bad = tmp_path / "servers.json"
    bad.write_text('{"mcpServers": {"a": ')
    with pytest.raises(ConfigError, match="not valid JSON"):
        load_config(bad)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.json")
    good = tmp_path / "ok.json"
    good.write_text(json.dumps({"mcpServers": {"a": {"command": "x"}}}))
    assert list(load_config(good).servers) == ["a"]


def test_redact_removes_every_configured_secret() -> None:
    server = parse_config(
        {
            "mcpServers": {
                "s": {
                    "url": "https://bob:hunter22@h.test/mcp?key=qwerty123&x=1",
                    "headers": {"Proxy-Authorization": "Bearer tok-abcdef-123"},
                }
            }
        }
    ).servers["s"]
    text = "401 for https://bob:hunter22@h.test/mcp?key=qwerty123 with Bearer tok-abcdef-123 (hunter22)"
    cleaned = server.redact(text)
    for secret in ("hunter22", "qwerty123", "tok-abcdef-123"):
        assert secret not in cleaned
    assert "h.test/mcp" in cleaned
