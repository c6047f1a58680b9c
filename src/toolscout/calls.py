"""What travels with one tool call without changing every handler's signature.

A surface (the MCP server, an adapter) that can pass progress on sets :data:`progress` for
the duration of a call; a handler that can report progress (an MCP upstream forwarding its
server's ``notifications/progress``) reads it. Cancellation needs no variable: cancelling
the task that runs ``Gateway.acall`` cancels the handler, and an MCP upstream call
cancelled that way tells its server (``notifications/cancelled``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar

__all__ = ["ProgressFn", "progress"]

ProgressFn = Callable[[float, float | None, str | None], Awaitable[None]]
"""``(progress, total, message)``, as MCP's ``notifications/progress`` carries them."""

progress: ContextVar[ProgressFn | None] = ContextVar("toolscout_progress", default=None)
"""The reporter for the call running in this context, or ``None`` (nobody is listening)."""
