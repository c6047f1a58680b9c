"""Hostile HTTP upstreams as ASGI apps, to serve on loopback with ``mcp_fixtures.asgi.serving``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

App = Callable[..., Any]


def status_app(status: int) -> App:
    """Answers every request with ``status`` and a plain-text body (a proxy refusing us)."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        await send(
            {
                "type": "http.response.start",
                "status": status,
                "headers": [(b"content-type", b"text/plain")],
            }
        )
        await send({"type": "http.response.body", "body": b"nope"})

    return app


def failing_calls(app: App, status: int) -> App:
    """``app``, except that every ``tools/call`` POST gets ``status`` (an expired token, a
    crashed backend behind a healthy front)."""

    async def wrapped(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if b'"tools/call"' in body:
            await send(
                {
                    "type": "http.response.start",
                    "status": status,
                    "headers": [(b"content-type", b"text/plain")],
                }
            )
            await send({"type": "http.response.body", "body": b"boom"})
            return
        replayed = False

        async def replay() -> dict[str, Any]:
            nonlocal replayed
            if replayed:
                return await receive()
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}

        await app(scope, replay, send)

    return wrapped
