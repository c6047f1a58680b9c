"""Progress and cancellation end to end through the MCP server: a tool's progress reaches
the client that called it, and a client that gives up cancels the running tool."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from mcp import Client

from toolscout import Catalog, Tool
from toolscout.context import current
from toolscout.gateway import Gateway
from toolscout.server.mcp import GatewayServer

MODES = ["legacy", "auto"]


def _server(events: dict[str, asyncio.Event]) -> GatewayServer:
    cat = Catalog()

    async def steps(args: dict[str, Any]) -> str:
        report = current().progress
        assert report is not None
        for i in range(3):
            await report(i + 1, 3, f"step {i + 1}")
        return "done"

    async def forever(args: dict[str, Any]) -> str:
        events["started"].set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            events["cancelled"].set()
            raise
        return "never"

    cat.add(Tool("long_job", "Run a long job in steps.", {"type": "object"}), handler=steps)
    cat.add(Tool("hang", "Wait until cancelled.", {"type": "object"}), handler=forever)
    return GatewayServer(Gateway(cat, call_timeout=None))


@pytest.mark.parametrize("mode", MODES)
async def test_progress_reaches_the_caller(mode: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    server = _server({})
    async with Client(server.lowlevel, mode=mode) as client:
        out = await client.call_tool("call_tool", {"name": "long_job", "arguments": {}}, progress_callback=on_progress)
    assert out.content[0].text == "done"
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_a_call_without_a_listener_still_runs() -> None:
    server = _server({})
    async with Client(server.lowlevel, mode="legacy") as client:
        out = await client.call_tool("call_tool", {"name": "long_job", "arguments": {}})
    assert not out.is_error and out.content[0].text == "done"


@pytest.mark.parametrize("mode", MODES)
async def test_a_cancelled_call_cancels_the_tool(mode: str) -> None:
    events = {"started": asyncio.Event(), "cancelled": asyncio.Event()}
    server = _server(events)
    async with Client(server.lowlevel, mode=mode) as client:
        task = asyncio.create_task(client.call_tool("call_tool", {"name": "hang", "arguments": {}}))
        await asyncio.wait_for(events["started"].wait(), 10)
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
        await asyncio.wait_for(events["cancelled"].wait(), 10)
        # The connection carries on.
        out = await client.call_tool("call_tool", {"name": "long_job", "arguments": {}})
        assert out.content[0].text == "done"
