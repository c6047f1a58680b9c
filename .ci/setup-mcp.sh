#!/usr/bin/env bash
# Install the real upstream MCP servers and clients the MCP gateway's integration tests drive:
# server-everything and server-memory (npm), the MCP Inspector CLI and the conformance suite
# (npm, Node 20 versions), oidc-provider (npm: the authorization server the identity tests
# start), mcp-server-time (PyPI). Everything npm goes into .ci/node
# (gitignored); tests find the binaries there and skip cleanly when they are absent.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(dirname "$here")"
node_dir="$here/node"
py="${PYTHON:-$root/.venv/bin/python}"

if command -v npm >/dev/null 2>&1; then
  mkdir -p "$node_dir"
  [ -f "$node_dir/package.json" ] || echo '{"name": "toolscout-ci-mcp", "private": true}' > "$node_dir/package.json"
  npm install --prefix "$node_dir" --no-audit --no-fund --loglevel=error \
    @modelcontextprotocol/server-everything \
    @modelcontextprotocol/server-memory \
    @modelcontextprotocol/inspector@0.15 \
    @modelcontextprotocol/conformance@0.1.13 \
    oidc-provider@9 \
    || echo "setup-mcp: npm install failed; the real-server tests will skip" >&2
else
  echo "setup-mcp: npm not found; the npm-based real-server tests will skip" >&2
fi

"$py" -m pip install --quiet mcp-server-time \
  || echo "setup-mcp: pip install mcp-server-time failed; its tests will skip" >&2
