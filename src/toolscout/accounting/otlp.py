"""Send ``toolscout serve``'s spans to an OpenTelemetry collector, configured by the standard
``OTEL_*`` variables alone.

Why here and not only under ``opentelemetry-instrument``: an operator who runs ``serve``
as a service should not need a second launcher to get its traces out. With
``TOOLSCOUT_OTEL=1`` and an OTLP endpoint in the environment
(``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT``), and no SDK
tracer provider configured already (``opentelemetry-instrument`` configures one, and then
that one is used as it is), ``serve`` installs an SDK provider that batches its spans to
that endpoint over OTLP/HTTP (protobuf). Everything else (headers, timeouts, batch delay,
service name) is the SDK's own reading of the usual variables.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from typing import Any

from ..errors import MissingExtra

__all__ = ["ENDPOINT_VARIABLES", "provider_from_env"]

log = logging.getLogger("toolscout.telemetry")

ENDPOINT_VARIABLES = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")


def provider_from_env(environ: Mapping[str, str] | None = None) -> Any:
    """An SDK ``TracerProvider`` exporting to the configured OTLP endpoint, made the global
    one; ``None`` when no endpoint is set, the traces exporter is not ``otlp``, or the process
    already has an SDK provider (keep using it)."""
    env = os.environ if environ is None else environ
    if not any(env.get(name, "").strip() for name in ENDPOINT_VARIABLES):
        return None
    if env.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() not in ("", "otlp"):
        return None
    try:
        from opentelemetry import trace
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import BatchSpanProcessor
    except ImportError as exc:
        raise MissingExtra("OTLP export of traces", "otel") from exc
    if isinstance(trace.get_tracer_provider(), TracerProvider):
        return None  # configured by the application or opentelemetry-instrument
    protocol = env.get("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL") or env.get("OTEL_EXPORTER_OTLP_PROTOCOL") or "http/protobuf"
    if protocol != "http/protobuf":
        log.warning("OTLP protocol %r is not supported by toolscout serve; sending http/protobuf", protocol)
    service = env.get("OTEL_SERVICE_NAME") or "toolscout"
    provider = TracerProvider(resource=Resource.create({"service.name": service}))
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return provider
