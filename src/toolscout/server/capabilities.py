"""The gateway's capabilities as an MCP resource (RFC 0001): what a client can rely on.

Counts, backends, protocol features and limits; never commands' arguments, environment,
headers or URLs' credentials (each server shows only its transport, state and tool count).
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any

from ..access.approval import DEFAULT_KINDS
from ..access.visibility import Allow
from ..model import Tool

if TYPE_CHECKING:
    from ..gateway import Gateway
    from ..sources.mcp.aggregator import Aggregator

__all__ = ["CAPABILITIES_URI", "capabilities", "server_version", "visible_servers"]

CAPABILITIES_URI = "toolscout://capabilities"


def server_version() -> str:
    """The installed toolscout's version, as every surface reports it (``"0"`` when run
    from sources that were never installed)."""
    try:
        return version("toolscout")
    except PackageNotFoundError:
        return "0"


def visible_servers(gateway: Gateway, aggregator: Aggregator | None, allow: Allow | None) -> dict[str, int] | None:
    """Upstream servers this caller may see, with the tools of each they may see; ``None``
    when nothing is hidden (no policy, no per-caller rule). A server is seen when the
    caller may see one of its tools or the server itself (its resources and prompts)."""
    if aggregator is None or (gateway.visibility.policy is None and allow is None):
        return None
    counts = {name: 0 for name in aggregator.upstreams}
    for tool in gateway.catalog:
        if tool.source_id in counts and gateway.visibility.admits(tool, allow):
            counts[tool.source_id] += 1
    return {
        name: n for name, n in counts.items()
        if n or gateway.visibility.admits(_server_entry(name), allow)
    }


def _server_entry(server: str) -> Tool:
    return Tool(server, f"the server {server}", source="mcp", source_id=server, category=server, meta={"server": server})


def capabilities(
    gateway: Gateway, aggregator: Aggregator | None, *, max_revealed: int, version: str, allow: Allow | None = None
) -> dict[str, Any]:
    """What a client can rely on, as the caller whose rule is ``allow`` may see it: a
    server or tool they may not see is neither named nor counted (hidden means absent)."""
    seen = visible_servers(gateway, aggregator, allow)
    servers: dict[str, Any] = {}
    if aggregator is not None:
        for name, row in aggregator.status().items():
            if seen is not None and name not in seen:
                continue
            servers[name] = {
                "transport": row.get("transport"),
                "state": row.get("state"),
                "tools": row.get("tools", 0) if seen is None else seen[name],
                "from_cache": row.get("from_cache", False),
            }
    hidden = seen is not None or gateway.visibility.policy is not None
    tools = sum(1 for t in gateway.catalog if gateway.visibility.admits(t, allow)) if hidden else len(gateway.catalog)
    return {
        "name": "toolscout",
        "version": version,
        "tools": tools,
        "categories": len(gateway.visible_categories(allow)),
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
