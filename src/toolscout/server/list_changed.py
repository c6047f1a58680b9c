"""``notifications/tools/list_changed``: telling clients their tool list is different.

Two moments: a ``find_tools`` that revealed tools tells its own caller on the request's
stream (reaches HTTP clients without a standalone GET stream; on stdio it is the same
pipe), and a catalog change tells each stateful session whose list it alters (always-load
tools came or went, or a tool that session revealed changed). Apart from the handlers
because it follows the catalog, not a request.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from .mcp_sessions import SessionRouter

__all__ = ["ListChanged", "notify_caller"]

log = logging.getLogger("toolscout.mcp")


class ListChanged:
    """Sends ``list_changed`` to the stateful connections a catalog change concerns."""

    def __init__(self, router: SessionRouter, pinned: Callable[[], frozenset[str]]) -> None:
        self.router = router
        self.pinned = pinned
        self._tasks: set[asyncio.Task[Any]] = set()

    def on_change(self, change: Any, pinned_before: frozenset[str]) -> None:
        """Notify the sessions whose tools/list ``change`` alters (everyone when the
        always-load set moved)."""
        touched = set(change.added) | set(change.removed)
        if not touched or not self.router.peers:
            return
        everyone = pinned_before != self.pinned()
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        for key, ref in list(self.router.peers.items()):
            peer = ref()
            session = self.router.live(key)
            if peer is None or session is None:  # gone, or a stateless connection
                continue
            if everyone or session.shows_any(touched):
                task = loop.create_task(_notify_peer(peer))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)


async def notify_caller(ctx: Any) -> None:
    """Announce the new tools on the request's own stream."""
    import mcp_types as types

    try:
        await ctx.session.send_notification(types.ToolListChangedNotification(), related_request_id=ctx.request_id)
    except Exception as exc:  # a client that cannot take notifications still gets its result
        log.debug("list_changed not delivered: %s", exc)


async def _notify_peer(peer: Any) -> None:
    try:
        await peer.send_tool_list_changed()
    except Exception as exc:  # the session is gone, or has no standalone stream
        log.debug("list_changed not delivered: %s", exc)
