"""Rich consoles made on first use: importing rich costs ~50 ms that ``serve`` never needs
before its first answer (MCP clients time the gateway's start)."""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

__all__ = ["err", "out"]


def _unwrapped_when_piped(console: Console) -> Console:
    """Rich wraps at 80 columns when it cannot measure a terminal; piped output (``| grep``,
    scripts, CI logs) must keep each message on one line, so only a terminal gets wrapping."""
    console.soft_wrap = not console.is_terminal
    return console


@cache
def out() -> Console:
    """The console for results (stdout)."""
    from rich.console import Console

    return _unwrapped_when_piped(Console())


@cache
def err() -> Console:
    """The console for errors and warnings (stderr)."""
    from rich.console import Console

    return _unwrapped_when_piped(Console(stderr=True))
