"""Per-user upstream credentials: the encrypted vault and the gateway's OAuth client.

Used by MCP upstreams whose ``credentials`` mode is ``per-user`` or ``token-exchange``
(:mod:`toolscout.sources.mcp.per_user`); docs/credentials.md tells the whole story.
"""

from .oauth import OAuthClient, TokenEndpointError, pkce_pair
from .vault import KEYS_ENV, SUBJECT_TOKEN, Credential, Vault, generate_key, load_keys

__all__ = [
    "KEYS_ENV",
    "SUBJECT_TOKEN",
    "Credential",
    "OAuthClient",
    "TokenEndpointError",
    "Vault",
    "generate_key",
    "load_keys",
    "pkce_pair",
]
