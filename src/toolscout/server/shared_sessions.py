"""Stateful MCP sessions that any gateway replica can serve (``serve --sessions redis://``).

The SDK's streamable HTTP session manager keeps its sessions in its own process: a request
carrying an ``Mcp-Session-Id`` it did not create (one made by another replica, or by this
one before a restart) is answered 404 "Session not found", and the client must initialize
a new session, its reveals gone. A load balancer would need affinity on that header, and a
replica that dies would still lose every session it held.

With a shared store this replica accepts such an id instead, when the store knows it: it
opens the session on the spot, already initialized (the protocol version from the
request's ``MCP-Protocol-Version`` header), and the session's state comes from the store.
So a load balancer needs no affinity, and a replica can die or be redeployed mid-session.
A session's id is written to the store when it is created (at ``initialize``), so even a
session that has not searched yet moves; a ``DELETE`` removes it from the store.

This reaches into the SDK's session manager (``mcp`` 2.x; ``tests/storage/test_sessions_redis.py``
pins the behaviour). On an SDK without those parts, :func:`accept_shared_sessions` logs a
warning and leaves the manager as it is: the load balancer then needs affinity on
``Mcp-Session-Id``.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ..errors import SessionStoreUnavailable

__all__ = ["accept_shared_sessions"]

log = logging.getLogger("toolscout.mcp")

_NEEDED = ("_handle_stateful_request", "_server_instances", "_session_creation_lock", "_discard_session")
_SESSION_HEADER = b"mcp-session-id"
_VERSION_HEADER = b"mcp-protocol-version"

Send = Callable[[dict[str, Any]], Awaitable[None]]


def accept_shared_sessions(manager: Any, store: Any) -> bool:
    """Let ``manager`` (the SDK's ``StreamableHTTPSessionManager``) serve sessions other
    replicas created, as long as ``store`` (a :class:`RedisSessionStore`) knows them."""
    if any(not hasattr(manager, name) for name in _NEEDED):
        log.warning("this MCP SDK's session manager cannot accept sessions from other replicas: route by Mcp-Session-Id")
        return False
    original = manager._handle_stateful_request

    async def handle(scope: dict[str, Any], receive: Any, send: Send) -> None:
        sid = _header(scope, _SESSION_HEADER)
        if sid is None:  # a new session: make its id known to every replica
            await original(scope, receive, _marking(send, store))
            return
        if sid not in manager._server_instances:
            try:
                known = await store.aexists(sid)
            except SessionStoreUnavailable as exc:
                await _refuse(send, 503, exc.code, f"{exc.message}. Retry in a moment.")
                return
            if known and not await _open(manager, sid, _header(scope, _VERSION_HEADER)):
                await _refuse(send, 503, "too_many_sessions", "Too many open sessions on this replica.")
                return
        if scope.get("method") == "DELETE":  # the client ends its session: everywhere
            send = _dropping(send, store, sid)
        await original(scope, receive, send)

    manager._handle_stateful_request = handle
    return True


async def _open(manager: Any, sid: str, version: str | None) -> bool:
    """Open session ``sid`` here, ready to serve (no handshake: the client had one)."""
    import anyio
    from mcp.server.streamable_http import StreamableHTTPServerTransport
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    async with manager._session_creation_lock:
        if sid in manager._server_instances:
            return True
        limit = getattr(manager, "max_sessions", None)
        if limit is not None and len(manager._server_instances) >= limit:
            return False
        try:
            transport = StreamableHTTPServerTransport(
                mcp_session_id=sid,
                is_json_response_enabled=manager.json_response,
                event_store=manager.event_store,
                security_settings=manager.security_settings,
                retry_interval=manager.retry_interval,
                idle_timeout=manager.session_idle_timeout,
            )
        except ValueError:  # not an id any replica made
            return True  # the SDK answers 404 as usual
        hint = version if version in HANDSHAKE_PROTOCOL_VERSIONS else None
        manager._server_instances[sid] = transport

        async def serve(*, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
            await _serve(manager, transport, hint, task_status)

        await manager._task_group.start(serve)
    log.info("session %s continued on this replica", sid[:8])
    return True


async def _serve(manager: Any, transport: Any, version: str | None, task_status: Any) -> None:
    """As the SDK serves a session it created, on a connection born initialized."""
    import anyio
    from mcp.server.connection import Connection
    from mcp.server.runner import serve_connection
    from mcp.shared.jsonrpc_dispatcher import JSONRPCDispatcher

    sid = transport.mcp_session_id
    async with transport.connect() as (read, write):
        task_status.started()
        try:
            idle = transport.idle_scope if transport.idle_scope is not None else anyio.CancelScope()
            with idle:
                dispatcher: Any = JSONRPCDispatcher(read, write, inline_methods=frozenset({"initialize"}))
                connection = Connection.for_loop(dispatcher, session_id=sid, protocol_version_hint=version)
                connection.initialized.set()
                await serve_connection(
                    manager.app, dispatcher, connection=connection, lifespan_state=manager._lifespan_state
                )
        except Exception:
            log.exception("continued session %s crashed", sid[:8])
        finally:
            await manager._discard_session(sid, transport)


def _header(scope: dict[str, Any], name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key == name:
            return value.decode("latin-1")
    return None


def _marking(send: Send, store: Any) -> Send:
    """Write a new session's id to the store before its client can use it elsewhere."""

    async def wrapped(message: dict[str, Any]) -> None:
        if message.get("type") == "http.response.start" and message.get("status") == 200:
            sid = next((v.decode("latin-1") for k, v in message.get("headers", ()) if k.lower() == _SESSION_HEADER), None)
            if sid is not None:
                try:
                    await store.amark(sid)
                except SessionStoreUnavailable as exc:  # served here; its first save stores it
                    log.debug("session %s not marked: %s", sid[:8], exc)
        await send(message)

    return wrapped


def _dropping(send: Send, store: Any, sid: str) -> Send:
    """Remove the session from the store once the SDK accepted its DELETE, before the
    client hears so (then no replica can take it over again)."""

    async def wrapped(message: dict[str, Any]) -> None:
        if message.get("type") == "http.response.start" and int(message.get("status", 500)) < 300:
            with contextlib.suppress(SessionStoreUnavailable):  # else its TTL ends it
                await store.adrop(sid)
        await send(message)

    return wrapped


async def _refuse(send: Send, status: int, code: str, message: str) -> None:
    """A JSON-RPC error body (no id), as the SDK answers transport-level refusals."""
    body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": -32000, "message": f"{code}: {message}"}})
    headers = [(b"content-type", b"application/json"), (b"retry-after", b"1")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body.encode()})
