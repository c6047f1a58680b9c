"""An upstream's requests and logs during a call reach the client that made the call (issue 27):
sampling and elicitation answered by that client, never another; a client without the
capability gets the spec's error; a server whose config refuses them gets a clear error;
log messages go to the caller only, at its ``logging/setLevel``, secrets masked. Over
streamable HTTP, with two clients calling at once."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import mcp_types as types
import pytest
import pytest_asyncio
from mcp import Client

from _procs import free_port
from _wait import until
from mcp_fixtures import FAKE, fake
from mcp_fixtures.asgi import serving
from toolscout.catalog import Catalog
from toolscout.gateway import Gateway
from toolscout.server.app import http_app
from toolscout.server.mcp import GatewayServer
from toolscout.sources.mcp.aggregator import Aggregator
from toolscout.sources.mcp.config import parse_config

pytestmark = pytest.mark.asyncio(loop_scope="module")

SECRET = "s3cret-relay-value-123"


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def gateway_url() -> AsyncIterator[str]:
    port = free_port()
    env = {**os.environ, "RELAY_SECRET": SECRET}
    upstream = subprocess.Popen(
        [sys.executable, FAKE, "--mode", "relay", "--http", str(port)], stderr=subprocess.DEVNULL, env=env
    )
    url = f"http://127.0.0.1:{port}/mcp"
    servers = {
        "web": {"url": url, "headers": {"X-Key": SECRET}},
        "shy": {"url": url, "sampling": False, "elicitation": False},  # the same server, refused
        "loc": fake("relay", env={"RELAY_SECRET": SECRET}),  # over stdio
    }
    agg = Aggregator(parse_config({"mcpServers": servers}), Catalog())
    try:

        async def listed() -> bool:
            assert upstream.poll() is None, "the HTTP upstream fixture exited"
            try:
                await agg.refresh("web")
                await agg.refresh("shy")
                await agg.refresh("loc")
                return True
            except Exception:
                for up in agg.upstreams.values():
                    up._next_attempt = 0.0  # retry now, not after backoff
                return False

        await until(listed, 60, interval=0.05)
        server = GatewayServer(Gateway(agg.catalog, call_timeout=None), agg)
        async with serving(http_app(server)) as base:
            yield f"{base}/mcp"
    finally:
        await agg.aclose()
        upstream.terminate()
        upstream.wait(10)


class Person:
    """One client: its own model and user, and the log messages it received."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.logs: list[types.LoggingMessageNotificationParams] = []
        self.updated: list[str] = []

    async def sample(self, context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        await asyncio.sleep(0)  # let the other client's request interleave
        asked = params.messages[0].content.text
        text = f"{self.name}-model answers {asked}"
        return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text=text), model=self.name)

    async def elicit(self, context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"answer": f"{self.name} says yes to {params.message}"})

    async def log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.logs.append(params)

    async def message(self, message: Any) -> None:
        if isinstance(message, types.ResourceUpdatedNotification):
            self.updated.append(str(message.params.uri))

    def client(self, url: str, *, capable: bool = True) -> Client:
        if not capable:
            return Client(url, mode="legacy", logging_callback=self.log, message_handler=self.message)
        return Client(
            url,
            mode="legacy",
            sampling_callback=self.sample,
            elicitation_callback=self.elicit,
            logging_callback=self.log,
            message_handler=self.message,
        )


async def _run(client: Client, tool: str, **arguments: Any) -> types.CallToolResult:
    return await client.call_tool("call_tool", {"name": tool, "arguments": arguments})


def _text(result: types.CallToolResult) -> str:
    return "".join(c.text for c in result.content if isinstance(c, types.TextContent))


async def test_sampling_and_elicitation_reach_the_client_that_made_the_call(gateway_url: str) -> None:
    alice, bob = Person("alice"), Person("bob")
    async with alice.client(gateway_url) as a, bob.client(gateway_url) as b:
        sa, sb, ea, eb = await asyncio.gather(
            _run(a, "web_sample", prompt="p1"),
            _run(b, "web_sample", prompt="p2"),
            _run(a, "web_ask", question="q1"),
            _run(b, "web_ask", question="q2"),
        )
    assert _text(sa) == "model said: alice-model answers p1" and not sa.is_error
    assert _text(sb) == "model said: bob-model answers p2" and not sb.is_error
    assert _text(ea) == 'user accept: {"answer": "alice says yes to q1"}'
    assert _text(eb) == 'user accept: {"answer": "bob says yes to q2"}'


async def test_a_client_without_the_capability_gets_the_specs_error_not_a_hang(gateway_url: str) -> None:
    carol = Person("carol")
    async with carol.client(gateway_url, capable=False) as c:
        sampled = await asyncio.wait_for(_run(c, "web_sample", prompt="p"), 30)
        asked = await asyncio.wait_for(_run(c, "web_ask", question="q"), 30)
    assert _text(sampled).startswith(f"sampling failed: {types.METHOD_NOT_FOUND} ")
    assert "does not support sampling" in _text(sampled)
    assert _text(asked).startswith(f"elicitation failed: {types.METHOD_NOT_FOUND} ")


async def test_a_server_whose_config_refuses_them_gets_a_clear_error(gateway_url: str) -> None:
    alice = Person("alice")
    async with alice.client(gateway_url) as a:
        sampled = await _run(a, "shy_sample", prompt="p")
        asked = await _run(a, "shy_ask", question="q")
    assert _text(sampled).startswith("sampling failed: ") and "not supported" in _text(sampled).lower()
    assert _text(asked).startswith("elicitation failed: ") and "not supported" in _text(asked).lower()


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
async def test_logs_during_a_call_reach_that_caller_only_at_its_level_with_secrets_masked(gateway_url: str) -> None:
    alice, bob = Person("alice"), Person("bob")
    async with alice.client(gateway_url) as a, bob.client(gateway_url) as b:
        await b.set_logging_level("error")
        ra, rb = await asyncio.gather(_run(a, "web_chatty", tag="A"), _run(b, "web_chatty", tag="B"))
        assert _text(ra) == "logged for A" and _text(rb) == "logged for B"
        await until(lambda: len(alice.logs) == 3 and len(bob.logs) == 1, 10)
    assert [(m.level, m.data) for m in alice.logs] == [
        ("debug", "A debug key=***"),
        ("info", "A info key=***"),
        ("error", "A error key=***"),
    ]
    assert [(m.level, m.data) for m in bob.logs] == [("error", "B error key=***")]  # its own, at its level


@pytest.mark.filterwarnings("ignore:resources/(un)?subscribe is removed")
async def test_resource_updates_reach_the_subscribed_client_only(gateway_url: str) -> None:
    alice, bob = Person("alice"), Person("bob")
    async with alice.client(gateway_url) as a, bob.client(gateway_url) as b:
        listed = [str(r.uri) for r in (await a.list_resources()).resources]
        assert "web+memo://one" in listed
        assert (await a.read_resource("web+memo://one")).contents[0].text == "memo one"
        await a.subscribe_resource("web+memo://one")
        assert _text(await _run(b, "web_touch")) == "touched"  # anyone's change notifies the subscriber
        await until(lambda: alice.updated == ["web+memo://one"], 10)
        await a.unsubscribe_resource("web+memo://one")
        await _run(b, "web_touch")
        await _run(a, "web_echo", text="sync")  # a round trip after the second change
    assert alice.updated == ["web+memo://one"] and bob.updated == []


async def test_upstream_tool_icons_and_output_schemas_pass_through(gateway_url: str) -> None:
    async with Person("alice").client(gateway_url) as a:
        found = await a.call_tool("find_tools", {"query": "change the memo resource tell subscribers"})
        touch = next(t for t in found.structured_content["tools"] if t["name"] == "web_touch")
        assert touch["icons"] == [{"src": "https://example.com/touch.png", "mimeType": "image/png"}]
        added = await a.call_tool("find_tools", {"query": "add two integers sum"})
        add = next(t for t in added.structured_content["tools"] if t["name"] == "web_add")
        assert add["outputSchema"]["properties"]["sum"] == {"type": "integer"}
        result = await a.call_tool("call_tool", {"name": "web_add", "arguments": {"a": 2, "b": 3}})
        assert result.structured_content == {"sum": 5}


async def test_over_a_stdio_upstream_the_only_call_in_flight_gets_the_request(gateway_url: str) -> None:
    alice = Person("alice")
    async with alice.client(gateway_url) as a:
        sampled = await _run(a, "loc_sample", prompt="p3")
        asked = await _run(a, "loc_ask", question="q3")
        logged = await _run(a, "loc_chatty", tag="S")
        await until(lambda: len(alice.logs) == 3, 10)
    assert _text(sampled) == "model said: alice-model answers p3"
    assert _text(asked) == 'user accept: {"answer": "alice says yes to q3"}'
    assert _text(logged) == "logged for S" and [m.data for m in alice.logs][-1] == "S error key=***"
