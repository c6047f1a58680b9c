"""Approval the operator controls (issue 23, item 5), through the MCP server and the SDK client.

A hostile upstream cannot opt out of approval with its hints once they are distrusted, nor
with ``readOnlyHint`` next to ``destructiveHint``; a stateless (2026-07-28) approval answer
runs exactly the call it was asked for, once, in its session, before it expires."""

from __future__ import annotations

import asyncio
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from toolscout import Catalog, Tool
from toolscout.context import CallContext
from toolscout.gateway import Gateway
from toolscout.request import CallRequest
from toolscout.server.elicit_approval import ApprovalTickets
from toolscout.server.mcp import GatewayServer

ACCOUNT = {"type": "object", "properties": {"user": {"type": "string"}}, "required": ["user"]}


def build(**options: Any) -> tuple[Gateway, list[str]]:
    ran: list[str] = []
    catalog = Catalog()

    def runner(name: str) -> Any:
        return lambda a: ran.append(f"{name} {a.get('user', '')}".strip()) or f"{name} done"

    catalog.add(Tool("delete_account", "Delete the user's account permanently.", ACCOUNT), handler=runner("delete_account"))
    catalog.add(
        Tool("purge", "Remove every record.", annotations={"readOnlyHint": True, "destructiveHint": True}),
        handler=runner("purge"),
    )
    catalog.add(Tool("lookup", "Look a user up.", ACCOUNT, annotations={"readOnlyHint": True}), handler=runner("lookup"))
    catalog.add(Tool("whoami", "Say who is signed in.", permission="read"), handler=runner("whoami"))
    return Gateway(catalog, **options), ran


def _code(result: Any) -> str | None:
    return result.error.code if result.error is not None else None


def _run(gateway: Gateway, name: str, args: dict[str, Any] | None = None) -> Any:
    return asyncio.run(gateway.execute(CallRequest.parse(name, args or {}), CallContext()))


def test_contradictory_hints_do_not_waive_approval() -> None:
    gateway, ran = build(approve_kinds="dangerous")
    assert _code(_run(gateway, "purge")) == "approval_required" and ran == []


def test_distrusted_hints_gate_every_tool_the_operator_did_not_classify() -> None:
    trusting, ran = build(approve_kinds="dangerous")
    assert _run(trusting, "delete_account", {"user": "ann"}).ok  # no hints, no kind: today it runs
    assert _run(trusting, "lookup", {"user": "ann"}).ok
    distrusting, ran = build(approve_kinds="dangerous", trust_hints=False)
    for name in ("delete_account", "lookup", "purge"):  # readOnlyHint alone no longer waives it
        result = _run(distrusting, name, {"user": "ann"} if name != "purge" else {})
        assert _code(result) == "approval_required" and "unknown" in result.error.message
    assert _run(distrusting, "whoami").ok  # a kind someone the operator trusts declared
    assert ran == ["whoami"]


def _accepting(seen: list[str]) -> Any:
    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    return callback


@pytest.mark.asyncio
async def test_a_distrusting_gateway_asks_the_user_over_mcp() -> None:
    gateway, ran = build(approve_kinds="dangerous", trust_hints=False)
    seen: list[str] = []
    async with Client(GatewayServer(gateway).lowlevel, mode="auto", elicitation_callback=_accepting(seen)) as client:
        result = await client.call_tool("call_tool", {"name": "delete_account", "arguments": {"user": "ann"}})
        assert not result.is_error and ran == ["delete_account ann"]
    assert len(seen) == 1 and "delete_account (unknown)" in seen[0]


ACCEPT = {"action": "accept", "content": {"approve": True}}


async def _ask(client: Client, args: dict[str, Any]) -> types.InputRequiredResult:
    first = await client.session.call_tool(
        "call_tool", {"name": "delete_account", "arguments": args}, allow_input_required=True
    )
    assert isinstance(first, types.InputRequiredResult) and first.request_state and first.input_requests
    return first


async def _answer(client: Client, args: dict[str, Any], asked: types.InputRequiredResult, state: str | None = None) -> Any:
    (key,) = asked.input_requests or {}
    return await client.session.call_tool(
        "call_tool",
        {"name": "delete_account", "arguments": args},
        input_responses={key: ACCEPT},
        request_state=asked.request_state if state is None else state,
        allow_input_required=True,
    )


@pytest.mark.asyncio
async def test_a_stateless_answer_runs_its_call_once_and_cannot_be_replayed() -> None:
    gateway, ran = build(approve_kinds="dangerous", trust_hints=False)
    server = GatewayServer(gateway)
    async with Client(server.lowlevel, mode="auto", elicitation_callback=_accepting([])) as client:
        asked = await _ask(client, {"user": "ann"})
        done = await _answer(client, {"user": "ann"}, asked)
        assert isinstance(done, types.CallToolResult) and not done.is_error
        assert ran == ["delete_account ann"]
        again = await _answer(client, {"user": "ann"}, asked)  # the same answer, replayed
        assert isinstance(again, types.InputRequiredResult)  # asked again, not run
        with pytest.raises(MCPError, match="issued for another request"):  # another call: refused, not run
            await _answer(client, {"user": "bob"}, await _ask(client, {"user": "ann"}))
        forged = await _answer(client, {"user": "ann"}, await _ask(client, {"user": "ann"}), state="e30.0000")
        assert isinstance(forged, types.InputRequiredResult)
        no_state = await client.session.call_tool(  # the answer without its ticket (as before this change)
            "call_tool", {"name": "delete_account", "arguments": {"user": "ann"}},
            input_responses={next(iter(asked.input_requests or {})): ACCEPT}, allow_input_required=True,
        )
        assert isinstance(no_state, types.InputRequiredResult)
    assert ran == ["delete_account ann"]


@pytest.mark.asyncio
async def test_a_stateless_answer_expires() -> None:
    gateway, ran = build(approve_kinds="dangerous", trust_hints=False)
    server = GatewayServer(gateway)
    now = [1000.0]
    server.tickets = ApprovalTickets(ttl=60, clock=lambda: now[0])
    async with Client(server.lowlevel, mode="auto", elicitation_callback=_accepting([])) as client:
        asked = await _ask(client, {"user": "ann"})
        now[0] += 61
        late = await _answer(client, {"user": "ann"}, asked)
        assert isinstance(late, types.InputRequiredResult) and ran == []


@pytest.mark.asyncio
async def test_a_ticket_is_bound_to_its_session_tool_and_arguments() -> None:
    tickets = ApprovalTickets()
    _, ticket = await tickets.issue("s1", "delete_account", {"user": "ann"})
    assert await tickets.redeem(ticket, "s2", "delete_account", {"user": "ann"}) is None
    assert await tickets.redeem(ticket, "s1", "purge", {"user": "ann"}) is None
    assert await tickets.redeem(ticket, "s1", "delete_account", {"user": "ann", "x": 1}) is None
    assert await tickets.redeem(ticket, "s1", "delete_account", {"user": "ann"}) is not None
    assert await tickets.redeem(ticket, "s1", "delete_account", {"user": "ann"}) is None  # used up
    other = ApprovalTickets()  # another gateway's key
    assert await other.redeem((await tickets.issue("s1", "t", {}))[1], "s1", "t", {}) is None


@pytest.mark.asyncio
async def test_replicas_sharing_redis_accept_a_ticket_once_wherever_it_lands(redis_server: Any) -> None:
    """Asked on one replica, answered on another: it runs there, once; the same answer sent
    to the first replica afterwards is asked again (the nonce was claimed in Redis)."""
    from toolscout.sessions.redis import RedisSessionStore

    redis_server.flush()
    gateway, ran = build(approve_kinds="dangerous", trust_hints=False)
    one = GatewayServer(gateway, session_store=RedisSessionStore(redis_server.url, gateway))
    two = GatewayServer(gateway, session_store=RedisSessionStore(redis_server.url, gateway))
    async with (
        Client(one.lowlevel, mode="auto", elicitation_callback=_accepting([])) as first,
        Client(two.lowlevel, mode="auto", elicitation_callback=_accepting([])) as second,
    ):
        asked = await _ask(first, {"user": "ann"})
        done = await _answer(second, {"user": "ann"}, asked)
        assert isinstance(done, types.CallToolResult) and not done.is_error and ran == ["delete_account ann"]
        replayed = await _answer(first, {"user": "ann"}, asked)
        assert isinstance(replayed, types.InputRequiredResult) and ran == ["delete_account ann"]


@pytest.mark.asyncio
async def test_replicas_with_an_operator_key_still_claim_each_ticket_once_in_redis(redis_server: Any) -> None:
    """An operator's ``approval_key`` signs the tickets, but the nonces are still claimed in
    the Redis the replicas share: a ticket used on one replica is refused on the other."""
    from toolscout.sessions.redis import RedisSessionStore

    redis_server.flush()
    gateway, _ = build(approve_kinds="dangerous", trust_hints=False)
    key = b"k" * 32
    one = GatewayServer(gateway, session_store=RedisSessionStore(redis_server.url, gateway), approval_key=key)
    two = GatewayServer(gateway, session_store=RedisSessionStore(redis_server.url, gateway), approval_key=key)
    _, ticket = await one.tickets.issue("s1", "delete_account", {"user": "ann"})
    assert await two.tickets.redeem(ticket, "s1", "delete_account", {"user": "ann"}) is not None
    assert await one.tickets.redeem(ticket, "s1", "delete_account", {"user": "ann"}) is None
