"""``serve``'s HTTP protocol joins the writes of one event-loop turn (issue 36,
:mod:`toolscout.server.coalesced_http`): answers are unchanged, keep-alive and streamed
responses work, and a start and its body written back to back leave the process as one write."""

from __future__ import annotations

import asyncio
from typing import Any

import httpx
import uvicorn

from toolscout.server.coalesced_http import (  # reach-in: the transport wrapper, fed a socket double to see its writes
    _Coalescing,
    coalesced_h11,
)


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    if scope["path"] == "/stream":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/event-stream")]})
        for i in range(3):
            await send({"type": "http.response.body", "body": f"data: {i}\n\n".encode(), "more_body": True})
            await asyncio.sleep(0)  # each part in its own loop turn
        await send({"type": "http.response.body", "body": b""})
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"application/json")]})
    await send({"type": "http.response.body", "body": b'{"ok":true}'})


async def test_answers_keep_alive_and_streams_are_unchanged() -> None:
    server = uvicorn.Server(uvicorn.Config(_app, host="127.0.0.1", port=0, log_level="warning", http=coalesced_h11()))
    task = asyncio.ensure_future(server.serve())
    try:
        while not server.started:  # readiness, not timing
            assert not task.done()
            await asyncio.sleep(0.01)
        url = f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}"
        ports = set()
        async with httpx.AsyncClient() as http:
            for _ in range(3):
                response = await http.get(f"{url}/json")
                assert response.json() == {"ok": True}
                ports.add(response.extensions["network_stream"].get_extra_info("client_addr")[1])
            async with http.stream("GET", f"{url}/stream") as streamed:
                body = b"".join([part async for part in streamed.aiter_bytes()])
        assert body == b"data: 0\n\ndata: 1\n\ndata: 2\n\n"
        assert len(ports) == 1  # one kept-alive connection
    finally:
        server.should_exit = True
        await task


class _Socket:
    """What the OS socket would receive: one entry per write the transport makes."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True


async def test_writes_of_one_turn_leave_as_one_and_close_sends_what_is_held() -> None:
    inner = _Socket()
    joined = _Coalescing(inner, asyncio.get_running_loop())
    joined.write(b"HTTP/1.1 200 OK\r\n\r\n")
    joined.write(b'{"ok":true}')
    assert inner.writes == []  # held until this turn ends
    await asyncio.sleep(0)
    assert inner.writes == [b'HTTP/1.1 200 OK\r\n\r\n{"ok":true}']
    joined.write(b"last words")
    joined.close()
    assert inner.writes[-1] == b"last words" and inner.closed
