"""The ``toolscout`` command: a thin shell over the library (each command is one library call).

Each command group lives in its own module and registers itself on :data:`app`. Help is plain
text (``rich_markup_mode=None``): ours says ``toolscout[embed]`` and ``[top-10 names]``, which
rich markup would eat, and docs/cli.md is generated from it (``python -m toolscout.cli.reference``).
Exit codes follow one rule for every command (see ``_exits``).
"""

from __future__ import annotations

from typing import Annotated

import typer

from .. import __version__
from ._lazy import LazyRootGroup

app = typer.Typer(
    name="toolscout",
    cls=LazyRootGroup,  # each command's module loads when that command runs (fast --help, completion)
    no_args_is_help=True,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, PowerShell)
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"toolscout {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: Annotated[
        bool, typer.Option("--version", is_eager=True, callback=_print_version, help="Print the version and exit.")
    ] = False,
) -> None:
    """Tool retrieval for LLM agents: search, serve, evaluate and measure a tool catalog.

    \b
    Example: toolscout search demo "send an email"
    """


# Command modules register themselves on :data:`app` when imported; the root group imports
# each on first use (``_lazy.COMMANDS`` lists them).

__all__ = ["app"]
