"""The gateway as an OAuth 2.1 client of an upstream: consent links, callbacks, refresh, exchange.

Three grants, each one HTTP POST to the upstream's token endpoint (``httpx``):

* **authorization code + PKCE (S256)**: :meth:`OAuthClient.begin` makes the consent link
  for one caller and one upstream, remembering the flow under a random ``state`` in the
  store (so any replica can take the callback); :meth:`OAuthClient.finish` takes the
  callback's ``code`` and ``state``, consumes the state (single use: the store's delete
  says whether it was still there), checks its age, and returns the principal it was bound
  to with the new credential.
* **refresh_token**: :meth:`OAuthClient.refresh`, before a stored grant expires.
* **token exchange (RFC 8693)**: :meth:`OAuthClient.exchange` trades the caller's own token
  (``subject_token``) for one issued for the upstream. The caller's token goes only to the
  configured token endpoint, never to an upstream.

A token endpoint's error is a :class:`AuthorizationRequired` (the caller must connect, or
connect again), its text bounded and never echoing what we sent.
"""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from ...errors import AuthorizationRequired, InvalidRequest
from .vault import Credential

if TYPE_CHECKING:
    from ...storage import BlobStore

__all__ = ["STATE_NAMESPACE", "STATE_TTL", "OAuthClient", "TokenEndpointError", "pkce_pair"]

STATE_NAMESPACE = "oauth-state"
STATE_TTL = 600.0
"""Seconds a consent link stays valid: long enough to sign in at the upstream, short enough
that a leaked link is soon worthless."""
TOKEN_TYPE_ACCESS = "urn:ietf:params:oauth:token-type:access_token"
GRANT_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"


def pkce_pair() -> tuple[str, str]:
    """``(verifier, S256 challenge)`` per RFC 7636: 43 characters of 256 random bits."""
    verifier = secrets.token_urlsafe(32)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    return verifier, base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


class TokenEndpointError(AuthorizationRequired):
    """The upstream's token endpoint refused a grant (``invalid_grant``: revoked, expired)."""


@dataclass(frozen=True)
class OAuthClient:
    """One upstream's OAuth client registration, as the gateway's operator configured it."""

    server: str
    token_url: str
    client_id: str
    client_secret: str | None = field(default=None, repr=False)
    authorization_url: str | None = None
    scopes: tuple[str, ...] = ()
    redirect_uri: str | None = None
    resource: str | None = None  # RFC 8707: the upstream the token is for
    timeout: float = 10.0

    # -- authorization code + PKCE ----------------------------------------------------
    def begin(self, store: BlobStore, principal: str) -> str:
        """The consent URL for ``principal``; the flow waits in ``store`` for the callback."""
        if self.authorization_url is None or self.redirect_uri is None:
            raise AuthorizationRequired(
                f"server '{self.server}' needs your own credential, and the gateway cannot ask for one by OAuth",
                hint=f"Register a token with PUT /v1/credentials/{self.server}.",
                server=self.server,
            )
        verifier, challenge = pkce_pair()
        state = secrets.token_urlsafe(32)
        record = {"principal": principal, "server": self.server, "verifier": verifier, "created": time.time()}
        store.put(STATE_NAMESPACE, state, json.dumps(record), {"server": self.server})
        params = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "state": state,
            "code_challenge": challenge,
            "code_challenge_method": "S256",
        }
        if self.scopes:
            params["scope"] = " ".join(self.scopes)
        if self.resource:
            params["resource"] = self.resource
        sep = "&" if "?" in self.authorization_url else "?"
        return f"{self.authorization_url}{sep}{urlencode(params)}"

    @staticmethod
    def claim(store: BlobStore, state: str) -> dict[str, Any]:
        """Consume a pending flow: the record ``begin`` stored. Refused when unknown, used
        already (the delete decides, so two callbacks cannot both win) or older than
        :data:`STATE_TTL`."""
        entry = store.get(STATE_NAMESPACE, state) if state else None
        if entry is None or not store.delete(STATE_NAMESPACE, state):
            raise InvalidRequest(
                "this authorization link is unknown or was used already",
                hint="Start again: call the tool, or ask for a new link, and open the newest one.",
            )
        try:
            record = json.loads(entry.text)
            age = time.time() - float(record["created"])
        except (ValueError, KeyError, TypeError):
            raise InvalidRequest("this authorization link's record is damaged", hint="Start again.") from None
        if age > STATE_TTL:
            raise InvalidRequest(
                f"this authorization link expired ({int(age)} s old; links last {int(STATE_TTL)} s)",
                hint="Start again: call the tool, or ask for a new link.",
            )
        return record

    async def finish(self, record: dict[str, Any], code: str) -> Credential:
        """Trade the callback's ``code`` (with the flow's PKCE verifier) for a credential."""
        data = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri or "",
            "code_verifier": record["verifier"],
        }
        return await self._grant(data, kind="oauth")

    # -- refresh, exchange --------------------------------------------------------------
    async def refresh(self, credential: Credential) -> Credential:
        """A new credential from ``credential``'s refresh token (kept if none comes back)."""
        if not credential.refresh_token:
            raise TokenEndpointError(f"the credential for server '{self.server}' expired and cannot be refreshed",
                                     server=self.server)
        fresh = await self._grant({"grant_type": "refresh_token", "refresh_token": credential.refresh_token},
                                  kind=credential.kind)
        if fresh.refresh_token is None:
            fresh = Credential(token=fresh.token, env=fresh.env, refresh_token=credential.refresh_token,
                               expires_at=fresh.expires_at, scope=fresh.scope, kind=fresh.kind,
                               obtained_at=fresh.obtained_at)
        return fresh

    async def exchange(self, subject_token: str, *, audience: str | None = None) -> Credential:
        """RFC 8693: the caller's token in, a token for this upstream out."""
        data = {
            "grant_type": GRANT_EXCHANGE,
            "subject_token": subject_token,
            "subject_token_type": TOKEN_TYPE_ACCESS,
            "requested_token_type": TOKEN_TYPE_ACCESS,
        }
        if audience:
            data["audience"] = audience
        return await self._grant(data, kind="exchange")

    async def _grant(self, data: dict[str, str], *, kind: str) -> Credential:
        import httpx  # a dependency of the mcp extra, which every upstream needs

        if self.scopes and data["grant_type"] != "authorization_code":
            data.setdefault("scope", " ".join(self.scopes))
        if self.resource:
            data.setdefault("resource", self.resource)
        auth = None
        if self.client_secret:
            auth = httpx.BasicAuth(self.client_id, self.client_secret)
        else:
            data["client_id"] = self.client_id
        try:
            async with httpx.AsyncClient(timeout=self.timeout, follow_redirects=False) as http:
                response = await http.post(self.token_url, data=data, auth=auth,
                                           headers={"Accept": "application/json"})
        except httpx.HTTPError as exc:
            raise AuthorizationRequired(
                f"the token endpoint of server '{self.server}' cannot be reached ({type(exc).__name__})",
                hint="Retry later; the operator should check tokenUrl in this server's config.",
                server=self.server,
            ) from None
        try:
            body = response.json()
        except ValueError:
            body = {}
        if response.status_code != 200 or not isinstance(body, dict) or not isinstance(body.get("access_token"), str):
            error = body.get("error") if isinstance(body, dict) else None
            why = f"{error}" if isinstance(error, str) else f"HTTP {response.status_code}"
            raise TokenEndpointError(
                f"the token endpoint of server '{self.server}' refused the grant: {why[:80]}",
                server=self.server,
                grant=data["grant_type"].rsplit(":", 1)[-1],
            )
        expires_in = body.get("expires_in")
        expires_at = time.time() + float(expires_in) if isinstance(expires_in, int | float) else None
        refresh = body.get("refresh_token")
        scope = body.get("scope")
        return Credential(
            token=body["access_token"],
            refresh_token=refresh if isinstance(refresh, str) else None,
            expires_at=expires_at,
            scope=scope if isinstance(scope, str) else None,
            kind=kind,
            obtained_at=time.time(),
        )
