"""`serve` and trace context: a client's ``traceparent`` (HTTP header or the MCP request's
``_meta``) parents the gateway's spans; stage timings reach ``/metrics`` without the extra."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from mcp import Client
from prometheus_client.parser import text_string_to_metric_families

from mcp_fixtures import fake
from toolscout.accounting import telemetry
from toolscout.server.app import build_app, run_with
from toolscout.server.serve_config import ServeConfig
from toolscout.sources.mcp.config import parse_config

TRACE = "0af7651916cd43dd8448eb211c80319c"
PARENT = "b7ad6b7169203331"
TRACEPARENT = f"00-{TRACE}-{PARENT}-01"
OTHER = "11111111111111111111111111111111"


def _app(tmp_path: Path) -> Any:
    sources = parse_config({"mcpServers": {"up": fake("normal")}})
    return build_app(ServeConfig.for_sources(sources, transport="http", metrics=True, cache=str(tmp_path / "c.db")))


def _stage_count(text: str, stage: str) -> float:
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == "toolscout_stage_seconds_count" and s.labels.get("stage") == stage:
                return s.value
    return 0.0


async def test_a_find_through_serve_joins_the_clients_trace(tmp_path: Path, span_exporter: Any) -> None:
    built = _app(tmp_path)
    asgi = built.asgi()

    async def talk() -> None:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=asgi), base_url="http://127.0.0.1") as http:
            found = await http.post("/v1/find", json={"query": "add two integers"}, headers={"traceparent": TRACEPARENT})
            assert found.status_code == 200 and found.json()["tool_references"][0]["tool_name"].endswith("add")
            metrics = (await http.get("/metrics")).text
        for stage in ("parse", "search", "render"):
            assert _stage_count(metrics, stage) >= 1, stage
        # MCP: the call's own _meta names another trace, which wins over no header at all
        async with Client(built.server.lowlevel, mode="auto") as client:
            done = await client.call_tool("find_tools", {"query": "echo text back"}, meta={"traceparent": f"00-{OTHER}-{PARENT}-01"})
            assert not done.is_error

    await run_with(built.aggregator, talk)
    spans = span_exporter.get_finished_spans()
    by_trace: dict[str, set[str]] = {}
    for span in spans:
        by_trace.setdefault(format(span.context.trace_id, "032x"), set()).add(span.name)
    assert {"POST /v1/find", "toolscout.parse", "toolscout.search", "toolscout.render"} <= by_trace[TRACE]
    assert {"tools/call find_tools", "toolscout.search"} <= by_trace[OTHER]
    root = next(s for s in spans if s.name == "POST /v1/find")
    assert format(root.parent.span_id, "016x") == PARENT
    search = next(s for s in spans if s.name == "toolscout.search" and format(s.context.trace_id, "032x") == TRACE)
    assert search.parent is not None and format(search.context.trace_id, "032x") == TRACE


async def test_without_a_client_trace_or_the_extra_nothing_is_traced(tmp_path: Path) -> None:
    built = _app(tmp_path)
    asgi = built.asgi()

    async def talk() -> None:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=asgi), base_url="http://127.0.0.1") as http:
            found = await http.post("/v1/find", json={"query": "add two integers"})
            assert found.status_code == 200
            assert _stage_count((await http.get("/metrics")).text, "search") == 1

    await run_with(built.aggregator, talk)
    assert not telemetry.tracing()
