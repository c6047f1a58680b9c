"""Run a coroutine from synchronous code, inside or outside a running event loop.

Sync entry points (``Gateway.call``, ``Session.handle``, the adapters' ``run``) share this:
one reusable event loop per thread, because starting a loop per call (``asyncio.run``)
costs more than handling the call itself.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

_T = TypeVar("_T")
_LOCAL = threading.local()
_LOOPS: list[asyncio.AbstractEventLoop] = []


def _thread_loop() -> asyncio.AbstractEventLoop:
    loop = getattr(_LOCAL, "loop", None)
    if loop is None or loop.is_closed():
        loop = asyncio.new_event_loop()
        _LOCAL.loop = loop
        _LOOPS.append(loop)
    return loop


@atexit.register
def _close_loops() -> None:
    for loop in _LOOPS:
        if not loop.is_closed() and not loop.is_running():
            loop.close()


def run_sync(coro: Coroutine[Any, Any, _T]) -> _T:
    """Run ``coro`` to completion; from inside a running loop it runs on a helper thread."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return _thread_loop().run_until_complete(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def run_inline(coro: Coroutine[Any, Any, _T]) -> _T:
    """Run ``coro`` here, with no event loop, when it never suspends: every await in it is
    a synchronous call in disguise. One async body then serves a sync wrapper and an async
    one (``RedisSessionStore.save``/``asave``) instead of the same logic written twice."""
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coro.close()
    raise RuntimeError("run_inline: the coroutine suspended (it awaited real I/O)")
