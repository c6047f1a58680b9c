"""Stage timing, trace context in and out, OpenTelemetry spans (the SDK's in-memory exporter)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from toolscout.accounting import telemetry
from toolscout.accounting.telemetry import (
    collect,
    incoming,
    outgoing,
    parse_traceparent,
    stage,
    staged,
)

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE}-{PARENT}-01"


@pytest.fixture(autouse=True)
def nothing_listens() -> Iterator[None]:
    """These tests start where nothing listens to stages. Apps other tests built in this
    process may still be alive (their metrics listen until they are collected, whenever the
    collector runs), so their listeners are set aside for the test and put back after it."""
    held = telemetry._hooks  # the process-wide listeners, read to set them aside
    for hook in held:
        telemetry.remove_hook(hook)
    try:
        yield
    finally:
        for hook in held:
            telemetry.add_hook(hook)


def test_everything_off_is_one_shared_no_op() -> None:
    assert stage("search") is stage("dense")  # nothing listens: no object per stage
    with stage("search") as running:
        assert running is None


def test_collect_records_each_stage_and_sums_repeats() -> None:
    with collect() as stages:
        with stage("search"), stage("embedding"):
            pass
        with stage("embedding"):
            pass
        telemetry.record("upstream", 0.25)
    assert stages.counts == {"embedding": 2, "search": 1, "upstream": 1}
    assert stages.seconds["upstream"] == 0.25
    assert stages.seconds["search"] >= 0.0
    assert stage("search") is stage("dense")  # off again once the block ends


def test_hooks_get_every_stage_and_a_failing_hook_fails_nothing() -> None:
    seen: list[tuple[str, float]] = []

    def broken(name: str, seconds: float) -> None:
        raise RuntimeError("sink down")

    telemetry.add_hook(broken)
    telemetry.add_hook(lambda name, seconds: seen.append((name, seconds)))
    try:
        with stage("validation"):
            pass
        telemetry.record("approval", 1.5)
    finally:
        for hook in list(telemetry._hooks):
            telemetry.remove_hook(hook)
    assert [name for name, _ in seen] == ["validation", "approval"] and seen[1][1] == 1.5
    assert stage("x") is stage("y")


def test_a_weak_hook_goes_with_its_owner() -> None:
    class Sink:
        def __init__(self) -> None:
            self.names: list[str] = []

        def on_stage(self, name: str, seconds: float) -> None:
            self.names.append(name)

    sink = Sink()
    telemetry.add_hook(sink.on_stage, weak=True)
    with stage("audit"):
        pass
    assert sink.names == ["audit"]
    del sink
    telemetry.record("audit", 0.1)  # the dead owner's relay removes itself
    assert telemetry._hooks == () and stage("a") is stage("b")


def test_staged_times_functions_and_coroutines() -> None:
    @staged("credentials")
    def sync() -> int:
        return 1

    @staged("upstream")
    async def later() -> int:
        return 2

    with collect() as stages:
        assert sync() == 1
        assert asyncio.run(later()) == 2
    assert stages.counts == {"credentials": 1, "upstream": 1}


@pytest.mark.parametrize(
    "value",
    [
        None, 7, "", "garbage", f"ff-{TRACE}-{PARENT}-01", f"00-{'0' * 32}-{PARENT}-01",
        f"00-{TRACE}-{'0' * 16}-01", f"00-{TRACE}-{PARENT}-01-extra", f"00-{TRACE[:-1]}-{PARENT}-01",
    ],
)
def test_a_malformed_traceparent_is_ignored(value: object) -> None:
    assert parse_traceparent(value) is None


def test_the_client_context_passes_through_to_upstreams_without_the_extra() -> None:
    assert outgoing({}) == {}
    with incoming({"Traceparent": TRACEPARENT.upper(), "tracestate": "vendor=1"}) as client:
        assert client is not None and client.trace_id == TRACE
        headers = outgoing({"accept": "application/json"})
        meta = outgoing()
    assert headers == {"accept": "application/json", "traceparent": TRACEPARENT, "tracestate": "vendor=1"}
    assert meta == {"traceparent": TRACEPARENT, "tracestate": "vendor=1"}
    assert telemetry.current() is None and outgoing({}) == {}


# -- OpenTelemetry ------------------------------------------------------------------------------
@pytest.fixture
def spans(span_exporter: object) -> Iterator[object]:
    """tests/_spans.py's exporter; once tracing is off again, nothing listens: no cost."""
    yield span_exporter
    telemetry.disable_tracing()  # before span_exporter's own teardown, which runs after this one
    assert stage("a") is stage("b")


def test_stages_are_spans_of_the_clients_trace(spans: object) -> None:
    with incoming({"traceparent": TRACEPARENT}, "tools/call find_tools"), stage("search"):
        with stage("dense"):
            pass
        sent = outgoing({})
    finished = {s.name: s for s in spans.get_finished_spans()}  # type: ignore[attr-defined]
    assert set(finished) == {"tools/call find_tools", "toolscout.search", "toolscout.dense"}
    assert {format(s.context.trace_id, "032x") for s in finished.values()} == {TRACE}
    root = finished["tools/call find_tools"]
    assert format(root.parent.span_id, "016x") == PARENT and root.parent.is_remote
    assert finished["toolscout.search"].parent.span_id == root.context.span_id
    assert finished["toolscout.dense"].parent.span_id == finished["toolscout.search"].context.span_id
    # upstream gets the trace, with the gateway's own span as its parent
    upstream = parse_traceparent(sent["traceparent"])
    assert upstream is not None and upstream.trace_id == TRACE
    assert upstream.parent_id == format(finished["toolscout.search"].context.span_id, "016x")


def test_an_mcp_requests_meta_carries_trace_context(spans: object) -> None:
    import mcp_types

    params = mcp_types.CallToolRequestParams.model_validate({"name": "x", "_meta": {"traceparent": TRACEPARENT}})
    with incoming(params.meta, "tools/call x"):
        pass
    (span,) = spans.get_finished_spans()  # type: ignore[attr-defined]
    assert format(span.context.trace_id, "032x") == TRACE
