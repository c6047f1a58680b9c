"""Why a stdio gateway did not start, told to the MCP client that started it.

A client (Claude Desktop, Cursor) starts ``toolscout serve`` itself and talks over its pipes;
a gateway that exits on a bad config shows there only as "Connection closed", the reason
left on a stderr nobody reads. So before exiting, the gateway answers each request the
client sends (``initialize`` first) with a JSON-RPC error carrying the reason and the hint,
until the client hangs up: the client shows the reason where the user looks.
"""

from __future__ import annotations

import json
import select
import sys
from collections.abc import Iterator
from typing import IO, Any

__all__ = ["STARTUP_FAILED", "refuse_over_stdio"]

STARTUP_FAILED = -32002
"""The JSON-RPC error code (server-defined range): the gateway could not start."""


def refuse_over_stdio(
    code: str,
    message: str,
    hint: str = "",
    *,
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
    patience: float = 10.0,
) -> int:
    """Answer every request on ``stdin`` with the start-up error until end of input, or
    until ``patience`` seconds pass with nothing to read (a pipe nobody writes to must not
    keep a failed gateway alive); the number of requests answered (notifications get no
    answer, as JSON-RPC says)."""
    src, dst = stdin or sys.stdin, stdout or sys.stdout
    text = f"toolscout did not start: {code}: {message}" + (f" {hint}" if hint else "")
    answered = 0
    for line in _lines(src, patience):
        try:
            request: Any = json.loads(line)
        except ValueError:
            continue
        if not isinstance(request, dict) or "id" not in request or "method" not in request:
            continue
        error = {"code": STARTUP_FAILED, "message": text, "data": {"code": code, "message": message, "hint": hint}}
        dst.write(json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}) + "\n")
        dst.flush()
        answered += 1
    return answered


def _lines(src: IO[str], patience: float) -> Iterator[str]:
    """``src``'s lines while one arrives within ``patience`` seconds of the last."""
    try:
        fd = src.fileno()
    except (AttributeError, OSError, ValueError):  # an in-memory stream: it ends by itself
        yield from src
        return
    while True:
        ready, _, _ = select.select([fd], [], [], patience)
        if not ready:
            return
        line = src.readline()
        if not line:
            return
        yield line
