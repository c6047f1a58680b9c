"""The search meta-tool under seed 001's name through the MCP SDK client, and the
search-result cache's hit rate on /metrics."""

from __future__ import annotations

import httpx
import pytest
from mcp import Client
from prometheus_client.parser import text_string_to_metric_families

from toolscout.catalog import Catalog
from toolscout.gateway import Gateway
from toolscout.server.app import http_app
from toolscout.server.mcp import GatewayServer

pytestmark = pytest.mark.asyncio


def _server(**options: object) -> GatewayServer:
    catalog = Catalog()

    def add(a: int, b: int) -> int:
        return a + b

    def send_email(to: str) -> str:
        return f"sent to {to}"

    catalog.add_function(add, name="math_add", description="Add two integers.")
    catalog.add_function(send_email, name="mail_send", description="Send an email to someone.")
    return GatewayServer(Gateway(catalog, **options))  # type: ignore[arg-type]


async def test_the_gateway_answers_as_tool_search_tool_over_mcp() -> None:
    server = _server(meta_dialect="seed001")
    async with Client(server.lowlevel, mode="legacy") as client:
        listed = await client.list_tools()
        names = [t.name for t in listed.tools]
        assert names[:2] == ["tool_search_tool", "call_tool"] and "find_tools" not in names
        schema = listed.tools[0].input_schema["properties"]
        assert {"max_results", "category_filter", "search_type"} <= set(schema)
        assert listed.tools[0].annotations.read_only_hint is True
        found = await client.call_tool("tool_search_tool", {"query": "add two integers", "max_results": 1})
        assert not found.is_error
        assert [r["tool_name"] for r in found.structured_content["tool_references"]] == ["math_add"]
        assert "math_add" in [t.name for t in (await client.list_tools()).tools]
        wrong = await client.call_tool("find_tools", {"query": "add"})
        assert wrong.is_error and "unknown_tool" in wrong.content[0].text


def _sample(text: str, name: str, **labels: str) -> float:
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()):
                return s.value
    return 0.0


async def test_the_result_cache_hit_rate_is_on_metrics() -> None:
    app = http_app(_server(result_cache=8), metrics=True)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as http:
        for query in ("send an email", "Send an  email", "add numbers"):
            assert (await http.post("/v1/find", json={"query": query})).status_code == 200
        text = (await http.get("/metrics")).text
    assert _sample(text, "toolscout_find_cache_lookups_total", result="hit") == 1
    assert _sample(text, "toolscout_find_cache_lookups_total", result="miss") == 2
    assert _sample(text, "toolscout_find_cache_hit_ratio") == pytest.approx(1 / 3)
