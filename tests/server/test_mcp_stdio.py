"""Hostile input over stdio gets a JSON-RPC error, never silence: nested too deep, lone
surrogates, not JSON-RPC, over the size limit (discarded without being held whole); the
next valid request still works. Driven both in-process and through ``toolscout serve``."""

from __future__ import annotations

import asyncio
import io
import json
import os
import queue
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, BinaryIO

import anyio
import pytest

from mcp_fixtures import fake
from toolscout.catalog import Catalog
from toolscout.gateway import Gateway
from toolscout.server.mcp import GatewayServer
from toolscout.server.stdio import (  # reach-in: _discard_line, the over-long line reader, fed bytes directly
    _discard_line,
    request_id,
    stdio_transport,
)

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}},
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
DEEP = b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"find_tools","arguments":{"q":' + b"[" * 300 + b"]" * 300 + b"}}}"
SURROGATE = b'{"jsonrpc":"2.0","id":"s","method":"tools/call","params":{"name":"find_tools","arguments":{"query":"\\ud800"}}}'


def line(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj).encode() + b"\n"


def find(ident: int | str, query: str = "widget") -> dict[str, Any]:
    params = {"name": "find_tools", "arguments": {"query": query}}
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": params}


def _server() -> GatewayServer:
    catalog = Catalog()
    catalog.add_function(lambda: "pong", name="widget", description="A widget.")
    return GatewayServer(Gateway(catalog))


class _Replies:
    """A stdout that parses each line the transport writes (from its worker thread)."""

    def __init__(self) -> None:
        self.queue: queue.Queue[dict[str, Any]] = queue.Queue()
        self._partial = b""

    def write(self, data: bytes) -> int:
        *lines, self._partial = (self._partial + data).split(b"\n")
        for raw in lines:
            self.queue.put(json.loads(raw))
        return len(data)

    def flush(self) -> None:
        pass


class Pipe:
    """The gateway on the stdio transport, fed through a real pipe kept open until closed."""

    def __init__(self, feed: BinaryIO, replies: _Replies) -> None:
        self.feed, self.replies = feed, replies

    async def send(self, data: bytes) -> None:
        def put() -> None:
            self.feed.write(data)
            self.feed.flush()

        await anyio.to_thread.run_sync(put)

    async def ask(self, data: bytes, ident: int | str | None) -> dict[str, Any]:
        """Send ``data``, then the next reply with ``ident`` (notifications are skipped)."""
        await self.send(data)
        while True:
            reply = await anyio.to_thread.run_sync(self.replies.queue.get, True, 60)  # a bound, not a timing
            if "method" not in reply and reply.get("id") == ident:
                return reply


@asynccontextmanager
async def gateway_pipe(server: GatewayServer | None = None, limit: int = 4096) -> AsyncIterator[Pipe]:
    served = server or _server()
    read_fd, write_fd = os.pipe()
    replies = _Replies()
    with os.fdopen(read_fd, "rb") as stdin, os.fdopen(write_fd, "wb") as feed:

        async def serve() -> None:
            async with stdio_transport(max_message_bytes=limit, stdin=stdin, stdout=replies) as (read, write):
                await served.lowlevel.run(read, write, served.lowlevel.create_initialization_options())

        async with anyio.create_task_group() as tg:
            tg.start_soon(serve)
            try:
                yield Pipe(feed, replies)
            finally:
                feed.close()  # EOF: the transport's reader returns and the server ends


async def test_malformed_lines_get_errors_and_the_next_request_works() -> None:
    async with gateway_pipe() as pipe:
        assert (await pipe.ask(line(INIT), 1))["result"]["serverInfo"]["name"] == "toolscout"
        await pipe.send(line(INITIALIZED))
        deep = await pipe.ask(DEEP + b"\n", 2)
        assert deep["error"]["code"] == -32700 and "recursion" in deep["error"]["message"]
        assert (await pipe.ask(SURROGATE + b"\n", "s"))["error"]["code"] == -32700
        big = await pipe.ask(line(find(4, "x" * 100_000)), 4)  # over the 4096-byte limit
        assert big["error"]["code"] == -32600 and "4096-byte limit" in big["error"]["message"]
        assert (await pipe.ask(b'{"foo": 1}\n', None))["error"]["code"] == -32600
        assert (await pipe.ask(b"not json\n", None))["error"]["code"] == -32700
        found = await pipe.ask(b"\n" + line(find(9)), 9)  # a blank line is skipped, not answered
        assert found["result"]["structuredContent"]["tool_references"][0]["tool_name"] == "widget"
        assert pipe.replies.queue.empty()


async def test_error_ids_are_recovered_only_for_requests() -> None:
    """A malformed *response* is answered with id null, never as if it replied to request 7."""
    response = b'{"jsonrpc":"2.0","id":7,"result":' + b"[" * 300 + b"]" * 300 + b"}\n"
    async with gateway_pipe() as pipe:
        assert (await pipe.ask(response, None))["error"]["code"] == -32700
        cut = b'{"jsonrpc":"2.0","method":"x","params":' + b"[" * 300 + b"\n"
        assert (await pipe.ask(cut, None))["error"]["code"] == -32700


async def test_a_malformed_first_line_does_not_decide_the_protocol_era() -> None:
    async with gateway_pipe() as pipe:
        assert (await pipe.ask(SURROGATE + b"\n", "s"))["error"]["code"] == -32700
        assert (await pipe.ask(line(INIT), 1))["result"]["protocolVersion"] == "2025-11-25"
        await pipe.send(line(INITIALIZED))
        assert (await pipe.ask(line(find(3)), 3))["result"]["structuredContent"]["tool_references"]


async def test_an_oversized_line_is_discarded_in_bounded_chunks() -> None:
    class Reads(io.BytesIO):
        largest = 0

        def readline(self, size: int | None = -1) -> bytes:
            chunk = super().readline(size)
            Reads.largest = max(Reads.largest, len(chunk))
            return chunk

    stdin = Reads(b"x" * 5_000_000 + b"\n" + b"next\n")
    assert await _discard_line(stdin) == 5_000_000 and stdin.readline() == b"next\n"
    assert Reads.largest <= 1024 * 1024


def test_request_id_reads_only_what_it_can() -> None:
    assert request_id(b'{"jsonrpc":"2.0","id":5,"method":"x","params":{"a":[[[[') == 5
    assert request_id(b'{"method":"x","params":{"id":9},"id":"k"}') == "k"
    assert request_id(b'{"id":3,"result":{}}') is None  # a response
    assert request_id(b'[{"id":1,"method":"x"}]') is None  # a batch
    assert request_id(b'{"id":true,"method":"x"}') is None
    assert request_id(b'{"id":"\\ud800","method":"x"}') is None  # could not be written back


async def test_an_unencodable_reply_becomes_an_error_not_a_crash() -> None:
    catalog = Catalog()
    catalog.add_function(lambda: "bad \ud800 text", name="lone", description="Returns a lone surrogate.")
    call = {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "call_tool", "arguments": {"name": "lone"}}}
    async with gateway_pipe(GatewayServer(Gateway(catalog))) as pipe:
        await pipe.ask(line(INIT), 1)
        await pipe.send(line(INITIALIZED))
        assert (await pipe.ask(line(call), 5))["error"]["code"] == -32603
        assert "result" in await pipe.ask(line(find(6)), 6)


@pytest.mark.parametrize("limit", [0, -1])
async def test_the_limit_must_be_positive(limit: int) -> None:
    with pytest.raises(ValueError):
        async with stdio_transport(max_message_bytes=limit, stdin=io.BytesIO(), stdout=io.BytesIO()):
            pass


async def test_toolscout_serve_answers_hostile_stdio_input(tmp_path: Path) -> None:
    """The real command: each bad line is answered (no client timeout), logged, and the
    process keeps serving; a 5 MB line over --max-message-bytes is refused."""
    cfg = tmp_path / "servers.json"
    cfg.write_text(json.dumps({"mcpServers": {"up": fake("normal")}}))
    toolscout = str(Path(sys.executable).with_name("toolscout"))
    proc = await asyncio.create_subprocess_exec(
        toolscout, "serve", "-c", str(cfg), "--cache", str(tmp_path / "c.db"), "--max-message-bytes", "100000",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )
    assert proc.stdin and proc.stdout and proc.stderr

    async def ask(data: bytes) -> dict[str, Any]:
        """Send ``data``, then the next reply (notifications such as list_changed are skipped)."""
        proc.stdin.write(data)
        await proc.stdin.drain()
        while True:
            reply = json.loads(await asyncio.wait_for(proc.stdout.readline(), 60))  # a bound, not a timing
            if "method" not in reply:
                return reply

    try:
        assert (await ask(line(INIT)))["id"] == 1
        proc.stdin.write(line(INITIALIZED))
        assert (await ask(DEEP + b"\n"))["error"]["code"] == -32700
        lone = await ask(SURROGATE + b"\n")
        assert lone["id"] == "s" and lone["error"]["code"] == -32700
        big = await ask(line(find(4, "x" * 5_000_000)))
        assert big["id"] == 4 and big["error"]["code"] == -32600
        found = await ask(line(find(5, "add two integers")))
        assert found["id"] == 5 and not found["result"]["isError"]
    finally:
        proc.stdin.close()
        await asyncio.wait_for(proc.wait(), 60)
    log = (await proc.stderr.read()).decode()
    assert "malformed message (id 2)" in log and "discarded a 5000" in log

