"""The ``toolscout`` command: a thin shell over the library (each command is one library call).

Each command group lives in its own module and registers itself on :data:`app`.
"""

from __future__ import annotations

import typer

app = typer.Typer(
    name="toolscout",
    help="Tool retrieval for LLM agents: search, serve, evaluate and measure a tool catalog.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

# Command modules register themselves on import (keep this list sorted).
from . import (  # noqa: E402,F401
    audit_command,
    catalog_commands,
    console_command,
    demo_command,
    eval_command,
    serve_command,
)

__all__ = ["app"]
