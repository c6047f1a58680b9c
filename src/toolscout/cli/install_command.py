"""``toolscout install CLIENT``: add the gateway to an MCP client's config file.

Each client keeps its servers in its own JSON file, under its own key: Claude Desktop and
Cursor under ``mcpServers`` in a per-user file, Claude Code under ``mcpServers`` in the
project's ``.mcp.json``, VS Code under ``servers`` in the workspace's ``.vscode/mcp.json``.
The file is merged, never replaced: other servers and keys stay as they were, the previous
file is kept beside it as ``<file>.bak``, and ``--dry-run`` prints the change as a diff.
"""

from __future__ import annotations

import difflib
import json
import logging
import os
import shutil
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from ..errors import ToolscoutError
from . import _logs, app
from ._exits import USAGE, choice, fail, warn

CLIENTS = ("claude-desktop", "cursor", "vscode", "claude-code")


def config_file(client: str, *, platform: str = sys.platform, home: Path | None = None, cwd: Path | None = None) -> Path:
    """Where ``client`` reads its MCP servers on ``platform``."""
    home = home or Path.home()
    cwd = cwd or Path.cwd()
    if client == "claude-desktop":
        if platform == "darwin":
            return home / "Library" / "Application Support" / "Claude" / "claude_desktop_config.json"
        if platform.startswith("win"):
            return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming") / "Claude" / "claude_desktop_config.json"
        return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config") / "Claude" / "claude_desktop_config.json"
    if client == "cursor":
        return home / ".cursor" / "mcp.json"
    if client == "vscode":
        return cwd / ".vscode" / "mcp.json"
    return cwd / ".mcp.json"  # claude-code, project scope (checked in beside the code)


def _entry(client: str, config: Path) -> dict[str, Any]:
    """How the client starts the gateway: this install's ``toolscout`` by absolute path
    (the client may not have this venv on its PATH), the config by absolute path."""
    me = Path(sys.argv[0])
    command = str(me.absolute()) if me.name == "toolscout" else shutil.which("toolscout") or "toolscout"
    entry: dict[str, Any] = {"command": command, "args": ["serve", "--config", str(config.resolve())]}
    return {"type": "stdio", **entry} if client == "vscode" else entry


@app.command()
def install(
    client: Annotated[
        str, typer.Argument(metavar="CLIENT", callback=choice(CLIENTS), help="claude-desktop, cursor, vscode or claude-code.")
    ],
    config: Annotated[Path, typer.Option("--config", "-c", help="The gateway's mcpServers JSON file.")],
    name: Annotated[str, typer.Option("--name", help="The server's name in the client.")] = "toolscout",
    file: Annotated[
        Path | None, typer.Option("--file", help="Write this config file instead of the client's usual one.")
    ] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print the change as a diff; write nothing.")] = False,
    check: Annotated[
        bool,
        typer.Option(
            "--check/--no-check",
            help="First start the gateway as the client would (config, sources, each upstream's tool list) "
            "and write nothing if it cannot start.",
        ),
    ] = True,
    timeout: Annotated[float, typer.Option(min=0.1, help="Seconds the check waits for the upstreams.")] = 30.0,
) -> None:
    """Add the gateway to an MCP client's config (Claude Desktop, Cursor, VS Code, Claude
    Code): merged into the file, the old file kept as <file>.bak; restart the client.
    The gateway is started once first: a config that cannot start is not written (the
    client would only show "connection closed"), an upstream that fails is named.

    \b
    Example: toolscout install claude-desktop --config servers.json --dry-run
    """
    if not config.is_file():
        raise fail("config_error", f"no gateway config at {str(config)!r}", "Pass the mcpServers JSON file that 'toolscout serve --config' reads.")
    target = file or config_file(client)
    key = "servers" if client == "vscode" else "mcpServers"
    before = target.read_text(encoding="utf-8") if target.is_file() else ""
    try:
        data = json.loads(before) if before.strip() else {}
    except json.JSONDecodeError as exc:
        raise fail("config_error", f"{target} is not valid JSON ({exc}); left unchanged", "Fix or move the file, then run install again.") from None
    if not isinstance(data, dict) or not isinstance(data.get(key, {}), dict):
        raise fail("config_error", f"{target}: expected a JSON object with an object under {key!r}; left unchanged")
    if check:  # after the client's file is known good: the cheap refusals come first
        _check_it_starts(config, timeout)
    entry = _entry(client, config)
    if data.get(key, {}).get(name) == entry:
        typer.echo(f"{name} is already in {target}; nothing to change.")
        return
    data.setdefault(key, {})[name] = entry
    after = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    if dry_run:
        diff = difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"{target} (now)", f"{target} (after install)")
        typer.echo("".join(diff), nl=False)
        return
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if before:
            shutil.copy2(target, target.with_name(target.name + ".bak"))
        target.write_text(after, encoding="utf-8")
    except OSError as exc:
        raise fail("config_error", f"cannot write {target}: {exc.strerror or exc}", status=USAGE) from None
    kept = f" (the previous file is {target.name}.bak)" if before else ""
    typer.echo(f"added {name} to {target}{kept}; restart {client} to load it.")


def _check_it_starts(config: Path, timeout: float) -> None:
    """Start the gateway ``config`` describes as ``serve`` would, list every upstream's
    tools once, and close it: a config that cannot start stops the install (exit 2, with
    the reason serve would give); an upstream that fails is a warning (it may be down only
    for now; the gateway retries it)."""
    import asyncio
    import contextlib

    from ..server.app import (
        build_aggregator,  # serve's own stack (upstreams, ~150 ms): only when installing
    )
    from ..server.serve_config import ServeConfig  # serve's config models, likewise

    _logs.setup(logging.ERROR)  # upstream retries are summed up below, not logged one by one
    try:
        aggregator = build_aggregator(ServeConfig.load(config, {"no_cache": True}))
    except ToolscoutError as exc:
        raise fail(
            exc.code,
            f"not installed: the gateway would not start: {exc.message}",
            (exc.hint + " " if exc.hint else "") + "Fix it and run install again (--no-check skips this check).",
        ) from None

    async def probe() -> dict[str, Any]:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(aggregator.start(lazy=False), timeout)
        rows = aggregator.status()
        await aggregator.aclose()
        return rows

    rows = asyncio.run(probe())
    tools = sum(int(row.get("tools") or 0) for row in rows.values())
    failed = {name: row for name, row in rows.items() if row.get("state") not in ("ready", "disabled")}
    for name, row in failed.items():
        why = row.get("last_error") or row.get("state")
        warn(f"{name} did not list its tools ({why}); the gateway starts without them and retries it.")
    typer.echo(
        f"checked: the gateway starts ({len(rows) - len(failed)} of {len(rows)} sources ready, {tools} tools), "
        "with this shell's environment; the client starts it with its own.",
        err=True,
    )
