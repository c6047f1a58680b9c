"""The one session-store contract and its in-process engine.

:class:`SessionStore` is what every surface keeps sessions in: whole sessions by id, and
one session's state kept in step with the store. :class:`InMemorySessionStore` is the
engine of one process; :class:`~toolscout.sessions.redis.RedisSessionStore` shares
sessions between workers and replicas. The session itself only sees the half it calls
(:class:`~toolscout.session.StoreLink`), so it never imports this module.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING, Any, Protocol

from ..session import Session, StoreLink

if TYPE_CHECKING:
    from ..gateway import Gateway

__all__ = ["InMemorySessionStore", "SessionStore"]


class SessionStore(StoreLink, Protocol):
    """Where sessions live between requests: :class:`InMemorySessionStore` (this process) or
    :class:`~toolscout.sessions.redis.RedisSessionStore` (every worker and replica).

    Whole sessions by id (:meth:`session` gets or creates, :meth:`get`, :meth:`put`,
    :meth:`drop`), and one session's state kept in step: a ``Session(..., store=...)`` is
    attached at creation, refreshed before each handled call and saved after a change. A
    shared store keeps :meth:`Session.state` and merges with :meth:`Session.adopt`; what it
    knows of each session's stored copy it keeps itself, never in the session."""

    engine: str
    """``"memory"``, ``"redis"``...: what readiness reports."""

    def session(self, session_id: str | None = None) -> Session: ...
    def get(self, session_id: str) -> Session | None: ...
    def put(self, session: Session) -> None: ...
    def drop(self, session_id: str) -> None: ...


class InMemorySessionStore:
    """Sessions in this process; past ``max_sessions`` the least recently used is evicted
    (an evicted conversation just searches again). A session attached to it lives here;
    there is nothing elsewhere to refresh from or save to."""

    engine = "memory"

    def __init__(self, gateway: Gateway, *, max_sessions: int = 1000, **session_options: Any) -> None:
        self.gateway = gateway
        self.max_sessions = max(1, max_sessions)
        self.session_options = session_options
        self._sessions: OrderedDict[str, Session] = OrderedDict()

    def __len__(self) -> int:
        return len(self._sessions)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._sessions

    def get(self, session_id: str) -> Session | None:
        session = self._sessions.get(session_id)
        if session is not None:
            self._sessions.move_to_end(session_id)
        return session

    def put(self, session: Session) -> None:
        self._sessions[session.id] = session
        self._sessions.move_to_end(session.id)
        while len(self._sessions) > self.max_sessions:
            self._sessions.popitem(last=False)

    def drop(self, session_id: str) -> None:
        self._sessions.pop(session_id, None)

    def session(self, session_id: str | None = None) -> Session:
        """The session with this id, created (and stored) if it does not exist."""
        existing = self.get(session_id) if session_id else None
        if existing is not None:
            return existing
        created = Session(self.gateway, session_id=session_id, **self.session_options)
        self.put(created)
        return created

    def attach(self, session: Session) -> None:
        self.put(session)

    def refresh(self, session: Session) -> None:
        """Nothing to catch up with: this process holds the only copy."""

    async def arefresh(self, session: Session) -> None:
        """Nothing to catch up with: this process holds the only copy."""

    def save(self, session: Session) -> bool:
        """Nothing to write: the session object is the state. Always ``False``."""
        return False

    async def asave(self, session: Session) -> bool:
        return False
