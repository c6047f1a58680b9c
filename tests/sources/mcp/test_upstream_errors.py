"""Connection loss is the transport's word (issue 23.3): a tool's error is that call's error,
whatever its code (-32000) or wording ("... is closed"); only a crash restarts the server,
and then every call in flight gets ``upstream_unavailable`` naming the cause; a hang times
out one call and leaves the server (and its state) alone."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from _procs import free_port
from _wait import until
from mcp_fixtures import FAKE, fake
from toolscout.catalog import Catalog
from toolscout.errors import ToolFailed, ToolTimeout, UpstreamUnavailable
from toolscout.sources.mcp.aggregator import Aggregator
from toolscout.sources.mcp.config import parse_config

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def agg() -> AsyncIterator[Aggregator]:
    """One server that stays up for the whole module: errors and hangs must not restart it."""
    aggregator = Aggregator(parse_config({"mcpServers": {"up": fake("errors", timeout=30)}}), Catalog())
    try:
        await aggregator.refresh("up")
        yield aggregator
    finally:
        await aggregator.aclose()


async def _pid(agg: Aggregator) -> str:
    return (await agg.catalog.handler("up_pid")({})).text()


@pytest.mark.parametrize(
    ("tool", "said"),
    [("up_server_error", "server error: the backend refused"), ("up_ticket", "Ticket 42 is closed")],
)
async def test_a_tool_error_is_that_calls_error_whatever_its_code_or_wording(agg: Aggregator, tool: str, said: str) -> None:
    pid = await _pid(agg)
    other = asyncio.ensure_future(agg.catalog.handler("up_hang")({}))  # another caller's call in flight
    try:
        await until(lambda: len(agg.upstreams["up"]._inflight) == 1, 10)
        with pytest.raises(ToolFailed, match=said) as info:
            await agg.catalog.handler(tool)({})
        assert info.value.code == "tool_error"
        assert not other.done()  # the other caller's call was not aborted
        assert agg.status()["up"]["state"] == "ready" and agg.status()["up"]["last_error"] is None
        assert await _pid(agg) == pid  # same process: no restart, no lost state
    finally:
        other.cancel()
        with pytest.raises(asyncio.CancelledError):
            await other


async def test_a_hang_times_out_one_call_and_keeps_the_server(agg: Aggregator) -> None:
    pid = await _pid(agg)
    with pytest.raises(ToolTimeout, match=r"did not answer tools/call within 0\.5 s"):
        await agg.upstreams["up"].call("hang", {}, timeout=0.5)
    assert (await agg.catalog.handler("up_echo")({"text": "still"})).text() == "still"
    assert agg.status()["up"]["state"] == "ready" and await _pid(agg) == pid


async def test_a_crash_fails_every_call_in_flight_with_the_cause_and_restarts() -> None:
    crashy = Aggregator(parse_config({"mcpServers": {"up": fake("errors", timeout=30)}}), Catalog())
    try:
        await crashy.refresh("up")
        pid = await _pid(crashy)
        waiting = asyncio.ensure_future(crashy.catalog.handler("up_hang")({}))
        await until(lambda: len(crashy.upstreams["up"]._inflight) == 1, 10)
        with pytest.raises(UpstreamUnavailable, match="lost its connection during tools/call"):
            await crashy.catalog.handler("up_crash")({})
        with pytest.raises(UpstreamUnavailable, match="lost its connection") as info:
            await asyncio.wait_for(waiting, 10)
        assert info.value.code == "upstream_unavailable" and "closed its stream or exited" in info.value.message
        assert crashy.status()["up"]["state"] in ("failed", "connecting", "ready")
        await until(lambda: crashy.status()["up"]["state"] == "ready", 30)
        assert await _pid(crashy) != pid  # restarted
    finally:
        await crashy.aclose()


async def test_over_http_a_minus_32000_error_is_the_calls_own_when_the_server_still_answers() -> None:
    port = free_port()
    server = subprocess.Popen([sys.executable, FAKE, "--mode", "errors", "--http", str(port)], stderr=subprocess.DEVNULL)
    web = Aggregator(parse_config({"mcpServers": {"up": {"url": f"http://127.0.0.1:{port}/mcp"}}}), Catalog())
    try:

        async def listed() -> bool:
            assert server.poll() is None, "the HTTP upstream fixture exited"
            try:
                await web.refresh("up")
                return True
            except Exception:
                web.upstreams["up"]._next_attempt = 0.0  # retry now, not after backoff
                return False

        await until(listed, 60, interval=0.05)
        with pytest.raises(ToolFailed, match="server error: the backend refused"):
            await web.catalog.handler("up_server_error")({})
        assert web.status()["up"]["state"] == "ready" and web.status()["up"]["last_error"] is None
        server.terminate()
        server.wait(10)
        with pytest.raises(UpstreamUnavailable):  # gone: now the transport says so
            await web.catalog.handler("up_echo")({"text": "x"})
        assert web.status()["up"]["state"] == "failed"
    finally:
        await web.aclose()
        if server.poll() is None:
            server.terminate()
            server.wait(10)
