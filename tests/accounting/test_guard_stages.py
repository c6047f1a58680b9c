"""The guard's stages reach the process's stage timings (/metrics, traces) while anyone
listens, under the request path's names, and no clock is read for them otherwise."""

from __future__ import annotations

from toolscout.accounting import telemetry
from toolscout.catalog import Catalog
from toolscout.gateway import Gateway
from toolscout.model import Tool


def _gateway() -> Gateway:
    catalog = Catalog()
    catalog.add(Tool("get_weather", "Get the weather forecast for a city."), handler=lambda args: {"sky": "clear"})
    return Gateway(catalog)


def test_a_call_reports_the_guard_stages_while_collected() -> None:
    gateway = _gateway()
    with telemetry.collect() as stages:
        assert gateway.call("get_weather", {}).ok
    assert {"visibility", "approval", "run"} <= set(stages.counts)
    assert "visible" not in stages.counts  # the guard's own name is translated


def test_no_listener_means_no_stage_hook() -> None:
    gateway = _gateway()
    assert (gateway.guard.on_stage is None) == (not telemetry.active())  # other tests' /metrics may listen
    mine: list[str] = []
    gateway.guard.on_stage = lambda stage, seconds: mine.append(stage)
    assert gateway.call("get_weather", {}).ok and "visible" in mine  # an own hook keeps the guard's names
