"""A session's state as a shared store keeps it, and how a session takes one back.

Small and JSON (revealed names, what a provider loaded, recency, versions, repeat
counters): enough for another worker or replica to continue the conversation. Kept apart
from :class:`~toolscout.session.Session` so the session's module holds its decisions and
this one the two ways back in: :meth:`SavedState.restore` (add what a state holds) and
:meth:`SavedState.adopt` (become it: a store's merge of several workers' changes).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, Self

from .dispatch import SearchCounter
from .reveal import RevealSet

__all__ = ["SavedState", "StoreLink"]


class StoreLink(Protocol):
    """The half of :class:`~toolscout.sessions.store.SessionStore` a session calls: it is
    attached at creation, refreshed before each handled call and saved after a change. A
    store sees the session through its saved state (:class:`SavedState`)."""

    def attach(self, session: Any) -> None: ...
    def refresh(self, session: Any) -> None: ...
    async def arefresh(self, session: Any) -> None: ...
    def save(self, session: Any) -> bool: ...
    async def asave(self, session: Any) -> bool: ...


class SavedState:
    """The persistence half of a session, mixed into ``Session``."""

    # set by Session.__init__
    id: str
    reveals: RevealSet
    searches: SearchCounter

    if TYPE_CHECKING:  # defined on Session
        def _sync(self) -> None: ...
        def _reveal(self, *names: str) -> tuple[str, ...]: ...
        def _mark_loaded(self, *names: str) -> bool: ...

    def state(self) -> dict[str, Any]:
        """What a shared store must keep to rebuild this session elsewhere (small, JSON)."""
        return {"id": self.id, **self.reveals.state(), "searches": dict(self.searches.counts)}

    def restore(self, state: dict[str, Any]) -> Self:
        """Add what ``state`` holds to this session (revealed and loaded tools, recency,
        versions of tools still listed, search counters)."""
        self._sync()
        self._reveal(*state.get("revealed", ()))
        self._mark_loaded(*state.get("loaded", ()))
        for name in state.get("recency", ()):
            self.reveals.touch(name)
        self.reveals.versions.update({k: v for k, v in state.get("versions", {}).items() if k in self.reveals.versions})
        self.searches.update(state.get("searches", {}))
        return self

    def adopt(self, state: dict[str, Any]) -> Self:
        """Become ``state`` (a shared store's merge of this session with other workers'):
        tools it no longer holds leave the list, new ones join at its end, so the tools
        that stay keep their place and bytes."""
        self._sync()
        keep = set(state.get("revealed", ()))
        for name in [n for n in self.reveals.revealed if n not in keep]:
            self.reveals.drop(name)
        return self.restore(state)
