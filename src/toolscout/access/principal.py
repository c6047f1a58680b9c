"""Who an HTTP request is from, as the ASGI scope says: the seam between identity and the rest.

Whatever authenticates a request (an OAuth resource-server middleware, a test's wrapper)
puts the :class:`~toolscout.context.Principal` it established in the ASGI scope under
:data:`PRINCIPAL_KEY`, and any per-caller secrets (the caller's own bearer token, for
upstreams in ``token-exchange`` mode, under ``toolscout.access.credentials.SUBJECT_TOKEN``) under
:data:`CREDENTIALS_KEY`. The MCP endpoint and ``/v1`` read them here into the request's
:class:`~toolscout.context.CallContext`. A scope without them is an anonymous caller.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..context import ANONYMOUS, CallContext, Principal

__all__ = ["CREDENTIALS_KEY", "PRINCIPAL_KEY", "edge_context", "edge_fields", "established", "principal_of"]

PRINCIPAL_KEY = "toolscout.principal"
CREDENTIALS_KEY = "toolscout.credentials"


def established(scope: Mapping[str, Any] | None) -> Principal | None:
    """The caller whatever authenticated this request put in its ASGI scope, if any: the
    one derivation every surface (MCP, ``/v1``, the console, the credentials API) uses."""
    found = scope.get(PRINCIPAL_KEY) if scope is not None else None
    return found if isinstance(found, Principal) else None


def principal_of(scope: Mapping[str, Any] | None) -> Principal:
    """The caller an ASGI scope names, else the anonymous principal."""
    return established(scope) or ANONYMOUS


def edge_fields(scope: Mapping[str, Any] | None) -> dict[str, Any]:
    """The :class:`CallContext` fields an ASGI scope sets (none for an anonymous request)."""
    if scope is None:
        return {}
    out: dict[str, Any] = {}
    principal = principal_of(scope)
    if principal is not ANONYMOUS:
        out["principal"] = principal
    secrets = scope.get(CREDENTIALS_KEY)
    if isinstance(secrets, Mapping) and secrets:
        out["credentials"] = secrets
    return out


def edge_context(scope: Mapping[str, Any] | None, base: CallContext) -> CallContext:
    """``base`` with the caller an ASGI scope names (``base`` itself for anonymous ones)."""
    fields = edge_fields(scope)
    return base.replace(**fields) if fields else base
