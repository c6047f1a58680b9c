"""Bounded waits for a condition the code under test makes true: poll it, return as soon as
it holds, give up after ``timeout``. A bound, never a delay: a fast machine waits for nothing
and a slow one gets the whole budget (no test depends on machine speed)."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable

__all__ = ["until", "wait_until"]

INTERVAL = 0.02  # s between polls: short against every timeout used here


def wait_until(predicate: Callable[[], object], timeout: float = 10.0, *, interval: float = INTERVAL) -> bool:
    """Whether ``predicate()`` became true within ``timeout`` seconds (checked at least once).
    For threads and processes; an assertion inside ``predicate`` fails the wait at once."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)  # the next poll of a bounded wait
    return True


async def until(
    predicate: Callable[[], object | Awaitable[object]], timeout: float = 10.0, *, interval: float = INTERVAL
) -> bool:
    """:func:`wait_until` for the event loop: polls without blocking it, so the work it waits
    for (a notification, a reconnect) runs meanwhile. ``predicate`` may be a coroutine function."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while True:
        held = predicate()
        if inspect.isawaitable(held):
            held = await held
        if held:
            return True
        if loop.time() >= deadline:
            return False
        await asyncio.sleep(interval)  # the next poll of a bounded wait
