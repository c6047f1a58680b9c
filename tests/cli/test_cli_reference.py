"""docs/cli.md is generated from the commands' own help; every command has help and an
example that parses, shown whole in an 80-column terminal."""

from __future__ import annotations

import re
import shlex

import pytest
import typer

from _paths import DOCS
from toolscout.cli import app
from toolscout.cli.reference import commands, help_text, render

DOC = DOCS / "cli.md"
COMMANDS = list(commands())


def test_docs_cli_md_is_up_to_date() -> None:
    assert DOC.read_text(encoding="utf-8") == render(), (
        "docs/cli.md is stale: run `python -m toolscout.cli.reference > docs/cli.md`"
    )


def test_the_reference_covers_every_command() -> None:
    paths = [path for path, _ in COMMANDS]
    for name in ("search", "show", "tokens", "demo", "eval", "serve", "servers", "audit", "catalog sync"):
        assert f"toolscout {name}" in paths
    page = DOC.read_text(encoding="utf-8")
    assert "## Exit codes" in page and all(f"## `{path}`" in page for path in paths)


def _leaf(tokens: list[str]) -> tuple[object, list[str]]:
    """Follow an example's words from the root to the command they name."""
    cmd, rest = typer.main.get_command(app), tokens[1:]
    while hasattr(cmd, "list_commands") and rest:
        sub = cmd.get_command(typer.Context(cmd), rest[0])
        if sub is None:
            break
        cmd, rest = sub, rest[1:]
    return cmd, rest


@pytest.mark.parametrize(("path", "cmd"), COMMANDS, ids=[p for p, _ in COMMANDS])
def test_every_command_has_help_with_an_example_that_parses(path: str, cmd: object) -> None:
    text = help_text(path, cmd, width=80)
    summary = (getattr(cmd, "help", None) or "").strip()
    assert summary, f"{path} has no help"
    examples = re.findall(r"^\s*Example: (toolscout\b.*)$", f"{summary}\n{getattr(cmd, 'epilog', None) or ''}", re.M)
    assert examples, f"{path} help has no 'Example: toolscout ...' line"
    shown = {line.strip() for line in text.splitlines()}
    for example in examples:
        assert f"Example: {example}" in shown, f"{path}: the example is wrapped at 80 columns (start its paragraph with \\b)"
        assert example == path or example.startswith(path + " "), f"{path}: example is for another command"
        leaf, args = _leaf(shlex.split(example))
        assert not hasattr(leaf, "list_commands"), f"{path}: example names no command: {example}"
        leaf.make_context(example, args)  # raises a usage error for unknown options or bad values


@pytest.mark.parametrize(("path", "cmd"), COMMANDS, ids=[p for p, _ in COMMANDS])
def test_every_help_ends_with_its_example(path: str, cmd: object) -> None:
    """README says every --help ends with an example: after the options, not mid-help."""
    last = help_text(path, cmd, width=80).rstrip().splitlines()[-1].strip()
    assert last.startswith(f"Example: {path}"), f"{path} --help ends with {last!r}"
