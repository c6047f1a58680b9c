"""Upstreams on 2026-07-28 through the gateway (issue 33): what only that revision offers is
listed and callable, an upstream's ``InputRequiredResult`` reaches the client under a
state the gateway signed, the client's retry goes back to the same upstream call (on any
replica sharing Redis), a tampered state is refused, and the client's capabilities reach
the upstream (which may refuse with -32021).

The upstream is ``tests/mcp_fixtures/mrtr_upstream.py`` (the mcp SDK, both revisions,
served in this process on a free port); the clients are the SDK's own.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import mcp_types as types
import pytest
import pytest_asyncio
from mcp import Client
from mcp.shared.exceptions import MCPError

from mcp_fixtures import mrtr_upstream
from mcp_fixtures.asgi import serving
from toolscout.catalog import Catalog
from toolscout.gateway import Gateway
from toolscout.server.input_required import PREFIX, RequestStates, StateRefused
from toolscout.server.mcp import GatewayServer
from toolscout.sources.mcp.aggregator import Aggregator
from toolscout.sources.mcp.config import parse_config
from toolscout.sources.mcp.negotiation import Asked

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def upstream() -> AsyncIterator[str]:
    async with serving(mrtr_upstream.app()) as base:
        yield f"{base}/mcp"


async def _aggregator(url: str, cache: Any = None) -> Aggregator:
    cfg = parse_config({"mcpServers": {"up": {"url": url, "prefix": "", "defer": "never"}}})
    agg = Aggregator(cfg, Catalog(), cache=cache)
    await agg.refresh("up")
    return agg


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def gateway(upstream: str) -> AsyncIterator[GatewayServer]:
    agg = await _aggregator(upstream)
    try:
        yield GatewayServer(Gateway(agg.catalog, call_timeout=None, learn=False), agg)
    finally:
        await agg.aclose()


def _named(name: str) -> Any:
    async def answer(context: Any, params: Any) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"name": name})

    return answer


async def _sample(context: Any, params: Any) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", content=types.TextContent(type="text", text="hi"), model="m")


def _text(result: Any) -> str:
    return result.content[0].text


async def test_what_only_the_newest_revision_offers_is_listed_and_callable(gateway: GatewayServer) -> None:
    async with Client(gateway.lowlevel, mode="auto", elicitation_callback=_named("Ada")) as modern:
        assert modern.protocol_version == "2026-07-28"
        names = {t.name for t in (await modern.list_tools()).tools}
        assert {"ask_name", "needs_sampling", "count"} <= names
        assert "ask_prompt" in {p.name for p in (await modern.list_prompts()).prompts}
        # The SDK's own driver answers the question the upstream asked through the gateway.
        assert _text(await modern.call_tool("ask_name", {})) == "hello Ada"
        prompt = await modern.get_prompt("ask_prompt")
        assert prompt.messages[0].content.text == "write to Ada"
    async with Client(gateway.lowlevel, mode="legacy") as stateful:  # listed for every client
        assert "ask_name" in {t.name for t in (await stateful.list_tools()).tools}
        assert _text(await stateful.call_tool("count", {"peek": True})).isdigit()


async def test_the_client_gets_the_gateways_state_and_its_retry_reaches_the_upstream(gateway: GatewayServer) -> None:
    async with Client(gateway.lowlevel, mode="auto") as client:
        asked = await client.session.call_tool("ask_name", {}, allow_input_required=True)
        assert isinstance(asked, types.InputRequiredResult)
        assert set(asked.input_requests) == {"name"}  # the upstream's questions, unchanged
        state = asked.request_state
        assert state is not None and state.startswith(PREFIX) and mrtr_upstream.STATE not in state
        answer = {"name": types.ElicitResult(action="accept", content={"name": "Lin"})}
        done = await client.session.call_tool("ask_name", {}, input_responses=answer, request_state=state)
        assert isinstance(done, types.CallToolResult) and _text(done) == "hello Lin"
        with pytest.raises(MCPError) as refused:  # altered: an error, never a run nor a new question
            await client.session.call_tool("ask_name", {}, input_responses=answer, request_state=state + "-x")
        assert refused.value.code == -32602 and "requestState refused" in refused.value.error.message
        with pytest.raises(MCPError):  # a state issued for one call does not continue another
            await client.session.call_tool("count", {}, input_responses=answer, request_state=state)


async def test_the_clients_capabilities_reach_the_upstream(gateway: GatewayServer) -> None:
    async with Client(gateway.lowlevel, mode="auto") as bare:
        with pytest.raises(MCPError) as refused:
            await bare.call_tool("needs_sampling", {})
        assert refused.value.code == -32021
        assert refused.value.error.data == {"requiredCapabilities": {"sampling": {}}}
    async with Client(gateway.lowlevel, mode="auto", sampling_callback=_sample) as sampling:
        assert _text(await sampling.call_tool("needs_sampling", {})) == "sampled"


async def test_a_state_is_bound_to_its_caller_and_request() -> None:
    states = RequestStates()
    alice = {"p": "alice", "m": "tools/call", "n": "ask_name", "a": "0"}
    token = await states.issue(alice, Asked("up", "tools/call", "ask_name", "inner"))
    assert (await states.verify(token, alice)).state == "inner"
    for binding, reason in (
        ({**alice, "p": "bob"}, "issued to another caller"),
        ({**alice, "n": "count"}, "issued for another request"),
    ):
        with pytest.raises(StateRefused, match=reason):
            await states.verify(token, binding)
    with pytest.raises(StateRefused, match="signature"):
        await RequestStates().verify(token, alice)  # another gateway's key
    late = RequestStates(states.key, ttl=-1)
    with pytest.raises(StateRefused, match="expired"):
        await late.verify(await late.issue(alice, Asked("up", "tools/call", "ask_name", None)), alice)


@pytest.mark.usefixtures("postgres")
async def test_the_retry_lands_on_the_other_replica(upstream: str, redis_server: Any, pg_dsn: str) -> None:
    """Two replicas sharing Redis (sessions, the state key) and PostgreSQL (the tool-list
    cache): the question asked on one is answered on the other, which continues the
    upstream call; multi-round-trip prompts alike."""
    from toolscout.sessions.redis import RedisSessionStore
    from toolscout.sources.mcp.cache import ToolListCache
    from toolscout.storage import open_store

    redis_server.flush()
    replicas, aggs = [], []
    for _ in range(2):
        agg = await _aggregator(upstream, ToolListCache(open_store(pg_dsn)))
        aggs.append(agg)
        gateway = Gateway(agg.catalog, call_timeout=None, learn=False)
        replicas.append(GatewayServer(gateway, agg, session_store=RedisSessionStore(redis_server.url, gateway)))
    try:
        one, two = replicas
        async with Client(one.lowlevel, mode="auto") as first, Client(two.lowlevel, mode="auto") as second:
            asked = await first.session.call_tool("ask_name", {}, allow_input_required=True)
            assert isinstance(asked, types.InputRequiredResult)
            answer = {"name": types.ElicitResult(action="accept", content={"name": "Bo"})}
            done = await second.session.call_tool("ask_name", {}, input_responses=answer, request_state=asked.request_state)
            assert isinstance(done, types.CallToolResult) and _text(done) == "hello Bo"
            prompt = await first.session.get_prompt("ask_prompt", allow_input_required=True)
            assert isinstance(prompt, types.InputRequiredResult)
            got = await second.session.get_prompt(
                "ask_prompt", input_responses=answer, request_state=prompt.request_state
            )
            assert isinstance(got, types.GetPromptResult) and got.messages[0].content.text == "write to Bo"
    finally:
        for agg in aggs:
            await agg.aclose()


async def test_a_stateless_approval_inside_a_program_does_not_run_its_earlier_calls_twice(upstream: str) -> None:
    """``execute`` stops at the call that needs approval and answers with the question; the
    client's retry replays the calls that ran before it (from the journal in the signed
    state) and runs the approved one: the upstream counts each call once."""
    pytest.importorskip("pydantic_monty")
    cfg = parse_config(
        {"mcpServers": {"up": {"url": upstream, "prefix": "", "defer": "never"}, "gated": {"url": upstream, "approval": "always"}}}
    )
    agg = Aggregator(cfg, Catalog())
    try:
        await agg.refresh("up")
        await agg.refresh("gated")
        server = GatewayServer(Gateway(agg.catalog, call_timeout=None, learn=False), agg, code_mode=True)
        program = (
            "a = await count()\nb = await count()\nc = await gated_count()\nd = await count(peek=True)\nreturn [a, b, c, d]"
        )
        accepted = []

        async def approve(context: Any, params: Any) -> types.ElicitResult:
            accepted.append(params.message)
            return types.ElicitResult(action="accept", content={"approve": True})

        before = mrtr_upstream.calls["count"]
        async with Client(server.lowlevel, mode="auto", elicitation_callback=approve) as client:
            assert client.protocol_version == "2026-07-28"
            done = await client.call_tool("execute", {"code": program})
        assert not done.is_error, _text(done)
        assert len(accepted) == 1 and "gated_count" in accepted[0]
        assert mrtr_upstream.calls["count"] - before == 3  # count, count, gated_count: once each
        n = before
        assert done.structured_content["result"] == [str(n + 1), str(n + 2), str(n + 3), str(n + 3)]
    finally:
        await agg.aclose()


async def test_a_call_during_a_first_start_waits_or_says_the_server_is_starting(upstream: str) -> None:
    """No cache, the server still listing its tools: a call by name is never ``unknown_tool``.
    Without a wait window it gets ``upstream_starting`` (naming the server, with a hint);
    with one, it runs once the listing lands."""
    import asyncio

    gate = asyncio.Event()
    mrtr_upstream.hold_listing.append(gate)
    cfg = parse_config({"mcpServers": {"up": {"url": upstream, "prefix": "", "defer": "never"}}})
    agg = Aggregator(cfg, Catalog())
    listing = asyncio.ensure_future(agg.start(lazy=False))
    try:
        while agg.pending().get("up") != "listing tools":  # readiness: the request is out
            await asyncio.sleep(0.01)
        impatient = GatewayServer(Gateway(agg.catalog, call_timeout=None, learn=False), agg, cold_start_wait=0)
        patient = GatewayServer(Gateway(agg.catalog, call_timeout=None, learn=False), agg, cold_start_wait=60)
        async with Client(impatient.lowlevel, mode="auto") as client:
            early = await client.call_tool("call_tool", {"name": "count", "arguments": {"peek": True}})
            assert early.is_error and early.structured_content["error"]["code"] == "upstream_starting"
            assert early.structured_content["error"]["details"]["loading"] == {"up": "listing tools"}
        async with Client(patient.lowlevel, mode="auto") as client:
            waiting = asyncio.ensure_future(client.call_tool("call_tool", {"name": "count", "arguments": {"peek": True}}))
            gate.set()
            done = await waiting
            assert not done.is_error and _text(done).isdigit()
        await listing
    finally:
        mrtr_upstream.hold_listing.remove(gate)
        gate.set()
        await agg.aclose()


async def test_a_stateful_upstreams_question_reaches_a_stateless_client_as_input_required() -> None:
    """A 2025-11-25 upstream asks mid-call (elicitation, sampling); the client speaks
    2026-07-28 and cannot take a request mid-call: the question comes back in the answer,
    the call waits, and the client's retry hands the upstream its answer (not -32601)."""
    from mcp_fixtures import fake

    agg = Aggregator(parse_config({"mcpServers": {"loc": fake("relay")}}), Catalog())
    try:
        await agg.refresh("loc")
        server = GatewayServer(Gateway(agg.catalog, call_timeout=None, learn=False), agg)

        async def answer(context: Any, params: Any) -> types.ElicitResult:
            return types.ElicitResult(action="accept", content={"answer": "blue"})

        async with Client(server.lowlevel, mode="auto", elicitation_callback=answer, sampling_callback=_sample) as client:
            asked = await client.session.call_tool(
                "call_tool", {"name": "loc_ask", "arguments": {"question": "Colour?"}}, allow_input_required=True
            )
            assert isinstance(asked, types.InputRequiredResult)
            (key, question), = asked.input_requests.items()
            assert question.method == "elicitation/create" and question.params.message == "Colour?"
            call = {"name": "loc_ask", "arguments": {"question": "Colour?"}}
            reply = {key: types.ElicitResult(action="accept", content={"answer": "blue"})}
            done = await client.session.call_tool("call_tool", call, input_responses=reply, request_state=asked.request_state)
            assert isinstance(done, types.CallToolResult) and _text(done) == 'user accept: {"answer": "blue"}'
            with pytest.raises(MCPError, match="no longer waiting"):  # answered once: not parked any more
                await client.session.call_tool("call_tool", call, input_responses=reply, request_state=asked.request_state)
            driven = await client.call_tool("call_tool", call)  # the SDK's own driver, end to end
            assert _text(driven) == 'user accept: {"answer": "blue"}'
            sampled = await client.call_tool("call_tool", {"name": "loc_sample", "arguments": {"prompt": "hi?"}})
            assert not sampled.is_error and "hi" in _text(sampled)
    finally:
        await agg.aclose()


async def test_a_stateful_client_calls_what_only_the_newest_revision_offers(gateway: GatewayServer) -> None:
    """A 2025-11-25 client calls a tool only the upstream's 2026-07-28 side has: the
    upstream's questions go to the client mid-call (elicitation on the call's channel) and
    the gateway sends the retry itself."""
    async with Client(gateway.lowlevel, mode="legacy", elicitation_callback=_named("Kim")) as stateful:
        assert _text(await stateful.call_tool("ask_name", {})) == "hello Kim"
