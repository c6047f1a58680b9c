"""The last finds and calls a served gateway answered, for the web console's activity view.

Recorded at the surfaces (the MCP server's dispatch, the HTTP API's handlers) in a bounded
ring held in memory: an operator asking "what just failed?" needs the last few hundred
answers, not a log store, and nothing here may grow with traffic. A record keeps what an
operator needs to follow up (when, where, which tool or query, the error code and message)
and never arguments or results, which may carry the callers' data.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import asdict, dataclass
from typing import Any

from ..meta_tools import FIND_NAMES

__all__ = ["CallRecord", "RecentCalls"]

MAX_TEXT = 300
"""Characters of a query, name or error message kept per record."""


@dataclass(frozen=True, slots=True)
class CallRecord:
    at: float  # epoch seconds
    surface: str  # "mcp" or "http"
    op: str  # "find", "call" or "use"
    name: str  # the tool called, or the query searched
    ok: bool
    ms: float
    code: str | None = None
    message: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class RecentCalls:
    """A ring of the last ``capacity`` answers, newest last; counts survive the ring."""

    def __init__(self, capacity: int = 200) -> None:
        self.capacity = capacity
        self._ring: deque[CallRecord] = deque(maxlen=capacity)
        self._lock = threading.Lock()
        self.total = 0
        self.errors = 0

    def record(
        self,
        surface: str,
        op: str,
        name: str,
        *,
        ok: bool,
        ms: float,
        code: str | None = None,
        message: str | None = None,
    ) -> None:
        entry = CallRecord(time.time(), surface, op, _cut(name), ok, round(ms, 3), code, _cut(message) if message else None)
        with self._lock:
            self._ring.append(entry)
            self.total += 1
            self.errors += not ok

    def snapshot(self, limit: int | None = None) -> list[dict[str, Any]]:
        """The records, newest first (at most ``limit``)."""
        with self._lock:
            items = list(self._ring)
        items.reverse()
        return [r.to_dict() for r in items[:limit]]

    def watch_mcp(self, server: Any) -> None:
        """Record every tool call the MCP server dispatches, from the dict it answers with.
        Wraps whatever ``_dispatch`` is now (metrics' timing included); watching again
        replaces this ring's own wrapper instead of stacking a second one."""
        dispatch = server._dispatch
        if getattr(dispatch, "_recent_inner", None) is not None:
            dispatch = dispatch._recent_inner

        async def recorded(ctx: Any, params: Any) -> dict[str, Any]:
            started = time.perf_counter()
            name = str(getattr(params, "name", ""))
            arguments = getattr(params, "arguments", None)
            op = "find" if name in FIND_NAMES else "use" if name == "use_tool" else "call"
            target = name
            if isinstance(arguments, dict):
                key = {"find": "query", "use": "query"}.get(op, "name" if name == "call_tool" else "")
                if isinstance(arguments.get(key), str):
                    target = arguments[key]
            try:
                raw = await dispatch(ctx, params)
            except Exception as exc:
                ms = (time.perf_counter() - started) * 1000
                self.record("mcp", op, target, ok=False, ms=ms, code="internal_error", message=type(exc).__name__)
                raise
            code, message = _mcp_error(op, raw)
            self.record("mcp", op, target, ok=code is None, ms=(time.perf_counter() - started) * 1000, code=code, message=message)
            return raw

        recorded._recent_inner = dispatch  # type: ignore[attr-defined]
        server._dispatch = recorded


def _mcp_error(op: str, raw: Any) -> tuple[str | None, str | None]:
    """(code, message) of an MCP tool result's error: toolscout's own, else ``tool_error``
    with the result's text for an upstream result flagged ``isError``."""
    if not isinstance(raw, dict):
        return None, None
    structured = raw.get("structuredContent")
    error = structured.get("error") if isinstance(structured, dict) else None
    if isinstance(error, dict) and isinstance(error.get("code"), str):
        message = error.get("message")
        return error["code"], message if isinstance(message, str) else None
    if raw.get("isError") and op != "find":
        blocks = raw.get("content")
        texts = [b.get("text") for b in blocks if isinstance(b, dict)] if isinstance(blocks, list) else []
        return "tool_error", " ".join(t for t in texts if isinstance(t, str)) or None
    return None, None


def _cut(text: str) -> str:
    text = str(text)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"
