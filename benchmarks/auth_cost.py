"""Cost per request of establishing the caller at the HTTP edge (issue 22).

Three ways into one trivial ASGI app, measured in one run and interleaved in blocks so
the shared machine's load falls on all of them alike:

* ``none``: no token at all (the caller is known by its address);
* ``static``: today's single-user ``--token`` (a constant-time compare, the token's hash);
* ``jwt-new``: an RS256 OAuth access token seen for the first time, checked by
  :class:`TokenVerifier` with the issuer's JWKS already cached (signature, issuer,
  audience, expiry, scopes), then the caller's policy predicate (:class:`AccessRules`,
  cached per rule set);
* ``jwt``: the same token again (what a client does: one token for many requests), which
  the verifier remembers by hash until it expires.

Each figure is the median block's CPU time per request (``time.thread_time``: waiting for a
core is not counted). The JWKS is served by a loopback stdlib HTTP server, fetched once.

    python benchmarks/auth_cost.py [--requests 3000] [--blocks 10]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa

from _report import write_section
from toolscout.access.auth import AuthConfig, IdentityGuard, TokenVerifier, principal_of_scope

RESOURCE = "http://127.0.0.1:8765/mcp"


def _jwks_server(key: Any) -> tuple[ThreadingHTTPServer, str]:
    public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key()))
    body = json.dumps({"keys": [{**public, "kid": "k1", "alg": "RS256", "use": "sig"}]}).encode()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


async def _inner(scope: dict[str, Any], receive: Any, send: Any) -> None:
    principal = principal_of_scope(scope)
    assert principal is not None
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b""})


async def _measure(guard: Any, header: bytes | list[bytes] | None, n: int, rules: Any = None) -> float:
    """CPU seconds per request through ``guard`` (a list of headers: one per request)."""
    each = header if isinstance(header, list) else [header] * n
    sent: list[int] = []

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            sent.append(message["status"])

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b""}

    started = time.thread_time()
    for i in range(n):
        headers = [(b"authorization", each[i])] if each[i] else []
        scope = {"type": "http", "path": "/v1/find", "headers": headers, "client": ("127.0.0.1", 5000)}
        await guard(scope, receive, send)
        if rules is not None:
            rules.allow_for(scope["toolscout.principal"])
    spent = time.thread_time() - started
    assert sent and all(s == 200 for s in sent), sent[:3]
    return spent / n


async def main(requests: int, blocks: int) -> dict[str, float]:
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    http, base = _jwks_server(key)
    config = AuthConfig.model_validate(
        {
            "issuer": "http://issuer.test",
            "jwksUrl": f"{base}/jwks",
            "requiredScopes": ["tools"],
            "policies": [
                {"match": {"groups": "eng"}, "tools": ["github_*"]},
                {"match": {"groups": "sales"}, "tools": ["crm_*"]},
            ],
        }
    )
    rules = config.access_rules()
    now = int(time.time())

    def mint(jti: int) -> str:
        claims = {"iss": "http://issuer.test", "aud": RESOURCE, "sub": "alice", "exp": now + 3600, "iat": now,
                  "scope": "tools", "groups": ["eng"], "jti": str(jti)}
        return jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"})

    token = mint(0)
    per_block = requests // blocks
    fresh = [[f"Bearer {mint(1 + b * per_block + i)}".encode() for i in range(per_block)] for b in range(blocks)]
    verifier = TokenVerifier(config, RESOURCE)
    guards = {
        "none": (IdentityGuard(_inner), None, None),
        "static": (IdentityGuard(_inner, token="s3cret-static-token"), b"Bearer s3cret-static-token", None),
        "jwt-new": (IdentityGuard(_inner, verifier=verifier, scopes=["tools"]), None, rules),
        "jwt": (IdentityGuard(_inner, verifier=verifier, scopes=["tools"]), f"Bearer {token}".encode(), rules),
    }
    for name, (guard, header, r) in guards.items():  # warm-up: the JWKS fetch, first imports
        await _measure(guard, f"Bearer {mint(-1)}".encode() if name == "jwt-new" else header, 50, r)
    per: dict[str, list[float]] = {name: [] for name in guards}
    for block in range(blocks):
        order = list(guards) if block % 2 == 0 else list(reversed(guards))
        for name in order:
            guard, header, r = guards[name]
            per[name].append(await _measure(guard, fresh[block] if name == "jwt-new" else header, per_block, r))
    http.shutdown()
    return {name: statistics.median(values) for name, values in per.items()}


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=3000)
    parser.add_argument("--blocks", type=int, default=10)
    args = parser.parse_args()
    load_start = os.getloadavg()[0]
    result = asyncio.run(main(args.requests, args.blocks))
    load_end = os.getloadavg()[0]
    for name, seconds in result.items():
        print(f"{name:7s} {seconds * 1e6:8.1f} µs CPU per request")
    static, checked, new = result["static"], result["jwt"], result["jwt-new"]
    body = f"""
{args.requests} requests per way in {args.blocks} interleaved blocks, one process; CPU time of the
measuring thread per request (the median block), through the identity guard into a no-op ASGI app.
Load average {load_start:.1f} at start, {load_end:.1f} at end (1-minute) on 2 shared cores: compare
the ratios, which the interleaving keeps fair, more than the absolute figures.

| caller established by | CPU per request | vs the static token |
|---|---|---|
| nothing (address only) | {result['none'] * 1e6:.1f} µs | {result['none'] / static:.2f}x |
| static `--token` (today) | {static * 1e6:.1f} µs | 1.00x |
| OAuth JWT seen first (RS256, JWKS cached) + policy predicate | {new * 1e6:.1f} µs | {new / static:.2f}x |
| OAuth JWT again (remembered by hash until it expires) + policy predicate | {checked * 1e6:.1f} µs | {checked / static:.2f}x |

A token's first request pays the RS256 signature check (pyjwt over `cryptography`) and the
claim checks; a client then sends the same token with every request, which costs a SHA-256
of the token, a dict lookup and matching the principal's claims against the policy rules
(the predicate itself is cached per set of matching rules, so ranking masks are shared). Against a keyword `find_tools` at 10k
tools (about 1 ms, above) a first sight adds {new / 1e-3 * 100:.0f}% of a search, a repeat
{checked / 1e-3 * 100:.1f}%.
"""
    write_section("auth-cost", "Identity at the edge: cost per request (issue 22)",
                  f"python benchmarks/auth_cost.py --requests {args.requests} --blocks {args.blocks}", body)
