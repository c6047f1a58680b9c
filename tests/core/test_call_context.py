"""One CallContext from the edge down: what a surface knows about its caller reaches the
tool's handler, concurrent calls never see each other's, and the caller's visibility rule
hides tools from finds and refuses calls alike."""

from __future__ import annotations

import asyncio
from typing import Any

from mcp import Client

from toolscout import Catalog, Session, Tool
from toolscout.access.approval import Decision
from toolscout.calls import UpstreamResult
from toolscout.context import ANONYMOUS, CallContext, Principal, current, using
from toolscout.gateway import Gateway
from toolscout.request import CallRequest, FindRequest, UseRequest
from toolscout.search.learning import UsageLearner
from toolscout.server.mcp import GatewayServer

OBJ: dict[str, Any] = {"type": "object"}


def _seen() -> dict[str, Any]:
    ctx = current()
    return {
        "principal": ctx.principal.id,
        "kind": ctx.principal.kind,
        "session": ctx.session_id,
        "credentials": dict(ctx.credentials),
        "progress": ctx.progress is not None,
        "approve": ctx.approve is not None,
    }


def _catalog(release: asyncio.Event | None = None) -> Catalog:
    cat = Catalog()

    async def whoami(args: dict[str, Any]) -> dict[str, Any]:
        report = current().progress
        if report is not None:
            await report(1, 1, "looked")
        return _seen()

    async def wait_then_whoami(args: dict[str, Any]) -> dict[str, Any]:
        assert release is not None
        await release.wait()  # both calls are in flight before either answers
        return _seen()

    def sync_whoami(args: dict[str, Any]) -> dict[str, Any]:
        return _seen()  # a sync handler runs in a worker thread, with the context copied

    cat.add(Tool("whoami", "Tell who is calling.", OBJ), handler=whoami)
    cat.add(Tool("wait_whoami", "Wait, then tell who is calling.", OBJ), handler=wait_then_whoami)
    cat.add(Tool("sync_whoami", "Tell who is calling, synchronously.", OBJ), handler=sync_whoami)
    cat.add(Tool("drop_table", "Delete a database table.", OBJ, permission="dangerous"), handler=lambda a: "dropped")
    cat.add(Tool("send_email", "Send an email message to a recipient.", OBJ), handler=lambda a: "sent")
    cat.add(Tool("hang", "Wait until cancelled.", OBJ), handler=lambda a: asyncio.Event().wait())
    return cat


def _edge(**changes: Any) -> CallContext:
    return CallContext(principal=Principal("alice", "token"), credentials={"github": "tok-a"}, **changes)


async def test_what_the_edge_knows_reaches_the_handler() -> None:
    gw = Gateway(_catalog())
    reports: list[tuple[float, float | None, str | None]] = []

    async def progress(done: float, total: float | None, message: str | None) -> None:
        reports.append((done, total, message))

    for name in ("whoami", "sync_whoami"):
        result = await gw.execute(CallRequest.parse(name, {}), _edge(session_id="conv-1", progress=progress))
        assert result.ok, result.error
        assert result.value == {
            "principal": "alice",
            "kind": "token",
            "session": "conv-1",
            "credentials": {"github": "tok-a"},
            "progress": True,
            "approve": False,
        }
    assert reports == [(1, 1, "looked")]
    assert current() == CallContext() and current().principal is ANONYMOUS  # set only while the handler runs


async def test_the_callers_approver_is_asked_and_can_refuse() -> None:
    gw = Gateway(_catalog())
    asked: list[tuple[str, dict[str, Any]]] = []

    def approve(tool: Tool, arguments: dict[str, Any]) -> Decision:
        asked.append((tool.name, arguments))
        return Decision.deny("not on a Friday")

    refused = await gw.execute(CallRequest.parse("drop_table", {"table": "users"}), _edge(approve=approve))
    assert not refused.ok and refused.error is not None and refused.error.code == "approval_denied"
    assert asked == [("drop_table", {"table": "users"})]
    ran = await gw.execute(CallRequest.parse("drop_table", {}), _edge(approve=lambda tool, args: True))
    assert ran.ok and ran.text() == "dropped"
    unasked = await gw.execute(CallRequest.parse("drop_table", {}), _edge())  # no approver: nothing gated by default
    assert unasked.ok


async def test_a_session_adds_its_id_and_rules_to_the_edges_context() -> None:
    gw = Gateway(_catalog())
    session = Session(gw, session_id="conv-9", threshold=100, allow=lambda t: t.name != "send_email")
    outcome = await session.ahandle("whoami", {}, context=_edge())
    assert outcome.ok and outcome.result is not None
    assert outcome.result.value["principal"] == "alice"
    assert outcome.result.value["session"] == "conv-9"
    assert outcome.result.value["credentials"] == {"github": "tok-a"}
    # the session's rule and the edge's both apply
    hidden = await session.ahandle("whoami", {}, context=_edge(allow=lambda t: t.name != "whoami"))
    assert hidden.error is not None and hidden.error.code == "unknown_tool"  # hidden means absent
    mine = await session.ahandle("send_email", {}, context=_edge())
    assert mine.error is not None and mine.error.code == "unknown_tool"


async def test_concurrent_calls_keep_their_own_contexts() -> None:
    release = asyncio.Event()
    gw = Gateway(_catalog(release))
    alice = _edge(session_id="a")
    bob = CallContext(session_id="b", principal=Principal("bob", "local"), credentials={"github": "tok-b"})
    calls = [
        asyncio.ensure_future(gw.execute(CallRequest.parse("wait_whoami", {}), ctx)) for ctx in (alice, bob, alice, bob)
    ]
    await asyncio.sleep(0)  # let every call reach its handler
    release.set()
    results = await asyncio.gather(*calls)
    seen = [(r.value["principal"], r.value["session"], r.value["credentials"]["github"]) for r in results]
    assert seen == [("alice", "a", "tok-a"), ("bob", "b", "tok-b"), ("alice", "a", "tok-a"), ("bob", "b", "tok-b")]


async def test_a_context_made_current_by_hand_reaches_a_handler_called_directly() -> None:
    handler = _catalog().handler("whoami")
    assert handler is not None
    with using(_edge(session_id="direct")):
        inside = await handler({})
    outside = await handler({})
    assert inside["principal"] == "alice" and inside["session"] == "direct"
    assert outside["principal"] == "anonymous" and outside["session"] is None


async def test_the_allow_rule_hides_from_find_and_refuses_execute() -> None:
    gw = Gateway(_catalog())
    no_email = CallContext(allow=lambda t: t.name != "send_email")
    assert [t.name for t in gw.find({"query": "send an email"}).found][:1] == ["send_email"]
    found = gw.find(FindRequest.parse({"query": "send an email"}), no_email)
    assert "send_email" not in [t.name for t in found.found]
    picked = gw.find({"query": "select:send_email"}, no_email)
    assert picked.found == []
    refused = await gw.execute(CallRequest.parse("send_email", {}), no_email)
    assert refused.error is not None and refused.error.code == "unknown_tool"  # hidden means absent
    used = await gw.execute(UseRequest.parse({"query": "send_email", "params": {}}), no_email)
    assert not used.ok and used.tool != "send_email"


async def test_the_contexts_timeout_limits_the_call() -> None:
    gw = Gateway(_catalog(), call_timeout=None)
    result = await gw.execute(CallRequest.parse("hang", {}), CallContext(timeout=0.01))
    assert result.error is not None and result.error.code == "timeout"


class _CountingLearner(UsageLearner):
    def __init__(self) -> None:
        super().__init__(None)
        self.searches: list[str] = []
        self.calls: list[tuple[str, str]] = []

    def searched(self, session: str, query: str, found: Any, *, now: float | None = None) -> str | None:
        self.searches.append(session)
        return super().searched(session, query, found, now=now)

    def called(self, session: str, tool: str, ok: bool, *, now: float | None = None) -> None:
        self.calls.append((session, tool))
        super().called(session, tool, ok, now=now)


async def test_usage_is_recorded_once_per_find_and_call_and_only_with_a_session() -> None:
    learner = _CountingLearner()
    gw = Gateway(_catalog(), learn=learner)
    session = Session(gw, session_id="conv", threshold=1)
    assert (await session.ahandle("find_tools", {"query": "send an email"})).ok
    assert (await session.ahandle("send_email", {})).ok
    assert learner.searches == ["conv"] and learner.calls == [("conv", "send_email")]
    gw.find_tools("send an email")  # no session: nothing recorded
    await gw.acall("send_email", {})
    assert learner.searches == ["conv"] and learner.calls == [("conv", "send_email")]
    gw.find_tools("send an email", session="lib")
    await gw.acall("send_email", {}, session="lib")
    assert learner.searches == ["conv", "lib"] and learner.calls[-1] == ("lib", "send_email")


async def test_an_upstream_result_is_recognised_by_its_type_not_its_source() -> None:
    raw = {"content": [{"type": "text", "text": "raw"}], "structuredContent": {"from": "upstream"}, "isError": False}
    cat = Catalog()
    cat.add(Tool("relay", "Relay an upstream's answer.", OBJ), handler=lambda a: UpstreamResult.of("orig_name", raw))
    # Claims to come from MCP but returns a plain dict: it is rendered like any value.
    cat.add(Tool("pretender", "Return a dict.", OBJ, source="mcp"), handler=lambda a: {"structuredContent": 1})
    gw = Gateway(cat)
    relayed = await gw.execute(CallRequest.parse("relay", {}))
    assert isinstance(relayed, UpstreamResult) and relayed.tool == "relay" and relayed.raw == raw
    server = GatewayServer(gw)
    async with Client(server.lowlevel, mode="legacy") as client:
        out = await client.call_tool("call_tool", {"name": "relay", "arguments": {}})
        plain = await client.call_tool("call_tool", {"name": "pretender", "arguments": {}})
    assert out.structured_content == {"from": "upstream"} and out.content[0].text == "raw"
    assert plain.structured_content == {"structuredContent": 1}
