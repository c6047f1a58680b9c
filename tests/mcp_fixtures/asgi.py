"""Run an ASGI app with uvicorn on a free loopback port inside the test's event loop."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import uvicorn


@asynccontextmanager
async def serving(app: Any, port: int = 0) -> AsyncIterator[str]:
    """Yield the base URL (``http://127.0.0.1:PORT``) while ``app`` serves (``port`` 0: any free one)."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    task = asyncio.ensure_future(server.serve())
    while not server.started:  # readiness, not timing: uvicorn sets this once bound
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    port = server.servers[0].sockets[0].getsockname()[1]
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        await task


async def read_body(receive: Any) -> bytes:
    """The whole request body an ASGI app receives (every ``http.request`` part)."""
    body = b""
    while True:
        message = await receive()
        body += message.get("body", b"")
        if not message.get("more_body"):
            return body


class ToolCalls:
    """ASGI middleware in front of an upstream app: every ``tools/call`` POST it receives, in
    order, as (the client's port, the call's JSON-RPC ``params``); the request passes through
    unchanged."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.seen: list[tuple[int, dict[str, Any]]] = []

    @property
    def ports(self) -> list[int]:
        return [port for port, _ in self.seen]

    @property
    def params(self) -> list[dict[str, Any]]:
        return [params for _, params in self.seen]

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        body = b""

        async def reading() -> dict[str, Any]:
            nonlocal body
            message = await receive()
            body += message.get("body", b"")
            if message["type"] == "http.request" and not message.get("more_body"):
                try:
                    data = json.loads(body)
                except ValueError:
                    data = None
                if isinstance(data, dict) and data.get("method") == "tools/call":
                    self.seen.append((scope["client"][1], data.get("params") or {}))
            return message  # type: ignore[no-any-return]

        await self.app(scope, reading, send)
