"""The MCP gateway: front many upstream MCP servers with one ``find_tools`` server.

``config`` reads the ``mcpServers`` file, ``upstream`` keeps one connection per server,
``aggregator`` turns their tools into catalog entries, ``cache`` persists tool lists,
``server`` serves the meta-tools over stdio or streamable HTTP, ``capabilities`` describes
the gateway as an MCP resource.
"""

from __future__ import annotations

from .config import GatewayConfig, ServerConfig, load_config, parse_config

__all__ = ["GatewayConfig", "ServerConfig", "load_config", "parse_config"]
