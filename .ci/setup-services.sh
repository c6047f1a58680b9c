#!/usr/bin/env bash
# Real services some tests start themselves (never mocks): Redis and PostgreSQL from
# Debian's packages, and headless Chromium for the web console's browser test. Installed
# once; tests start throwaway servers on free loopback ports.
set -euo pipefail
need=()
command -v redis-server >/dev/null 2>&1 || need+=(redis-server)
compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null || need+=(postgresql)
command -v chromium >/dev/null 2>&1 || need+=(chromium)
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
if [ "$(id -u)" != 0 ]; then
  echo "setup-services: ${need[*]} missing and not root: the tests that need them will be skipped" >&2
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# The package starts its own cluster/server as a service; the tests use their own.
(command -v pg_ctlcluster >/dev/null 2>&1 && pg_lsclusters -h 2>/dev/null | awk '{print $1, $2}' | while read -r v c; do pg_ctlcluster "$v" "$c" stop 2>/dev/null || true; done) || true
(command -v redis-cli >/dev/null 2>&1 && redis-cli shutdown nosave >/dev/null 2>&1) || true
