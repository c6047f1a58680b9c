"""A real OpenID Connect authorization server for tests: npm ``oidc-provider`` (certified) on
Node, started on a free loopback port, stopped by PID. Skips when Node or the package is
missing (``.ci/setup-mcp.sh`` installs it into ``.ci/node``).

The server signs with a key the test made (passed in as a private JWK), so a test can also
mint tokens the issuer's key signs (an expired one, one for another audience) and check
each rule on its own, besides the real tokens the server issues.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest

from _paths import ROOT
from _procs import free_port, stop, wait_http

PACKAGE = ROOT / ".ci" / "node" / "node_modules" / "oidc-provider"
SERVER = ROOT / "tests" / "fixtures" / "oidc" / "server.mjs"
KID = "test-signing-key"


@dataclass
class Issuer:
    """A running authorization server: its URL, and what a test needs to get tokens."""

    url: str
    key: Any  # the RSA private key it signs with
    secrets: dict[str, str] = field(default_factory=dict)

    def token(self, client: str, resource: str, scope: str = "tools") -> str:
        """A client-credentials access token for ``resource`` (RFC 8707), as a client gets it."""
        reply = httpx.post(
            f"{self.url}/token",
            data={"grant_type": "client_credentials", "scope": scope, "resource": resource},
            auth=(client, self.secrets[client]),
            timeout=10,
        )
        assert reply.status_code == 200, reply.text
        return str(reply.json()["access_token"])

    def mint(self, claims: dict[str, Any], *, key: Any = None, kid: str = KID, **header: Any) -> str:
        """A token signed with the issuer's own key (or ``key``): for attacks and edge cases."""
        import jwt

        base = {"iss": self.url, "iat": int(time.time()), "exp": int(time.time()) + 300, "sub": "minted"}
        return jwt.encode({**base, **claims}, key or self.key, algorithm="RS256", headers={"kid": kid, **header})


def _secret(name: str) -> str:
    return f"{name}-secret-" + "0123456789abcdef" * 3


@contextmanager
def oidc_server(clients: Sequence[dict[str, Any]]) -> Iterator[Issuer]:
    """Serve ``clients`` (``{"id", "groups", "opaque"?}``) until the block ends."""
    node = shutil.which("node")
    if node is None or not (PACKAGE / "package.json").exists():
        pytest.skip("needs Node and npm oidc-provider in .ci/node (run .ci/setup-mcp.sh)")
    jwt = pytest.importorskip("jwt")
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = {**json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(key)), "kid": KID, "alg": "RS256", "use": "sig"}
    full = [{**c, "secret": _secret(c["id"])} for c in clients]
    port = free_port()
    proc = subprocess.Popen(
        [node, str(SERVER), str(port), json.dumps(full)],
        env={"OIDC_PROVIDER": str(PACKAGE), "OIDC_JWKS": json.dumps({"keys": [jwk]}), "PATH": "/usr/bin:/bin"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_http(proc, f"{url}/.well-known/openid-configuration", ready=lambda r: r.status_code == 200, timeout=60)
        yield Issuer(url, key, {c["id"]: c["secret"] for c in full})
    finally:
        stop(proc)
