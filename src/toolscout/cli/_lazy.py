"""The root command group, loading each command's module on first use.

``toolscout --help`` and a shell completion of a command name need only each command's name
and one line about it; importing every command module for that pulls in the catalog, the
search index, numpy and pydantic (over a second). So the root group knows the commands from
the table below, prints help and completes names from it, and imports a command's module only
when that command runs, or its own help or options are asked for. tests/cli/test_lazy_cli.py
checks the table against the commands themselves, so it cannot drift.
"""

from __future__ import annotations

import importlib
from typing import Any

import typer

from ._exits import OneStyleGroup

__all__ = ["COMMANDS", "LazyRootGroup", "load_all"]

COMMANDS: dict[str, tuple[str, str]] = {
    'audit': (
        'audit_command',
        'Scan tool names, descriptions and schemas for poisoning (instructions aimed at the model, requests for secrets, orders about other tools, hidden characters, encoded payloads) and for tools that changed since they were first seen (rug pulls).',
    ),
    'search': (
        'catalog_commands',
        "Search a catalog the way a model's find_tools call would. The table shows each tool by the name the model sees in --format and what its definition costs in tokens; the time is the search's alone (loading and indexing the catalog is reported apart).",
    ),
    'show': (
        'catalog_commands',
        "Print one tool: its full record, or its definition in a host API's format.",
    ),
    'tokens': (
        'catalog_commands',
        'Count tool-definition tokens (o200k, offline): static list vs find_tools vs searches.',
    ),
    'serve': (
        'serve_command',
        'Serve find_tools and call_tool over MCP in front of every server in the config.',
    ),
    'servers': (
        'serve_command',
        "Show each upstream server's state, tool count and last error.",
    ),
    'audit-log': (
        'serve_command',
        'Show the audit record of calls a gateway served (serve --audit, or --auth).',
    ),
    'call': (
        'call_command',
        'Call one tool with JSON arguments, validated against its schema first; print its structured result as JSON, else its text. A call that needs approval (a dangerous tool) is asked for on a terminal, refused elsewhere unless --yes.',
    ),
    'console': (
        'console_command',
        "Open the web console on a catalog: its tools, a search playground showing why each tool ranked, every format's schema, token savings, recent calls. Serves /ui and the /v1 HTTP API on 127.0.0.1 only; stop it with Ctrl-C.",
    ),
    'demo': (
        'demo_command',
        'Search and call a bundled catalog of ~300 tools the way a model would; offline, no key.',
    ),
    'eval': (
        'eval_command',
        'Rank every query of DIR and print R@1, R@5, nDCG@10, Hit@1 (percent) and latency. Output paths, extras and search types are checked before the first query runs.',
    ),
    'install': (
        'install_command',
        'Add the gateway to an MCP client\'s config (Claude Desktop, Cursor, VS Code, Claude Code): merged into the file, the old file kept as <file>.bak; restart the client. The gateway is started once first: a config that cannot start is not written (the client would only show "connection closed"), an upstream that fails is named.',
    ),
    'catalog': (
        'catalog_commands',
        'The shared catalog in PostgreSQL (what every replica serves).',
    ),
    'vault': (
        'vault_command',
        "Keys of the vault that holds each user's upstream credentials (docs/credentials.md).",
    ),
}
"""Command name -> (its module in toolscout.cli, the first paragraph of its help), in the
order ``--help`` lists them."""


def _typer_app() -> Any:
    return importlib.import_module("toolscout.cli").app


def load_all() -> None:
    """Import every command module (the reference docs and tests walk every command)."""
    for module in dict.fromkeys(module for module, _ in COMMANDS.values()):
        importlib.import_module(f"toolscout.cli.{module}")


class LazyRootGroup(OneStyleGroup):
    """``toolscout``: commands from :data:`COMMANDS`, each module imported when needed."""

    _peeking = False

    def list_commands(self, ctx: Any) -> list[str]:
        return [*COMMANDS, *(name for name in super().list_commands(ctx) if name not in COMMANDS)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            if self._peeking:  # help and name completion need one line, not the module
                return typer.core.TyperCommand(cmd_name, help=COMMANDS[cmd_name][1])
            self._load(cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        self._peeking = True
        try:
            super().format_commands(ctx, formatter)
        finally:
            self._peeking = False

    def shell_complete(self, ctx: Any, incomplete: str) -> Any:
        self._peeking = True
        try:
            return super().shell_complete(ctx, incomplete)
        finally:
            self._peeking = False

    def _load(self, name: str) -> None:
        """Import the module that registers ``name`` and add what it registered (typer
        built this group before the module existed)."""
        importlib.import_module(f"toolscout.cli.{COMMANDS[name][0]}")
        app = _typer_app()
        short = app.pretty_exceptions_short
        for info in app.registered_commands:
            found = info.name or typer.main.get_command_name(info.callback.__name__)
            if found not in self.commands:
                command = typer.main.get_command_from_info(info, pretty_exceptions_short=short, rich_markup_mode=app.rich_markup_mode)
                self.add_command(command, found)
        for group in app.registered_groups:
            if group.name not in self.commands:
                built = typer.main.get_group_from_info(
                    group, pretty_exceptions_short=short, suggest_commands=True, rich_markup_mode=app.rich_markup_mode
                )
                self.add_command(built, group.name)
