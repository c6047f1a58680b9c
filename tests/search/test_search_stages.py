"""The search side reports its stages (toolscout.accounting.telemetry): what /metrics and
traces show for a hybrid find_tools, and nothing when no one listens."""

from __future__ import annotations

from _fake_embed import FakeEmbedder
from toolscout.accounting import telemetry
from toolscout.catalog import Catalog
from toolscout.gateway import Gateway
from toolscout.model import Tool


def _gateway() -> tuple[Gateway, FakeEmbedder]:
    tools = [
        Tool("send_email", "Send an email message to a recipient."),
        Tool("read_file", "Read a file from disk and return its text."),
        Tool("get_weather", "Get the weather forecast for a city."),
    ]
    model = FakeEmbedder(dim=64)
    gateway = Gateway(Catalog(tools), embeddings=model, query_encoder=None)
    return gateway, model


def test_a_new_hybrid_query_times_each_stage_once() -> None:
    gateway, model = _gateway()
    gateway.find_tools("warm up", limit=3)
    with telemetry.collect() as stages:
        found = gateway.find_tools("send an email to Bob. Then read the file notes.txt", limit=3)
    assert found.error is None
    assert {"parse", "search", "keyword", "embedding", "dense", "fusion", "render"} <= set(stages.counts)
    assert stages.counts["embedding"] == 1  # the request and its clauses in one encoder call
    assert model.calls[-1][0].startswith("send an email to Bob")
    assert stages.seconds["search"] >= stages.seconds["dense"]


def test_a_repeated_query_skips_the_encoder_stage() -> None:
    gateway, _ = _gateway()
    gateway.find_tools("weather in Paris", limit=3)
    with telemetry.collect() as stages:
        gateway.find_tools("weather in Paris", limit=3)
    assert "embedding" not in stages.counts and stages.counts["dense"] == 1


def test_a_hook_sees_stages_as_they_end() -> None:
    gateway, _ = _gateway()
    seen: list[str] = []
    telemetry.add_hook(lambda name, seconds: seen.append(name))
    try:
        gateway.find_tools("read a file please", limit=3)
    finally:
        for hook in list(telemetry._hooks):
            telemetry.remove_hook(hook)
    # inner stages end first; the search ends after them and before the rendering
    assert seen.index("embedding") < seen.index("dense") < seen.index("fusion") < seen.index("search") < seen.index("render")
