"""``span_exporter``: OpenTelemetry tracing on, into the SDK's in-memory exporter, for one test
(skips where the ``otel`` extra is absent); tracing is off again afterwards."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from toolscout.accounting import telemetry


@pytest.fixture
def span_exporter() -> Iterator[Any]:
    sdk = pytest.importorskip("opentelemetry.sdk.trace")
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    provider = sdk.TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    telemetry.enable_tracing(provider)
    try:
        yield memory
    finally:
        telemetry.disable_tracing()
