"""Who is calling and what they may do: one package every surface asks, nothing else decides.

- :mod:`.principal` derives the caller (one derivation for every surface, from the ASGI
  scope an authenticating middleware filled, else the anonymous principal);
- :mod:`.auth` verifies bearer tokens (JWT/JWKS, introspection) into that principal;
- :mod:`.identity` turns claims into grants (:class:`~.identity.AccessRules`);
- :mod:`.policy` and :mod:`.visibility` decide who may see and run which entries;
- :mod:`.approval` asks a human for calls whose kind needs it;
- :mod:`.credentials` keeps per-user upstream secrets (vault, OAuth consent);
- :mod:`.audit` records every decision;
- :mod:`.guard` runs every operation in one order: identify -> visible -> approve ->
  credentials -> run -> screen -> audit.

Submodules are imported by name (``from toolscout.access.policy import Policy``): this
``__init__`` stays empty so a light import of one rule does not load the rest.
"""

# the submodules are the API: import them by name
__all__ = ["approval", "audit", "auth", "credentials", "guard", "identity", "policy", "principal", "screening", "visibility"]
