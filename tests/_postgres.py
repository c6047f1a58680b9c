"""A real, throwaway PostgreSQL server for the tests: one per test session, one database per test.

The server comes from the distribution's binaries (``.ci/setup-services.sh`` installs them),
runs as the ``postgres`` user when the tests run as root (PostgreSQL refuses root), listens
on a free loopback port, and is stopped and deleted when the session ends. Tests that need
it are skipped, with the reason, only when the binaries are absent.

tests/conftest.py registers this module's fixtures for every folder (``postgres`` for the
session, ``pg_dsn`` per test); the server itself is a module singleton every test shares.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import shutil
import subprocess
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from _procs import free_port

START_TIMEOUT = 30.0


def _bindir() -> Path | None:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None




class PostgresServer:
    """One cluster in a temporary directory; :meth:`stop` and :meth:`start` keep its data."""

    def __init__(self, bindir: Path) -> None:
        self.bindir = bindir
        self.root = Path(tempfile.mkdtemp(prefix="toolscout-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self.port = free_port()
        self._as_postgres = os.geteuid() == 0
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-A", "trust", "-U", "postgres", "--no-sync", "-E", "UTF8")
        self.running = False

    @property
    def dsn(self) -> str:
        return self.dsn_for("postgres")

    def dsn_for(self, database: str) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def _run(self, tool: str, *args: str) -> None:
        cmd = [str(self.bindir / tool), *args]
        if self._as_postgres:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=START_TIMEOUT, check=False)
        if done.returncode != 0:
            log = self.log.read_text() if self.log.exists() else ""
            raise RuntimeError(f"{tool} failed ({done.returncode}): {done.stderr.strip()}\n{log[-2000:]}")

    def start(self) -> None:
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", str(int(START_TIMEOUT)), "start")
        self.running = True

    def stop(self) -> None:
        """Fast shutdown: open connections are closed by the server, as in a real restart."""
        if self.running:
            self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")
            self.running = False

    def create_database(self) -> str:
        """A new empty database; returns its DSN."""
        import psycopg

        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.dsn_for(name)

    def destroy(self) -> None:
        with contextlib.suppress(Exception):
            self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


_SERVER: PostgresServer | None = None


def _server() -> PostgresServer:
    global _SERVER
    if _SERVER is None:
        bindir = _bindir()
        if bindir is None:
            pytest.skip("PostgreSQL binaries (initdb, pg_ctl) are not installed: run .ci/setup-services.sh")
        pytest.importorskip("psycopg", reason="toolscout[postgres] (psycopg) is not installed")
        server = PostgresServer(bindir)
        atexit.register(server.destroy)  # also after an interrupted session
        started = time.monotonic()
        server.start()
        server.startup_seconds = time.monotonic() - started  # type: ignore[attr-defined]
        _SERVER = server
    elif not _SERVER.running:
        _SERVER.start()  # a test that stopped it and failed before starting it again
    return _SERVER


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """The session's PostgreSQL server (started on first use, deleted at the end)."""
    yield _server()
    if _SERVER is not None:
        _SERVER.destroy()


@pytest.fixture
def pg_dsn(postgres: PostgresServer) -> str:
    """A fresh database on the session's server: tests never see each other's tables."""
    if not postgres.running:
        postgres.start()
    return postgres.create_database()
