"""Which :class:`~toolscout.session.Session` serves an MCP request, and who sent it.

Kept apart from the MCP handlers because the rule is about connections and principals, not
about the protocol's messages: each stateful connection (protocol 2025-11-25) has a session
of its own that belongs to the principal who opened it; stateless requests (2026-07-28)
share one session that never reveals, unless they name their conversation in
``_meta["toolscout/session"]`` or access rules give each principal its own. Sessions live in
bounded stores (least recently active forgotten first) and are never shared between callers.
"""

from __future__ import annotations

import logging
import re
import uuid
import weakref
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from ..access.auth import principal_of_scope
from ..access.identity import AccessRules, local_principal
from ..context import Principal
from ..errors import SessionStoreUnavailable
from ..gateway import Gateway
from ..session import Session
from ..sessions.store import InMemorySessionStore

__all__ = [
    "MAX_SESSIONS",
    "SESSION_META",
    "SessionOptions",
    "SessionRouter",
    "is_stateful",
    "session_tag",
]

log = logging.getLogger("toolscout.mcp")

MAX_SESSIONS = 10_000
"""Sessions kept at once; the least recently active one is forgotten first."""
SESSION_META = "toolscout/session"
_TAG = re.compile(r"[\w.:@/-]{1,128}")


@dataclass(frozen=True)
class SessionOptions:
    """How the server's sessions behave (``toolscout serve``'s session flags).

    ``code_mode``: every session also offers ``execute`` (docs/code-mode.md). ``stubs``:
    stateful sessions list every tool not yet found as a stub (name and one line) instead of
    leaving it out. ``threshold``: when sessions start deferring (0: always; a count or
    ``"auto:N%"``, see :mod:`toolscout.sessions.deferral`); ``auto_pin``: pin the most-used tools."""

    max_revealed: int = 64
    max_sessions: int = MAX_SESSIONS
    use_tool: bool = False
    stubs: bool = False
    threshold: int | str = 0
    auto_pin: int = 0
    context_window: int | None = None
    code_mode: bool = False

    def session_kwargs(self) -> dict[str, Any]:
        """The :class:`Session` options every session of this server shares."""
        out = asdict(self)
        del out["max_revealed"], out["max_sessions"]
        out["call_tool"] = True
        if not out["code_mode"]:
            del out["code_mode"]
        return out


class SessionRouter:
    """The session for each request: per connection and principal (stateful), per named
    conversation or principal (stateless), with the shared store attached when there is one."""

    def __init__(
        self,
        gateway: Gateway,
        options: SessionOptions,
        *,
        access: AccessRules | None = None,
        shared: Any = None,
    ) -> None:
        kwargs = options.session_kwargs()
        self.access = access
        self.shared = shared
        self.local = local_principal()
        """Who a stdio client is: the OS user running this process."""
        self.sessions = InMemorySessionStore(
            gateway, max_sessions=options.max_sessions, max_revealed=options.max_revealed, **kwargs
        )
        self.stateless = Session(gateway, session_id="stateless", progressive=False, **kwargs)
        # Stateless requests that name their conversation (``_meta["toolscout/session"]``) get
        # a session of their own: nothing to reveal, but learning sees who searched and called.
        self.tagged = InMemorySessionStore(gateway, max_sessions=options.max_sessions, progressive=False, **kwargs)
        self.peers: dict[str, weakref.ref[Any]] = {}
        """Stateful session key -> its connection (to notify of tool-list changes)."""
        self._owners: dict[str, str] = {}  # stateful session key -> the principal it belongs to
        self._conn_keys: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()

    def key(self, ctx: Any) -> str | None:
        """A key unique to this client connection for its whole life (never reused, unlike
        ``id()``); its session is dropped when the connection object goes away."""
        conn = getattr(ctx.session, "_connection", None)
        if conn is None:
            return None
        key = self._conn_keys.get(conn)
        if key is None:
            key = getattr(conn, "session_id", None) or uuid.uuid4().hex
            self._conn_keys[conn] = key
            ref = self.peers[key] = weakref.ref(conn)
            weakref.finalize(conn, self._forget, key, ref)
        return key

    def _forget(self, key: str, ref: weakref.ref[Any] | None = None) -> None:
        """Drop a gone connection's session here (a shared store keeps it for other
        replicas), unless a newer connection continues it under the same id."""
        if ref is not None and self.peers.get(key) not in (None, ref):
            return
        self.sessions.drop(key)
        self.peers.pop(key, None)
        self._owners.pop(key, None)

    def principal(self, ctx: Any) -> Principal:
        """Who sent this request: the caller the HTTP edge established (:mod:`.auth`), else
        (stdio) the OS user running the gateway."""
        request = getattr(ctx, "request", None)
        scope = getattr(request, "scope", None)
        found = principal_of_scope(scope) if isinstance(scope, dict) else None
        return found if found is not None else self.local

    def session(self, ctx: Any, params: Any = None, principal: Principal | None = None) -> Session:
        """The :class:`Session` serving this request's connection (a stateless request's
        own, when its ``_meta`` names one; else the shared stateless session). With access
        rules, a session sees only what its principal may, and belongs to that principal (a
        request with another principal's token on its id gets a session of its own)."""
        if principal is None:
            principal = self.principal(ctx)
        key = self.key(ctx) if is_stateful(ctx) else None
        if key is None:
            tag = session_tag(params)
            if tag is not None:  # a name is the caller's own: never another principal's session
                return self._scoped(self.tagged.session(f"tagged:{principal.id}:{tag}"), principal)
            if self.access is None:
                return self.stateless
            return self._scoped(self.tagged.session(f"principal:{principal.id}"), principal)
        if self._owners.setdefault(key, principal.id) != principal.id:
            key = f"{key}:{principal.id}"  # another caller's token on this session id: never the owner's session
        session = self._scoped(self.sessions.session(key), principal)
        if self.shared is not None and session.store is None:  # loaded by its first request
            self.shared.attach(session, load=False)
        return session

    def _scoped(self, session: Session, principal: Principal) -> Session:
        """``session`` limited to what ``principal`` may see and run (set once: a session
        belongs to one principal)."""
        if self.access is not None:
            allow = self.access.allow_for(principal)
            if session.allow is not allow:
                session.allow = allow
        return session

    async def refreshed(self, ctx: Any) -> Session:
        """The session, caught up with what other replicas did (if the store cannot be
        reached, as this replica last saw it)."""
        session = self.session(ctx)
        if session.store is not None:
            try:
                await session.store.arefresh(session)
            except SessionStoreUnavailable as exc:
                log.debug("listing session %s from this replica's copy: %s", session.id[:8], exc)
        return session

    def live(self, key: str) -> Session | None:
        """The stateful session under ``key`` if this replica holds it."""
        return self.sessions.get(key) if key in self.sessions else None


def is_stateful(ctx: Any) -> bool:
    """Whether the request's protocol has sessions (anything before 2026-07-28)."""
    return ctx.protocol_version not in _modern_versions()


def session_tag(params: Any) -> str | None:
    """The conversation a stateless request names in ``_meta["toolscout/session"]`` (an id
    of up to 128 word characters and ``.:@/-``), or ``None``."""
    meta = getattr(params, "meta", None)
    value = meta.get(SESSION_META) if isinstance(meta, dict) else getattr(meta, SESSION_META, None)
    return value if isinstance(value, str) and _TAG.fullmatch(value) else None


@lru_cache(maxsize=1)
def _modern_versions() -> frozenset[str]:
    """Protocol versions without sessions (imported on first use: not on the start-up path)."""
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return frozenset(MODERN_PROTOCOL_VERSIONS)
