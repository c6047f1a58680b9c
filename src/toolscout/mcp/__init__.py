"""The MCP gateway's public names, kept at their first home.

The upstream side (config, connections, aggregation, cache) is a source:
:mod:`toolscout.sources.mcp`. The server that exposes the gateway over MCP is a surface:
:mod:`toolscout.server.mcp`.
"""

from __future__ import annotations

from ..sources.mcp.config import GatewayConfig, ServerConfig, load_config, parse_config

__all__ = ["GatewayConfig", "ServerConfig", "load_config", "parse_config"]
