"""Surfaces that expose a gateway to clients over a protocol: the MCP server (stdio and
streamable HTTP) and what it advertises about itself."""
