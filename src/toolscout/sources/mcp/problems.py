"""How an upstream's failure reads: a reason that says what happened and what to do next.

The SDK reports every HTTP error status with the same bare text and wraps transport
failures in exception groups; these turn both into reasons for status pages and errors.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from http import HTTPStatus

__all__ = [
    "BACKOFF_JITTER", "BACKOFF_MAX", "BACKOFF_START", "RETRY_WINDOW_MAX",
    "backoff_delay", "describe", "hint_for", "http_problem",
]

BACKOFF_START = 0.5
BACKOFF_MAX = 30.0
BACKOFF_JITTER = 0.2
"""Delays are scaled by a random factor in [0.8, 1.2]: servers that failed together (a
network blip, a laptop waking up) do not all retry in the same instant."""
RETRY_WINDOW_MAX = 120.0
"""The longest start window a background retry gives: a server that needs 8 s to start
with ``connectTimeout: 2`` comes up on its third retry instead of never."""


def backoff_delay(failures: int, rand: Callable[[], float] = random.random) -> float:
    """Seconds before the retry that follows ``failures`` consecutive failures (1-based)."""
    base = min(BACKOFF_START * 2 ** min(max(failures, 1) - 1, 16), BACKOFF_MAX)
    return base * (1 - BACKOFF_JITTER + 2 * BACKOFF_JITTER * rand())


def http_problem(status: int) -> str:
    """An upstream's HTTP error status as a reason that says what to do about it."""
    try:
        head = f"HTTP {status} {HTTPStatus(status).phrase}"
    except ValueError:
        head = f"HTTP {status}"
    if status in (401, 403):
        return f"{head}: the server refused the credentials; check this server's headers (or env) in the config"
    if status >= 500:
        return f"{head}: the upstream server failed; retry later or check its logs"
    return f"{head} from the server"


def hint_for(reason: str, default: str | None) -> str | None:
    """What to do about ``reason`` when it names a credentials or server failure, else ``default``."""
    if reason.startswith(("HTTP 401", "HTTP 403")):
        return "Fix the credentials in this server's config entry ('headers' or 'env'), then restart the gateway."
    if reason.startswith("HTTP 5"):
        return "The upstream server failed; retry later or check its logs."
    return default


def describe(exc: BaseException) -> str:
    """``exc`` as one line (an exception group as its first three causes)."""
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(describe(e) for e in exc.exceptions[:3])
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
