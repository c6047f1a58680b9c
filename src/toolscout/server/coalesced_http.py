"""uvicorn's HTTP/1.1 protocol with each event-loop turn's writes sent as one.

uvicorn writes a response's start (status line, headers) and each body part to the socket as
it gets them, and the socket has ``TCP_NODELAY``: a JSON answer left as two segments, so the
client's process woke for the headers and again for the body (and on a busy machine each
wake-up can preempt the sender). Here the writes made while one callback of the event loop
runs are joined and sent when it yields (``call_soon``: no delay, nothing waits on a timer),
so a start and its body sent back to back leave in one ``send``. Closing sends what is held
first.
"""

from __future__ import annotations

import asyncio
from typing import Any

__all__ = ["coalesced_h11"]


def coalesced_h11() -> type[asyncio.Protocol]:
    """The protocol class for ``uvicorn.Config(http=...)`` (uvicorn is imported here, by the
    HTTP transport only)."""
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class CoalescedH11Protocol(H11Protocol):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(_Coalescing(transport, asyncio.get_running_loop()))  # type: ignore[arg-type]

    return CoalescedH11Protocol


class _Coalescing:
    """A transport whose writes of one loop turn go out in one ``write``."""

    __slots__ = ("_inner", "_loop", "_parts")

    def __init__(self, inner: Any, loop: asyncio.AbstractEventLoop) -> None:
        self._inner = inner
        self._loop = loop
        self._parts: list[bytes] = []

    def write(self, data: bytes) -> None:
        if not data:
            return
        if not self._parts:
            self._loop.call_soon(self.flush)
        self._parts.append(bytes(data))

    def flush(self) -> None:
        if not self._parts:
            return
        parts, self._parts = self._parts, []
        if not self._inner.is_closing():
            self._inner.write(parts[0] if len(parts) == 1 else b"".join(parts))

    def close(self) -> None:
        self.flush()
        self._inner.close()

    def __getattr__(self, name: str) -> Any:  # everything else is the real transport's
        return getattr(self._inner, name)
