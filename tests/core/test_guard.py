"""The guard's order and its stage hook: every operation passes the same stages, in order,
and a hidden entry is refused before its handler runs (with a ``denied`` record)."""

from __future__ import annotations

from typing import Any

import pytest

from toolscout.access.guard import OPERATIONS, STAGES, Guard, Operation
from toolscout.access.policy import Policy
from toolscout.catalog import Catalog
from toolscout.context import CallContext, Principal
from toolscout.gateway import Gateway
from toolscout.request import CallRequest
from toolscout.security.results import ResultScreen

pytestmark = pytest.mark.asyncio


def hello(name: str) -> str:
    """Say hello to someone."""
    return f"hello {name}"


def _gateway(policy: Policy | None = None) -> Gateway:
    catalog = Catalog()
    catalog.add_function(hello)
    return Gateway(catalog, call_timeout=None, policy=policy)


async def test_a_tool_call_reports_the_stages_in_order() -> None:
    gateway = _gateway()
    gateway.recorders.append(lambda record: None)
    gateway.screen_results = ResultScreen("warn")
    seen: list[str] = []
    gateway.guard.on_stage = lambda name, seconds: seen.append(name) if seconds >= 0 else None
    result = await gateway.execute(CallRequest("hello", {"name": "ada"}), CallContext())
    assert result.ok and tuple(seen) == STAGES  # the same order as every other guarded operation


async def test_a_guarded_operation_reports_every_stage_in_order() -> None:
    gateway = _gateway()
    gateway.recorders.append(lambda record: None)
    seen: list[str] = []
    gateway.guard.on_stage = lambda name, seconds: seen.append(name)

    async def read(op: Operation, ctx: CallContext) -> dict[str, Any]:
        return {"contents": [{"uri": op.name, "text": "memo"}]}

    gateway.guard.register("resources/read", read)
    op = Operation("resources/read", "memo://a", entry=gateway.catalog.get("hello"))
    answer = await gateway.guard.run(op, CallContext(), hidden=LookupError)
    assert answer["contents"][0]["text"] == "memo" and tuple(seen) == STAGES


async def test_a_hidden_entry_never_reaches_its_handler_and_is_recorded_denied() -> None:
    gateway = _gateway(Policy(deny=("hello",)))
    records: list[Any] = []
    gateway.recorders.append(records.append)
    ran: list[str] = []

    async def read(op: Operation, ctx: CallContext) -> dict[str, Any]:
        ran.append(op.name)
        return {}

    gateway.guard.register("resources/read", read)
    op = Operation("resources/read", "memo://a", entry=gateway.catalog.get("hello"))
    with pytest.raises(LookupError):
        await gateway.guard.run(op, CallContext(principal=Principal("bob", "token")), hidden=LookupError)
    assert ran == [] and [(r.principal, r.decision, r.operation) for r in records] == [("bob", "denied", "resources/read")]


async def test_handlers_are_held_only_by_the_guard() -> None:
    guard = Guard(_gateway().visibility)
    guard.register("prompts/get", lambda op, ctx: None)  # type: ignore[arg-type,return-value]
    assert not any(isinstance(v, dict) for k, v in vars(guard).items() if "handler" in k.lower() and not k.startswith("_Guard"))
    with pytest.raises(ValueError):
        guard.register("prompts/get", lambda op, ctx: None)  # type: ignore[arg-type,return-value]
    with pytest.raises(ValueError):
        Operation("shell/exec", "x")
    assert "program" in OPERATIONS and "sampling/createMessage" in OPERATIONS


async def test_an_approved_call_that_fails_is_recorded_approved_with_its_error() -> None:
    """The decision made before the run stands when the handler fails (it is not 'allowed')."""

    def erase(disk: str) -> str:
        """Erase a disk."""
        raise OSError("disk busy")

    catalog = Catalog()
    catalog.add_function(erase, permission="dangerous")
    gateway = Gateway(catalog, call_timeout=None, approve=lambda tool, args: True)
    records: list[Any] = []
    gateway.recorders.append(records.append)
    result = await gateway.execute(CallRequest("erase", {"disk": "sda"}), CallContext())
    assert not result.ok and result.error is not None and result.error.code == "tool_error"
    assert [(r.tool, r.decision, r.outcome, r.operation) for r in records] == [("erase", "approved", "tool_error", "tools/call")]
