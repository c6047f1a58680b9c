"""Permission kinds from MCP hints, read-only gateways and approvals for risky calls.

Each rule through the library (``Gateway``, ``Session``), a provider adapter (the real
Anthropic SDK on a scripted transport) and the MCP server with the official SDK client
(stateful 2025-11-25 elicitation, and 2026-07-28's input_required round trip).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import mcp_types as types
import pytest
import pytest_asyncio
from mcp import Client

from _session_fixtures import Script, claude_results, claude_turn
from mcp_fixtures import fake
from toolscout import Catalog, Tool
from toolscout.access.approval import Decision, parse_kinds
from toolscout.access.policy import Policy
from toolscout.errors import ConfigError
from toolscout.gateway import Gateway
from toolscout.model import Annotations, permission_from_annotations
from toolscout.server.mcp import GatewayServer
from toolscout.session import Session
from toolscout.sources.mcp.aggregator import Aggregator
from toolscout.sources.mcp.config import parse_config

DISK = {"type": "object", "properties": {"disk": {"type": "string"}}, "required": ["disk"]}


def build(**gateway_options: Any) -> tuple[Gateway, list[str]]:
    """Three tools, kinds only from MCP hints: read-only, destructive, additive; ``ran``
    lists what actually executed."""
    ran: list[str] = []
    cat = Catalog()

    def runner(name: str) -> Any:
        return lambda a: ran.append(name) or f"{name} done"

    cat.add(Tool("list_files", "List the files in a folder.", annotations={"readOnlyHint": True}), handler=runner("list_files"))
    cat.add(
        Tool("wipe_disk", "Erase every file on a disk.", DISK, annotations={"destructiveHint": True}),
        handler=runner("wipe_disk"),
    )
    cat.add(
        Tool("add_note", "Add a note.", annotations={"readOnlyHint": False, "destructiveHint": False}),
        handler=runner("add_note"),
    )
    cat.add(Tool("plain", "A tool that says nothing about itself."), handler=runner("plain"))
    return Gateway(cat, **gateway_options), ran


# -- kinds from hints ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hints", "kind"),
    [
        (None, None),
        ({"title": "Only a title"}, None),
        ({"readOnlyHint": True}, "read"),
        # Contradicting hints are read the unsafe way: an upstream must not opt out of approval
        # by adding readOnlyHint to a destructive tool (issue 23, item 5).
        ({"readOnlyHint": True, "destructiveHint": True}, "dangerous"),
        ({"readOnlyHint": True, "openWorldHint": True}, "read"),
        ({"destructiveHint": True}, "dangerous"),
        ({"destructiveHint": True, "idempotentHint": True}, "dangerous"),
        ({"readOnlyHint": False}, "dangerous"),  # MCP's default for a tool that modifies: destructive
        ({"readOnlyHint": False, "destructiveHint": False}, "write"),
        ({"destructiveHint": False}, "write"),
        ({"destructiveHint": False, "openWorldHint": True}, "write"),
        ({"openWorldHint": True}, "network"),
        ({"openWorldHint": False}, None),
        ({"idempotentHint": True}, None),
    ],
)
def test_permission_from_hints(hints: dict[str, Any] | None, kind: str | None) -> None:
    assert permission_from_annotations(Annotations.from_mcp(hints)) == kind
    assert Tool("t", annotations=hints).effective_permission == kind


def test_declared_permission_wins_over_hints() -> None:
    tool = Tool("t", permission="write", annotations={"readOnlyHint": True})
    assert tool.effective_permission == "write" and tool.permission == "write"


def test_read_only_policy_through_the_library() -> None:
    gateway, ran = build(policy=Policy(permissions={"read"}))
    found = gateway.find_tools("erase files on a disk", limit=10)
    names = {r.tool_name for r in (found.tool_references if found.ok else [])}
    assert "wipe_disk" not in names and "add_note" not in names
    refused = gateway.call("wipe_disk", {"disk": "sda"})
    assert not refused.ok and refused.error is not None and refused.error.code == "unknown_tool"  # kept out: absent
    assert gateway.call("list_files").ok
    assert gateway.call("plain").ok  # no kind, no hints: passes unless the policy requires a kind
    assert ran == ["list_files", "plain"]
    strict, ran = build(policy=Policy.read_only())
    assert strict.call("plain").error.code == "unknown_tool"  # type: ignore[union-attr]
    assert strict.call("list_files").ok and ran == ["list_files"]


# -- approvals through the library -------------------------------------------------------


def test_no_approver_and_no_kinds_changes_nothing() -> None:
    gateway, ran = build()
    assert gateway.call("wipe_disk", {"disk": "sda"}).ok and ran == ["wipe_disk"]


def test_kinds_without_an_approver_answer_approval_required() -> None:
    gateway, ran = build(approve_kinds="dangerous")
    result = gateway.call("wipe_disk", {"disk": "sda"})
    assert not result.ok and result.error is not None and result.error.code == "approval_required"
    assert "nothing ran" in result.error.message and result.error.hint
    assert gateway.call("add_note").ok and ran == ["add_note"]


def test_sync_approver_sees_validated_arguments_and_denies_with_reason() -> None:
    asked: list[tuple[str, dict[str, Any]]] = []

    def approve(tool: Tool, arguments: dict[str, Any]) -> Decision:
        asked.append((tool.name, arguments))
        return Decision.deny("not on a Friday")

    gateway, ran = build(approve=approve)
    bad = gateway.call("wipe_disk", {})  # invalid: never reaches a person
    assert bad.error is not None and bad.error.code == "invalid_arguments" and asked == []
    result = gateway.call("wipe_disk", {"disk": "sda"})
    assert result.error is not None and result.error.code == "approval_denied"
    assert "not on a Friday" in result.error.message and result.error.details["kind"] == "dangerous"
    assert result.content[0]["text"].startswith("approval_denied:")
    assert asked == [("wipe_disk", {"disk": "sda"})] and ran == []
    assert gateway.call("add_note").ok  # default kinds: dangerous only


def test_async_approver_bools_tuples_and_failures() -> None:
    async def yes(tool: Tool, arguments: dict[str, Any]) -> bool:
        await asyncio.sleep(0)
        return True

    gateway, ran = build(approve=yes, approve_kinds="dangerous,write")
    assert gateway.call("wipe_disk", {"disk": "sda"}).ok and gateway.call("add_note").ok
    assert ran == ["wipe_disk", "add_note"]

    def broken(tool: Tool, arguments: dict[str, Any]) -> Any:
        raise RuntimeError("approval service down")

    gateway, ran = build(approve=broken)
    failed = gateway.call("wipe_disk", {"disk": "sda"})
    assert failed.error is not None and failed.error.code == "approval_denied"
    assert "approval service down" in failed.error.message and ran == []  # fail closed

    gateway, ran = build(approve=lambda tool, args: (False, "ask Bob"))
    assert "ask Bob" in gateway.call("wipe_disk", {"disk": "sda"}).error.message  # type: ignore[union-attr]


def test_session_approver_comes_first_and_use_tool_is_gated() -> None:
    gateway, ran = build(approve=lambda tool, args: True)
    session = Session(gateway, approve=lambda tool, args: Decision.deny("the user said no"), use_tool=True)
    out = session.handle("wipe_disk", {"disk": "sda"})
    assert not out.ok and out.error is not None and out.error.code == "approval_denied"
    assert "the user said no" in out.text()
    used = session.handle("use_tool", {"query": "wipe_disk", "params": {"disk": "sdb"}})
    assert used.error is not None and used.error.code == "approval_denied" and ran == []
    # A session approver alone switches the default kinds on.
    gateway, ran = build()
    session = Session(gateway, approve=lambda tool, args: False)
    assert session.handle("wipe_disk", {"disk": "sda"}).error.code == "approval_denied"  # type: ignore[union-attr]
    assert session.handle("list_files").ok and ran == ["list_files"]


def test_approve_kinds_are_checked() -> None:
    assert parse_kinds("dangerous, Write") == {"dangerous", "write"}
    assert parse_kinds("none") == frozenset() and parse_kinds(None) is None
    with pytest.raises(ConfigError, match="dangerus"):
        parse_kinds("dangerus")
    gateway, ran = build(approve=lambda tool, args: False, approve_kinds="none")
    assert gateway.call("wipe_disk", {"disk": "sda"}).ok and ran == ["wipe_disk"]


# -- through a provider adapter ------------------------------------------------------------



def _anthropic_run(session: Session, *turns: dict[str, Any]) -> tuple[Script, list[Any]]:
    anthropic = pytest.importorskip("anthropic")
    from toolscout.adapters.anthropic import MessagesAdapter

    try:
        import httpx2 as http
    except ImportError:
        import httpx as http  # type: ignore[no-redef]
    script = Script(*turns)
    client = anthropic.Anthropic(api_key="test", base_url="http://test", http_client=script.client(http))
    messages: list[Any] = [{"role": "user", "content": "clean up"}]
    MessagesAdapter(session).run(client, model="claude-test", messages=messages)
    return script, messages


def test_adapter_calls_go_through_the_session_approver() -> None:
    asked: list[str] = []

    def approve(tool: Tool, arguments: dict[str, Any]) -> Decision:
        asked.append(f"{tool.name} {json.dumps(arguments)}")
        return Decision(arguments["disk"] == "scratch", "only the scratch disk")

    gateway, ran = build()
    session = Session(gateway, approve=approve)
    _, messages = _anthropic_run(
        session,
        claude_turn(("t1", "wipe_disk", {"disk": "sda"}), ("t2", "list_files", {})),
        claude_turn(("t3", "wipe_disk", {"disk": "scratch"})),
        claude_turn(text="done"),
    )
    results = claude_results(messages)
    denied = results["t1"]
    assert denied["is_error"] and denied["content"][0]["text"].startswith("approval_denied:")
    assert "only the scratch disk" in denied["content"][0]["text"]
    assert "is_error" not in results["t2"] and "is_error" not in results["t3"]
    assert ran == ["list_files", "wipe_disk"]
    assert asked == ['wipe_disk {"disk": "sda"}', 'wipe_disk {"disk": "scratch"}']


def test_adapter_read_only_gateway_sends_and_runs_no_risky_tool() -> None:
    gateway, ran = build(policy=Policy(permissions={"read"}))
    script, messages = _anthropic_run(
        Session(gateway), claude_turn(("t1", "wipe_disk", {"disk": "sda"})), claude_turn(text="done")
    )
    sent = {t["name"] for t in script.requests[0]["tools"]}
    assert sent == {"list_files", "plain"}
    refused = claude_results(messages)["t1"]
    assert refused["is_error"] and refused["content"][0]["text"].startswith("unknown_tool:") and ran == []


# -- through the MCP server -----------------------------------------------------------------



def _accepting(seen: list[str]) -> Any:
    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen.append(params.message)
        return types.ElicitResult(action="accept", content={"approve": True})

    return callback


def _declining(seen: list[str]) -> Any:
    async def callback(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen.append(params.message)
        return types.ElicitResult(action="decline")

    return callback


def _code(result: types.CallToolResult) -> str | None:
    return (result.structured_content or {}).get("error", {}).get("code") if result.is_error else None


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_mcp_elicitation_accept_and_decline(mode: str) -> None:
    gateway, ran = build(approve_kinds="dangerous")
    server = GatewayServer(gateway)
    seen: list[str] = []
    call = {"name": "wipe_disk", "arguments": {"disk": "sda"}}
    async with Client(server.lowlevel, mode=mode, elicitation_callback=_accepting(seen)) as client:
        ok = await client.call_tool("call_tool", call)
        assert not ok.is_error and ok.content[0].text == "wipe_disk done"
        assert seen and "wipe_disk" in seen[0] and '"sda"' in seen[0]
        assert not (await client.call_tool("call_tool", {"name": "add_note", "arguments": {}})).is_error
    assert ran == ["wipe_disk", "add_note"] and len(seen) == 1  # add_note (write) needs no approval
    async with Client(server.lowlevel, mode=mode, elicitation_callback=_declining(seen)) as client:
        no = await client.call_tool("call_tool", call)
        assert _code(no) == "approval_denied" and "the user declined" in no.content[0].text
    assert ran == ["wipe_disk", "add_note"] and len(seen) == 2


@pytest.mark.asyncio
@pytest.mark.parametrize("mode", ["legacy", "auto"])
async def test_mcp_client_without_elicitation_gets_approval_required(mode: str) -> None:
    gateway, ran = build(approve_kinds="dangerous")
    async with Client(GatewayServer(gateway).lowlevel, mode=mode) as client:
        result = await client.call_tool("call_tool", {"name": "wipe_disk", "arguments": {"disk": "sda"}})
        assert _code(result) == "approval_required" and "elicitation" in result.content[0].text
        assert not (await client.call_tool("call_tool", {"name": "list_files", "arguments": {}})).is_error
    assert ran == ["list_files"]


@pytest.mark.asyncio
async def test_mcp_gateway_callback_stands_in_for_clients_without_elicitation() -> None:
    gateway, ran = build(approve=lambda tool, args: Decision.deny("change freeze"))
    async with Client(GatewayServer(gateway).lowlevel, mode="legacy") as client:
        result = await client.call_tool("call_tool", {"name": "wipe_disk", "arguments": {"disk": "sda"}})
        assert _code(result) == "approval_denied" and "change freeze" in result.content[0].text
    assert ran == []


@pytest_asyncio.fixture
async def upstream_catalog() -> AsyncIterator[tuple[Catalog, Aggregator]]:
    cfg = parse_config({"mcpServers": {"up": fake("normal")}})
    catalog = Catalog()
    agg = Aggregator(cfg, catalog)
    await agg.start()
    yield catalog, agg
    await agg.aclose()


@pytest.mark.asyncio
async def test_mcp_read_only_gateway_over_upstream_hints(upstream_catalog: tuple[Catalog, Aggregator]) -> None:
    catalog, agg = upstream_catalog
    assert catalog.get("up_echo").effective_permission == "read"  # type: ignore[union-attr]
    assert catalog.get("up_fail").effective_permission == "dangerous"  # type: ignore[union-attr]
    server = GatewayServer(Gateway(catalog, call_timeout=None, policy=Policy(permissions={"read"})), agg)
    async with Client(server.lowlevel, mode="legacy") as client:
        found = await client.call_tool("find_tools", {"query": "always fails with an error", "limit": 10})
        names = [r["tool_name"] for r in (found.structured_content or {}).get("tool_references", [])]
        assert "up_fail" not in names
        refused = await client.call_tool("call_tool", {"name": "up_fail", "arguments": {}})
        assert _code(refused) == "unknown_tool"  # the policy keeps it out: as absent as a name that does not exist
        echoed = await client.call_tool("call_tool", {"name": "up_echo", "arguments": {"text": "hi"}})
        assert not echoed.is_error


def test_serve_refuses_an_unknown_approval_kind(tmp_path: Any) -> None:
    from typer.testing import CliRunner

    from toolscout.cli import app

    config = tmp_path / "servers.json"
    config.write_text('{"mcpServers": {}}')
    out = CliRunner().invoke(app, ["serve", "--config", str(config), "--no-cache", "--approve-kinds", "dangerus"])
    assert out.exit_code == 2 and "dangerus" in out.output


@pytest.mark.asyncio
async def test_capabilities_say_which_kinds_ask() -> None:
    gateway, _ = build(approve_kinds="dangerous,write")
    async with Client(GatewayServer(gateway).lowlevel, mode="legacy") as client:
        read = await client.read_resource("toolscout://capabilities")
        caps = json.loads(read.contents[0].text)  # type: ignore[union-attr]
    assert caps["approvals"]["kinds"] == ["dangerous", "write"]
    assert GatewayServer(build()[0]).capabilities()["approvals"]["kinds"] == []
