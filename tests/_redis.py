"""A real, throwaway redis-server on a free loopback port (never a mock or an imitation).

``redis_server`` is session-scoped and shared; tests that stop and restart Redis start
their own :class:`RedisServer`. Without the ``redis-server`` binary (``scripts/test``
installs Debian's package) the tests that need it skip, saying why.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
from collections.abc import Iterator

import pytest

from _procs import free_port
from _wait import wait_until

BINARY = shutil.which("redis-server")
SKIP_REASON = "redis-server is not installed (bash .ci/setup-services.sh installs it)"




class RedisServer:
    """One redis-server process; :meth:`stop` and :meth:`start` keep the same port."""

    def __init__(self, port: int | None = None) -> None:
        if BINARY is None:
            pytest.skip(SKIP_REASON)
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 10.0) -> RedisServer:
        assert BINARY is not None
        args = [BINARY, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
        self.process = subprocess.Popen(
            [*args, "--daemonize", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        process = self.process

        def answering() -> bool:  # readiness: it answers PING
            if process.poll() is not None:
                raise RuntimeError(f"redis-server exited with {process.returncode} on port {self.port}")
            return self.ping()

        if not wait_until(answering, timeout, interval=0.01):
            raise TimeoutError(f"redis-server did not answer on port {self.port} within {timeout} s")
        return self

    def ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)
        self.process = None

    def flush(self) -> None:
        with socket.create_connection(("127.0.0.1", self.port), timeout=2) as s:
            s.sendall(b"FLUSHALL\r\n")
            assert s.recv(16).startswith(b"+OK")


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    """A redis-server for the whole test session, killed at its end."""
    server = RedisServer().start()
    try:
        yield server
    finally:
        server.stop()
