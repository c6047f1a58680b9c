"""MCP upstreams as a source: the ``mcpServers`` config, one connection per server, the
aggregator that turns their tools into catalog entries, and the persisted tool-list cache.

``config`` reads the file, ``upstream`` keeps one connection per server, ``aggregator``
feeds the catalog, ``cache`` keeps tool lists across restarts. The server that *serves*
the gateway over MCP is a surface and lives in :mod:`toolscout.server`.
"""

from __future__ import annotations

from .config import GatewayConfig, ServerConfig, load_config, parse_config

__all__ = ["GatewayConfig", "ServerConfig", "load_config", "parse_config"]
