"""Where tools come from. Every source ends as ``(Tool, handler)`` pairs for the catalog.

Built in: Python functions (:mod:`.functions`), declaration files (:mod:`.declarations`),
definitions in any host API's dialect (:mod:`.definitions`), OpenAPI 3 documents
(:mod:`.openapi`); MCP upstreams in :mod:`.mcp`. A new kind of source only has
to yield pairs (or be a :class:`Source`) and is added with ``Catalog.add_source``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ..model import Tool

__all__ = ["Source", "ToolPair"]

ToolPair = tuple["Tool", Any]
"""A tool and the handler that runs it (``None`` when it is declared only)."""


@runtime_checkable
class Source(Protocol):
    """Anything that can produce tools with their handlers."""

    def load(self) -> Iterable[ToolPair]: ...
