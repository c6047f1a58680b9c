"""Rich consoles made on first use: importing rich costs ~50 ms that ``serve`` never needs
before its first answer (MCP clients time the gateway's start)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["err", "out"]


@cache
def out() -> Console:
    """The console for results (stdout)."""
    from rich.console import Console

    return Console()


@cache
def err() -> Console:
    """The console for errors and warnings (stderr)."""
    from rich.console import Console

    return Console(stderr=True)
