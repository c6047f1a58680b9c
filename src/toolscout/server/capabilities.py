"""The gateway's capabilities as an MCP resource (RFC 0001): what a client can rely on.

Counts, backends, protocol features and limits; never commands' arguments, environment,
headers or URLs' credentials (each server shows only its transport, state and tool count).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..access.approval import DEFAULT_KINDS

if TYPE_CHECKING:
    from ..gateway import Gateway
    from ..sources.mcp.aggregator import Aggregator

__all__ = ["CAPABILITIES_URI", "capabilities"]

CAPABILITIES_URI = "toolscout://capabilities"


def capabilities(
    gateway: Gateway, aggregator: Aggregator | None, *, max_revealed: int, version: str
) -> dict[str, Any]:
    servers: dict[str, Any] = {}
    if aggregator is not None:
        for name, row in aggregator.status().items():
            servers[name] = {
                "transport": row.get("transport"),
                "state": row.get("state"),
                "tools": row.get("tools", 0),
                "from_cache": row.get("from_cache", False),
            }
    return {
        "name": "toolscout",
        "version": version,
        "tools": len(gateway.catalog),
        "categories": len(gateway.catalog.categories()),
        "servers": servers,
        "server_count": len(servers),
        "search": {"backends": gateway.index.modes(), "formats": ["mcp"]},
        "meta_tools": ["find_tools", "call_tool"],
        "protocol": {
            "versions": ["2025-11-25", "2026-07-28"],
            "stateful_reveal": "2025-11-25 sessions: found tools join tools/list, "
            "announced with notifications/tools/list_changed",
            "stateless": "2026-07-28: find_tools then call_tool",
        },
        "approvals": _approvals(gateway),
        "limits": {
            "max_limit": gateway.max_limit,
            "default_limit": gateway.default_limit,
            "max_revealed_per_session": max_revealed,
        },
    }


def _approvals(gateway: Gateway) -> dict[str, Any]:
    """Which permission kinds ask before running, so a client knows to expect elicitation."""
    kinds = gateway.approve_kinds
    if kinds is None:
        kinds = DEFAULT_KINDS if gateway.approve is not None else frozenset()
    return {
        "kinds": sorted(kinds),
        "asks": "the client's user through elicitation; without it, approval_required",
    }
