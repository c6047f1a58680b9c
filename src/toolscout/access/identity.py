"""Who a caller is, and what that lets them see and run.

The edges establish a :class:`~toolscout.context.Principal` (a checked bearer token's
claims, a static token, the OS user of a stdio process, or, with nothing else, the
client's address); this module turns principals into the one thing the core asks of a
caller, an ``allow`` predicate for :class:`~toolscout.access.visibility.Visibility`, plus the
extra approval kinds and admin rights the operator's rules give them.

Rules are data (``auth.policies`` in a gateway config)::

    {"match": {"groups": ["eng"]}, "tools": ["github_*"], "servers": ["github"],
     "permissions": ["read", "write"], "approve": ["write"]}

A rule *matches* a principal when every claim it names has one of the listed values
(``sub``, ``groups``, ``roles``, ``scopes`` or any other claim; ``{}`` matches everyone).
A tool is visible to a principal when at least one matching rule admits it; with rules
configured and none matching, nothing is visible (fail closed). The predicate for one set
of matching rules is built once and reused (the index caches one ranking mask per
predicate object), so a thousand callers in three groups cost three masks, not a thousand.
"""

from __future__ import annotations

import getpass
import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..context import ANONYMOUS, Allow, Principal
from ..errors import InvalidToken
from ..model import Tool
from .policy import Policy

__all__ = [
    "AccessRules",
    "Rule",
    "address_principal",
    "claim_values",
    "local_principal",
    "principal_from_claims",
    "token_principal",
    "voter_of",
]

_MAX_CACHED = 1024


def claim_values(principal: Principal, name: str) -> frozenset[str]:
    """The values of claim ``name`` as a set of strings: a list claim as its items, a
    space-separated ``scope`` string as its scopes, ``sub`` as the principal's id."""
    if name == "sub":
        return frozenset({principal.id})
    claims = principal.claims
    if name == "scopes":
        raw: Any = claims.get("scope", claims.get("scp", ()))
    else:
        raw = claims.get(name, ())
    if isinstance(raw, str):
        return frozenset(raw.split()) if name == "scopes" else frozenset({raw})
    if isinstance(raw, Iterable) and not isinstance(raw, Mapping):
        return frozenset(str(v) for v in raw if isinstance(v, str | int))
    if isinstance(raw, bool | int | float):
        return frozenset({str(raw).lower() if isinstance(raw, bool) else str(raw)})
    return frozenset()


def _subject(claims: Mapping[str, Any], id_claim: str) -> str:
    """The caller's id: the operator's ``idClaim``, else ``sub``, else ``client_id``.

    A token naming none of them is refused rather than given a placeholder id: a shared
    fallback (``unknown``) would make every such caller one person, sharing sessions,
    vault records and audit identity."""
    for name in dict.fromkeys((id_claim, "sub", "client_id")):
        value = claims.get(name)
        if isinstance(value, bool) or not isinstance(value, str | int):
            continue
        text = str(value).strip()
        if text:
            return text
    named = "', '".join(dict.fromkeys((id_claim, "sub", "client_id")))
    raise InvalidToken(
        f"the token names no caller (no '{named}' claim with a value)",
        hint="Ask the authorization server for a token with a subject, or have the operator name the claim that "
        "identifies callers (auth.idClaim, docs/team-gateway.md).",
    )


def principal_from_claims(
    claims: Mapping[str, Any], *, id_claim: str = "sub", groups_claim: str = "groups"
) -> Principal:
    """A principal for a validated token's claims: ``kind`` is ``service`` for a client
    acting for itself (client credentials: no user, or the subject is the client), else
    ``user``. The groups claim, wherever the issuer puts it, is also kept as ``groups``.
    Raises :class:`~toolscout.errors.InvalidToken` when no claim names the caller."""
    subject = _subject(claims, id_claim)
    client = claims.get("client_id") or claims.get("azp")
    service = claims.get("gty") == "client_credentials" or (client is not None and subject == client)
    kept = {k: v for k, v in claims.items() if k not in ("jti",)}
    if groups_claim != "groups" and groups_claim in claims:
        kept["groups"] = claims[groups_claim]
    return Principal(id=str(subject), kind="service" if service else "user", claims=kept)


def token_principal(token: str) -> Principal:
    """The caller of a static bearer token: known only by the token's hash (never the
    token itself)."""
    digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()[:16]
    return Principal(id=f"token:{digest}", kind="token")


def address_principal(host: str | None) -> Principal:
    """A caller known only by its address (no token at all): still anonymous, but one
    address is one voter for learning, however many sessions it names."""
    return Principal(id=f"address:{host or 'unknown'}", kind="anonymous")


def local_principal() -> Principal:
    """The OS user running this process: who a stdio client is."""
    try:
        user = getpass.getuser()
    except Exception:  # no login name (a container without a passwd entry)
        user = str(os.getuid()) if hasattr(os, "getuid") else "local"
    return Principal(id=f"local:{user}", kind="local")


def voter_of(principal: Principal, session_id: str) -> str:
    """Whom learning counts a search or call for: the principal when the edge knows one,
    else the session (the library's own conversations, where nobody else can name one)."""
    return session_id if principal is ANONYMOUS or principal.id == ANONYMOUS.id else principal.id


@dataclass(frozen=True)
class Rule:
    """One policy rule: whom it is for (``match``: claim -> accepted values) and what it
    lets them see and run (``policy``, ``servers``), and which permission kinds need
    approval for them (``approve``)."""

    match: Mapping[str, frozenset[str]] = field(default_factory=dict)
    policy: Policy = field(default_factory=Policy)
    servers: frozenset[str] | None = None
    approve: frozenset[str] = frozenset()

    @classmethod
    def of(
        cls,
        match: Mapping[str, str | Sequence[str]] | None = None,
        *,
        tools: Sequence[str] | None = None,
        deny: Sequence[str] = (),
        servers: Sequence[str] | None = None,
        permissions: Sequence[str] | None = None,
        approve: Sequence[str] = (),
    ) -> Rule:
        wanted = {k: frozenset([v] if isinstance(v, str) else v) for k, v in (match or {}).items()}
        policy = Policy(
            allow=tuple(tools) if tools is not None else None,
            deny=tuple(deny),
            permissions=frozenset(permissions) if permissions is not None else None,
        )
        return cls(wanted, policy, frozenset(servers) if servers is not None else None, frozenset(approve))

    def matches(self, principal: Principal) -> bool:
        return all(claim_values(principal, claim) & values for claim, values in self.match.items())

    def admits(self, tool: Tool) -> bool:
        if self.servers is not None and (tool.source_id or tool.source) not in self.servers:
            return False
        return self.policy.permits(tool)


def _nothing(tool: Tool) -> bool:
    return False


class AccessRules:
    """The operator's rules, per principal: :meth:`allow_for` (what they may see and run),
    :meth:`approve_kinds` (extra kinds that need approval), :meth:`is_admin`.

    ``rules`` empty: every principal sees everything (``allow_for`` returns ``None``, the
    no-predicate fast path), as without identity."""

    def __init__(self, rules: Sequence[Rule] = (), *, admins: Sequence[Rule] = ()) -> None:
        self.rules = tuple(rules)
        self.admins = tuple(admins)
        self._allows: dict[tuple[int, ...], Allow] = {}

    def matching(self, principal: Principal) -> tuple[int, ...]:
        """Indexes of the rules that apply to ``principal``."""
        return tuple(i for i, rule in enumerate(self.rules) if rule.matches(principal))

    def allow_for(self, principal: Principal) -> Allow | None:
        """The visibility predicate for ``principal``: the same object for every principal
        the same rules match (so its ranking mask is cached once)."""
        if not self.rules:
            return None
        key = self.matching(principal)
        found = self._allows.get(key)
        if found is not None:
            return found
        if not key:
            allow: Allow = _nothing
        else:
            chosen = tuple(self.rules[i] for i in key)

            def allow(tool: Tool) -> bool:
                return any(rule.admits(tool) for rule in chosen)

        if len(self._allows) >= _MAX_CACHED:
            self._allows.clear()
        self._allows[key] = allow
        return allow

    def approve_kinds(self, principal: Principal) -> frozenset[str]:
        """Permission kinds that need approval for this principal (every matching rule's)."""
        kinds: frozenset[str] = frozenset()
        for i in self.matching(principal):
            kinds |= self.rules[i].approve
        return kinds

    def is_admin(self, principal: Principal) -> bool:
        """Whether ``principal`` may read the audit log of everyone (matches an admin rule)."""
        return any(rule.matches(principal) for rule in self.admins)
