"""What a tool call can produce besides a plain value: an upstream server's own result.

A handler that forwards a call to another server speaking the same protocol (an MCP
upstream) returns an :class:`UpstreamResult`: the gateway passes it through untouched (only
its ``tool`` becomes the catalog name the caller used), and a surface that speaks that
protocol recognises it by its type and sends the server's result on as is, content blocks,
structured content and ``isError`` included.

What travels *into* a call (the caller, its approver, its progress reporter) is the
:class:`~toolscout.context.CallContext`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .context import ProgressFn
from .model import CallResult

__all__ = ["ProgressFn", "UpstreamResult"]


@dataclass(slots=True)
class UpstreamResult(CallResult):
    """An MCP ``CallToolResult`` from an upstream server; ``value`` keeps it verbatim."""

    @classmethod
    def of(cls, tool: str, raw: Mapping[str, Any]) -> UpstreamResult:
        content = raw.get("content")
        return cls(
            tool=tool,
            ok=not bool(raw.get("isError")),
            content=list(content) if isinstance(content, list) else [],
            structured=raw.get("structuredContent"),
            value=dict(raw),
        )

    @property
    def raw(self) -> dict[str, Any]:
        """The server's result as it sent it (what an MCP surface answers with)."""
        return self.value  # type: ignore[no-any-return]
