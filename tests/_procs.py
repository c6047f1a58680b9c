"""Server processes a test starts: a free loopback port, readiness over HTTP (bounded), and
stopping them politely first, then for sure."""

from __future__ import annotations

import contextlib
import socket
import subprocess
from collections.abc import Callable

import httpx

from _wait import wait_until

__all__ = ["free_port", "stop", "wait_http"]


def free_port() -> int:
    """A loopback port nothing listens on (the OS picks it; closed again at once)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(
    proc: subprocess.Popen[bytes],
    url: str,
    *,
    ready: Callable[[httpx.Response], bool] = lambda response: True,
    timeout: float = 120.0,
) -> None:
    """Until ``GET url`` answers and ``ready(response)`` holds (bounded); fails at once if
    ``proc`` exits, raises TimeoutError when nothing answered in time. The bound is generous:
    a process starts in a second here, in far more on a loaded CI machine."""
    with httpx.Client() as http:

        def answered() -> bool:
            assert proc.poll() is None, f"the process serving {url} exited"
            try:
                return ready(http.get(url, timeout=1))
            except httpx.TransportError:
                return False

        if not wait_until(answered, timeout, interval=0.05):
            raise TimeoutError(f"nothing answered {url} within {timeout} s")


def stop(*procs: subprocess.Popen[bytes]) -> None:
    """Terminate each process still running, and kill any that has not exited 10 s later."""
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
