"""``toolscout --help`` and completing a command name import no command module (issue 34:
5.6 s for --help, 3.8 s per TAB on a busy machine); the root group's table of commands is
the commands' own help, so the fast path cannot drift from what the commands say."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import typer

from toolscout.cli import app
from toolscout.cli._lazy import (  # reach-in: the lazy command table is what this test checks
    COMMANDS,
    load_all,
)

HEAVY = ("toolscout.catalog", "toolscout.gateway", "toolscout.errors", "toolscout.cli.catalog_commands", "numpy", "rich")
"""What the fast path must not import (pydantic is not listed: typer itself may import it)."""


def _imported_after(*argv: str, env: dict[str, str] | None = None) -> tuple[str, list[str]]:
    """What running the CLI with ``argv`` printed, and which heavy modules it imported."""
    code = (
        "import sys, json, io, contextlib\n"
        "from toolscout.cli import app\n"
        f"sys.argv = ['toolscout', *{list(argv)!r}]\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    try:\n"
        "        app()\n"
        "    except SystemExit:\n"
        "        pass\n"
        f"print(json.dumps([out.getvalue(), [m for m in {HEAVY!r} if m in sys.modules]]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env={**os.environ, **(env or {})})
    printed, modules = json.loads(done.stdout.strip().splitlines()[-1])
    return printed, modules


def test_help_lists_every_command_without_importing_any() -> None:
    printed, modules = _imported_after("--help")
    assert modules == []
    for name in COMMANDS:
        assert f"\n  {name} " in printed


def test_completing_a_command_name_imports_no_command_module() -> None:
    printed, modules = _imported_after(env={"_TOOLSCOUT_COMPLETE": "complete_bash", "COMP_WORDS": "toolscout se", "COMP_CWORD": "1"})
    assert printed.split() == ["search", "serve", "servers"] and modules == []


def test_the_table_is_what_each_command_says_of_itself() -> None:
    load_all()
    group = typer.main.get_command(app)
    ctx = typer.Context(group)
    real = {name: group.get_command(ctx, name) for name in group.list_commands(ctx)}
    assert list(real) == list(COMMANDS)
    for name, command in real.items():
        first = (command.help or "").split("\n\n")[0].replace("\n", " ")
        assert COMMANDS[name][1] == first, f"{name}: update cli/_lazy.py COMMANDS to its help's first paragraph"
        module = command.callback.__module__ if command.callback else f"toolscout.cli.{COMMANDS[name][0]}"
        assert module == f"toolscout.cli.{COMMANDS[name][0]}"
