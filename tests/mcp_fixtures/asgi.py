"""Run an ASGI app with uvicorn on a free loopback port inside the test's event loop."""

from __future__ import annotations

import asyncio
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
