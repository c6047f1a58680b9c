"""A local OpenID Connect issuer for trying the team gateway (docs/team-gateway.md) on one
machine: npm ``oidc-provider`` (a certified implementation; the one the tests start), on
127.0.0.1, with one client per person, each in a group.

    python3 scripts/local_issuer.py                      # http://127.0.0.1:9400, eve, sam, ada
    python3 scripts/local_issuer.py --config team.json   # also writes team.local.json for it
    python3 scripts/local_issuer.py --port 9500 --client bob:engineering

It needs Node and the package: ``bash .ci/setup-mcp.sh`` installs it into ``.ci/node`` (or
``npm install --prefix .ci/node oidc-provider@9``). It prints the issuer URL, each client's
id, group and secret, and the command that gets a client a token for the gateway, then runs
until Ctrl-C. Tokens are RS256 JWTs for the ``resource`` asked for (RFC 8707), carrying the
client's ``groups``: what the guide's ``auth`` block checks. For trying things only: the
secrets are printed and the keys are made at each start.
"""

from __future__ import annotations

import argparse
import json
import secrets
import shutil
import signal
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / ".ci" / "node" / "node_modules" / "oidc-provider"
SERVER = ROOT / "tests" / "fixtures" / "oidc" / "server.mjs"
CLIENTS = ("eve:engineering", "sam:sales", "ada:admins")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=9400, help="Port on 127.0.0.1 (default 9400).")
    parser.add_argument(
        "--client", action="append", metavar="ID:GROUP[,GROUP]",
        help=f"A client and its groups (repeatable; default: {', '.join(CLIENTS)}).",
    )
    parser.add_argument("--resource", default=None, help="The gateway's resource URL (default: from --config, else http://127.0.0.1:8765/mcp).")
    parser.add_argument(
        "--config", type=Path, metavar="FILE",
        help="A gateway config with an auth block (the guide's team.json): write FILE's local variant beside it "
        "(<name>.local.json: this issuer, the gateway on 127.0.0.1, its resource URL on this machine).",
    )
    args = parser.parse_args()
    node = shutil.which("node")
    if node is None or not (PACKAGE / "package.json").exists():
        print(
            "local_issuer: needs Node and npm oidc-provider in .ci/node; install them with\n"
            "  bash .ci/setup-mcp.sh\n"
            "or: npm install --prefix .ci/node oidc-provider@9",
            file=sys.stderr,
        )
        return 2
    clients = []
    for spec in args.client or CLIENTS:
        name, _, groups = spec.partition(":")
        clients.append({"id": name, "groups": [g for g in groups.split(",") if g], "secret": secrets.token_urlsafe(18)})
    issuer = f"http://127.0.0.1:{args.port}"
    local = _local_config(args.config, issuer) if args.config else None
    resource = args.resource or (local[1] if local else "http://127.0.0.1:8765/mcp")
    proc = subprocess.Popen(
        [node, str(SERVER), str(args.port), json.dumps(clients)],
        env={"OIDC_PROVIDER": str(PACKAGE), "PATH": "/usr/bin:/bin:/usr/local/bin"},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()  # "oidc listening <url>" once it accepts connections
    if "listening" not in first:
        proc.wait()
        print(f"local_issuer: the issuer did not start (port {args.port} in use?)", file=sys.stderr)
        return 1
    print(f"issuer {issuer}", flush=True)
    for c in clients:
        print(f"client {c['id']} groups {','.join(c['groups']) or '-'} secret {c['secret']}", flush=True)
    one = clients[0]
    serve = (
        f"Serve it: toolscout serve -c {local[0]}" if local
        else f"In the gateway's config: \"auth\": {{\"issuer\": \"{issuer}\", \"resource\": \"{resource}\", ...}}"
    )
    print(
        f"\n{serve}\n"
        f"A token for {one['id']}:\n"
        f"  curl -s -u {one['id']}:{one['secret']} -d grant_type=client_credentials -d scope=tools "
        f"-d resource={resource} {issuer}/token\n"
        "Ctrl-C stops the issuer.",
        flush=True,
    )
    signal.signal(signal.SIGTERM, lambda *_: proc.terminate())
    try:
        return proc.wait()
    except KeyboardInterrupt:
        proc.terminate()
        proc.wait(10)
        return 0


def _local_config(path: Path, issuer: str) -> tuple[Path, str]:
    """Write ``path``'s local variant (``<stem>.local.json``): ``auth.issuer`` this issuer,
    the gateway bound to 127.0.0.1, ``auth.resource`` its MCP URL here. Returns the file
    and that resource URL."""
    config = json.loads(path.read_text(encoding="utf-8"))
    port = int(config.get("port", 8765))
    resource = f"http://127.0.0.1:{port}/mcp"
    config["host"] = "127.0.0.1"
    config.setdefault("auth", {}).update(issuer=issuer, resource=resource)
    out = path.with_name(f"{path.stem}.local.json")
    out.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    return out, resource


if __name__ == "__main__":
    sys.exit(main())
