"""Stopping the server processes a test started: politely first, then for sure."""

from __future__ import annotations

import contextlib
import subprocess


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
