"""docs/credentials.md: its config is valid as written and its samples run."""

from __future__ import annotations

import json
import re
from pathlib import Path

from _paths import DOCS
from toolscout.context import CallContext, Principal
from toolscout.server.serve_config import ServeConfig
from toolscout.sources.mcp.config import parse_config

TEXT = (DOCS / "credentials.md").read_text(encoding="utf-8")


def test_the_config_example_parses_with_every_mode(tmp_path: Path) -> None:
    block = re.search(r"```json\n(\{\n  \"mcpServers\".*?)```", TEXT, re.S)
    assert block is not None
    data = json.loads(block.group(1))
    config = parse_config(data)
    modes = {name: s.credentials for name, s in config.servers.items()}
    assert modes == {"github": "per-user", "jira": "per-user", "notes": "per-user", "warehouse": "token-exchange"}
    assert config.servers["notes"].token_env == "NOTES_API_KEY"
    path = tmp_path / "servers.json"
    path.write_text(block.group(1))
    settings = ServeConfig.load(path, {"transport": "http"})  # the serve settings of the same file
    assert settings.vault_keys == "/etc/toolscout/vault.keys"
    assert settings.callback_url == "https://gateway.example/oauth/callback"


def test_the_library_sample_runs() -> None:
    block = re.search(r"## From the library.*?```python\n(.*?)```", TEXT, re.S)
    assert block is not None
    scope: dict = {}
    exec(compile(block.group(1), "credentials.md", "exec"), scope)
    ctx = scope["ctx"]
    assert isinstance(ctx, CallContext) and ctx.principal == Principal("alice", "user")
    assert ctx.credentials["jira"] == "alice-jira-token"
