"""A session's call entries: the context its calls carry, and :meth:`CallEntries.ahandle`
/ :meth:`CallEntries.handle` with the session store around them.

Kept apart from :class:`~toolscout.session.Session` so the session's module holds what is
one conversation's (reveal set, deferral) and this one how a call gets in and out: the
context built from the edge's, the store refreshed before and saved after, the outcome in
the names the model sees. Routing itself is :func:`~toolscout.sessions.dispatch.route`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .._sync import run_sync
from ..context import Allow, CallContext
from ..errors import ToolscoutError
from ..request import shown
from .dispatch import ToolOutcome, in_wire_names, route
from .render import both
from .saved_state import StoreLink

if TYPE_CHECKING:
    from ..access.approval import Approve

__all__ = ["CallEntries"]


class CallEntries:
    """The call-handling half of a session, mixed into ``Session``."""

    # set by Session.__init__
    id: str
    allow: Allow | None
    approve: Approve | None
    store: StoreLink | None
    format: str | None
    _ctx: tuple[Any, Any, CallContext] | None

    if TYPE_CHECKING:  # defined on the session's other halves
        def wire(self, name: str) -> str: ...

    def context(self, edge: CallContext | None = None) -> CallContext:
        """The context this session's calls carry: what the surface knows (``edge``: the
        principal, its credentials, a progress reporter, the surface's approver) plus this
        session's id, its ``allow`` (both rules apply when the edge has one too) and its
        approver (ahead of the surface's)."""
        if edge is None:
            cached = self._ctx
            if cached is not None and cached[0] is self.allow and cached[1] is self.approve:
                return cached[2]
            ctx = CallContext(session_id=self.id, allow=self.allow, approve=self.approve)
            self._ctx = (self.allow, self.approve, ctx)
            return ctx
        allow = self.allow if edge.allow is None else edge.allow if self.allow is None else both(self.allow, edge.allow)
        return edge.replace(session_id=self.id, allow=allow, approve=self.approve or edge.approve)

    async def ahandle(self, name: str, arguments: Any = None, *, context: CallContext | None = None) -> ToolOutcome:
        """Handle any tool call the model made. Never raises for bad input. ``context``:
        what the surface knows about the caller (see :meth:`context`).

        With a ``store``: refreshed first (an unreachable store answers
        ``session_store_unavailable`` and nothing runs, so a retry is safe), saved after
        when the state changed (a failed save never turns a result that ran into an error:
        the change is kept here and written with the next save).
        """
        if self.store is None:
            return await self._ahandle(name, arguments, context)
        try:
            await self.store.arefresh(self)
        except ToolscoutError as exc:
            return ToolOutcome.failure(name if isinstance(name, str) else shown(name), exc)
        outcome = await self._ahandle(name, arguments, context)
        await self.store.asave(self)
        return outcome

    async def _ahandle(self, name: str, arguments: Any, edge: CallContext | None) -> ToolOutcome:
        return in_wire_names(await route(self, name, arguments, self.context(edge)), self.wire, self.format)

    def handle(self, name: str, arguments: Any = None, *, context: CallContext | None = None) -> ToolOutcome:
        """Synchronous :meth:`ahandle` (usable inside or outside a running event loop)."""
        if self.store is None:
            return run_sync(self.ahandle(name, arguments, context=context))
        try:
            self.store.refresh(self)
        except ToolscoutError as exc:
            return ToolOutcome.failure(name if isinstance(name, str) else shown(name), exc)
        outcome = run_sync(self._ahandle(name, arguments, context))
        self.store.save(self)
        return outcome
