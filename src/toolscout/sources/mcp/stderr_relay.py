"""An upstream's stderr into ours, line by line, with that server's secrets masked."""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import sys
from collections.abc import Callable

from .config import ServerConfig

__all__ = ["STDERR_LINE_MAX", "StderrRelay", "pump_stderr", "write_stderr"]

STDERR_LINE_MAX = 16_384
"""Longer stderr lines are passed on in pieces, so a server cannot make us buffer without bound."""


class StderrRelay:
    """An upstream's stderr into ours, line by line, prefixed ``[server] ``, with every
    configured secret of that server masked: servers print their env and config on errors.

    A line longer than ``max_line`` goes out in pieces; the last ``len(longest secret) - 1``
    characters wait for the next piece, so a secret cut at a piece boundary is still masked.
    """

    def __init__(
        self, name: str, config: ServerConfig, write: Callable[[str], None], *, max_line: int = STDERR_LINE_MAX
    ) -> None:
        self._prefix = f"[{name}] "
        self._secrets = config.secrets()
        self._keep = max((len(s) for s in self._secrets), default=1) - 1
        self._max = max(max_line, self._keep + 1)
        self._write = write
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")
        self._buffer = ""

    def _redact(self, text: str) -> str:
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def _emit(self, text: str) -> None:
        self._write(f"{self._prefix}{text}\n")

    def feed(self, data: bytes) -> None:
        *lines, self._buffer = (self._buffer + self._decoder.decode(data)).split("\n")
        for line in lines:
            self._emit(self._redact(line.rstrip("\r")))
        if len(self._buffer) > self._max:
            text = self._redact(self._buffer)
            cut = len(text) - self._keep
            self._emit(text[:cut])
            self._buffer = text[cut:]

    def close(self) -> None:
        rest = self._buffer + self._decoder.decode(b"", final=True)
        self._buffer = ""
        if rest:
            self._emit(self._redact(rest.rstrip("\r")))


def write_stderr(text: str) -> None:
    """Our stderr, written so that a closed or broken one never stops a relay."""
    with contextlib.suppress(Exception):  # a closed or broken stderr must not stop the relay
        sys.stderr.write(text)
        sys.stderr.flush()



async def pump_stderr(fd: int, relay: StderrRelay) -> None:
    """Pump one process's stderr pipe through ``relay`` until it closes."""
    pipe = os.fdopen(fd, "rb", buffering=0)
    reader = asyncio.StreamReader()
    try:
        loop = asyncio.get_running_loop()
        transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    except BaseException:
        pipe.close()
        raise
    try:
        while chunk := await reader.read(65536):
            relay.feed(chunk)
    finally:
        relay.close()
        transport.close()
