"""The shared store's change feed: one LISTEN connection, its notifications as
:class:`~toolscout.storage.base.SourceChange` events.

Kept apart from :mod:`.postgres` (the store that writes and notifies) because reading the
channel is a job of its own: a long-lived connection per replica, and payloads that may be
malformed (logged and skipped, never raised).
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import StoreUnavailable
from .base import SourceChange

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresFeed", "change_from_payload"]

log = logging.getLogger("toolscout.scaleout.replica")


class PostgresFeed:
    """The change events of a :class:`~toolscout.storage.postgres.PostgresStore` (one LISTEN connection)."""

    def __init__(
        self,
        conn: psycopg.Connection[Any],
        error: type[BaseException],
        unreachable: Callable[[str, BaseException], StoreUnavailable],
    ) -> None:
        self._conn = conn
        self._error = error  # psycopg's base error: the connection is lost
        self._unreachable = unreachable  # the store's own wording of an outage

    def poll(self, timeout: float) -> list[SourceChange]:
        """The notifications that arrive within ``timeout`` s (at most one wait); malformed
        payloads are logged and skipped. A lost connection raises StoreUnavailable."""
        try:
            notes = list(self._conn.notifies(timeout=timeout, stop_after=1))
        except self._error as exc:
            raise self._unreachable("listen", exc) from exc
        return [change for change in map(change_from_payload, (n.payload for n in notes)) if change is not None]

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._conn.close()


def change_from_payload(payload: str) -> SourceChange | None:
    """A notification's payload (written by ``PostgresStore._notify``) as a change event."""
    try:
        data = json.loads(payload)
        base = data.get("base")
        members = data.get("members")
        return SourceChange(
            str(data["source"]),
            int(data["version"]),
            base if isinstance(base, int) else None,
            members if isinstance(members, bool) else None,
        )
    except (ValueError, KeyError, TypeError, AttributeError):
        log.warning("shared catalog: ignoring a malformed notification %r", payload[:200])
        return None
