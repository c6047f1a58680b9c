"""An MCP session belongs to the principal that opened it, at the transport too.

toolscout's own :class:`~toolscout.session.Session` is already per principal, but the SDK's
streamable HTTP transport session is shared by whoever names its ``Mcp-Session-Id``: a
caller with their own valid token could open a GET stream on someone else's id and receive
their notifications, or ``DELETE`` it and end their session. The session id is a handle,
not a credential.

:class:`SessionOwners` sits between the identity guard and the SDK's session manager. When
a request without a session id is answered with a new one, it records the caller
(:data:`~toolscout.access.principal.PRINCIPAL_KEY`) as that session's owner, here and, with a
shared session store, in the store beside the session (so every replica checks the same
owner). A request naming a session id it cannot show to be the caller's (another
principal's, or one whose owner nobody recorded) goes on with a fresh id nobody holds: the
SDK answers it exactly as it answers any unknown session (404 "Session not found"), so the
reply says nothing about whether the session exists.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from ..access.principal import principal_of
from ..errors import SessionStoreUnavailable

__all__ = ["SessionOwners"]

log = logging.getLogger("toolscout.mcp")

_SESSION_HEADER = b"mcp-session-id"
_REMEMBERED = 100_000
"""Owners kept in this process (least recently used out). A forgotten owner makes its
session unknown here (the client opens a new one), never open to anyone."""

Send = Callable[[dict[str, Any]], Awaitable[None]]
App = Callable[..., Awaitable[None]]


class SessionOwners:
    """ASGI wrapper: each MCP session id answers only the principal that opened it.

    ``store``: the shared session store (:class:`~toolscout.sessions.redis.RedisSessionStore`)
    when replicas share sessions; it keeps each session's owner next to its state."""

    def __init__(self, app: App, *, store: Any = None) -> None:
        self.app = app
        self.store = store
        self._owners: OrderedDict[str, str] = OrderedDict()

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Send) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        caller = principal_of(scope).id
        sid = _header(scope, _SESSION_HEADER)
        if sid is None:  # may open a session: it becomes the caller's
            await self.app(scope, receive, self._recording(send, caller))
            return
        try:
            owner = await self.owner(sid)
        except SessionStoreUnavailable as exc:
            await _refuse(send, 503, exc.code, f"{exc.message}. Retry in a moment.")
            return
        if owner != caller:
            if owner is not None:
                log.warning("session %s named by a principal that did not open it: answered as unknown", sid[:8])
            scope = _with_session(scope, uuid.uuid4().hex)  # an id nobody holds: the SDK's own 404
        elif scope.get("method") == "DELETE":
            send = self._forgetting(send, sid)
        await self.app(scope, receive, send)

    async def owner(self, sid: str) -> str | None:
        """Who opened session ``sid`` (``None``: nobody this replica or the store knows of).

        Known here, it is written to the store again (kept if there): a store that restarted
        empty gets the owner back with the session's state, so the session can still move to
        another replica (one round trip, beside the session's own refresh)."""
        found = self._owners.get(sid)
        if found is not None:
            self._owners.move_to_end(sid)
            if self.store is not None:
                try:
                    await self.store.aown(sid, found)
                except SessionStoreUnavailable as exc:  # served here from this replica's copy
                    log.debug("session %s: owner not stored: %s", sid[:8], exc)
            return found
        if self.store is None:
            return None
        found = await self.store.aowner(sid)
        if found is not None:
            self._remember(sid, found)
        return found

    def _remember(self, sid: str, owner: str) -> None:
        self._owners[sid] = owner
        self._owners.move_to_end(sid)
        while len(self._owners) > _REMEMBERED:
            self._owners.popitem(last=False)

    def _recording(self, send: Send, caller: str) -> Send:
        """Record the caller as the owner of the session this response opens, before the
        client learns its id (so no request can name it first)."""

        async def wrapped(message: dict[str, Any]) -> None:
            if message.get("type") == "http.response.start" and int(message.get("status", 500)) < 300:
                sid = next((v.decode("latin-1") for k, v in message.get("headers", ()) if k.lower() == _SESSION_HEADER), None)
                if sid is not None:
                    self._remember(sid, caller)
                    if self.store is not None:
                        try:
                            await self.store.aown(sid, caller)
                        except SessionStoreUnavailable as exc:  # this replica still knows; others answer unknown
                            log.warning("session %s: owner not stored: %s", sid[:8], exc)
            await send(message)

        return wrapped

    def _forgetting(self, send: Send, sid: str) -> Send:
        """Forget the owner once the SDK accepted the owner's ``DELETE``."""

        async def wrapped(message: dict[str, Any]) -> None:
            if message.get("type") == "http.response.start" and int(message.get("status", 500)) < 300:
                self._owners.pop(sid, None)
            await send(message)

        return wrapped


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


def _with_session(scope: dict[str, Any], sid: str) -> dict[str, Any]:
    headers = [(k, v) for k, v in scope.get("headers", ()) if k.lower() != _SESSION_HEADER]
    headers.append((_SESSION_HEADER, sid.encode("latin-1")))
    return {**scope, "headers": headers}


async def _refuse(send: Send, status: int, code: str, message: str) -> None:
    """A JSON-RPC error body (no id), as the SDK answers transport-level refusals."""
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": f"{code}: {message}"}})
    headers = [(b"content-type", b"application/json"), (b"retry-after", b"1")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body.encode()})
