"""Surfaces that expose a gateway to clients over a protocol: the MCP server (stdio and
streamable HTTP) and what it advertises about itself."""

__all__ = [  # the public modules (nothing is imported here: `toolscout serve` loads what it runs)
    "app",
    "console",
    "http_api",
    "mcp",
    "mcp_sessions",
    "metrics",
    "serve_config",
    "stdio",
]
