"""A trace of one ``find_tools`` and one proxied upstream call through a real ``toolscout serve``
process, exported over OTLP/HTTP and received by an OTLP endpoint, all in the client's trace
(docs/telemetry.md, "Sending the spans to a collector").

No OpenTelemetry collector installs from the package registries the tests may use (it is a
Go program), so the receiving end is the smallest real one: an HTTP server on a free
loopback port that accepts ``POST /v1/traces`` and decodes each export with the OTLP
protobuf classes (``opentelemetry-proto``, which the exporter of the ``otel`` extra brings).
The upstream is the scripted fake over streamable HTTP, recording the ``traceparent`` each
``tools/call`` carried in its ``_meta``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from _procs import free_port, stop
from _wait import until
from mcp_fixtures.asgi import ToolCalls, read_body, serving
from mcp_fixtures.fake_upstream import build

pytest.importorskip("opentelemetry.sdk.trace")
trace_service = pytest.importorskip("opentelemetry.proto.collector.trace.v1.trace_service_pb2")

TOOLSCOUT = str(Path(sys.executable).with_name("toolscout"))
TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = "00f067aa0ba902b7"
TRACEPARENT = f"00-{TRACE}-{PARENT}-01"


class Receiver:
    """An OTLP/HTTP trace endpoint: every span of every export, decoded."""

    def __init__(self) -> None:
        self.spans: list[dict[str, Any]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = await read_body(receive)
        status = 404
        reply = b""
        if scope["method"] == "POST" and scope["path"] == "/v1/traces":
            export = trace_service.ExportTraceServiceRequest.FromString(body)
            for resource in export.resource_spans:
                service = {a.key: a.value.string_value for a in resource.resource.attributes}.get("service.name")
                for scoped in resource.scope_spans:
                    for span in scoped.spans:
                        self.spans.append({
                            "service": service,
                            "name": span.name,
                            "trace_id": span.trace_id.hex(),
                            "span_id": span.span_id.hex(),
                            "parent_id": span.parent_span_id.hex(),
                        })
            status, reply = 200, trace_service.ExportTraceServiceResponse().SerializeToString()
        await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"application/x-protobuf")]})
        await send({"type": "http.response.body", "body": reply})

    def names(self, trace_id: str) -> set[str]:
        return {s["name"] for s in self.spans if s["trace_id"] == trace_id}


async def test_a_find_and_a_proxied_call_reach_an_otlp_endpoint_in_the_clients_trace(tmp_path: Path) -> None:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    receiver = Receiver()
    upstream = ToolCalls(build("normal").streamable_http_app(host="127.0.0.1"))
    async with serving(receiver) as collector, serving(upstream) as up:
        cfg = tmp_path / "servers.json"
        cfg.write_text(json.dumps({"mcpServers": {"up": {"url": f"{up}/mcp"}}}))
        port = free_port()
        env = {
            **os.environ,
            "TOOLSCOUT_OTEL": "1",
            "OTEL_EXPORTER_OTLP_ENDPOINT": collector,
            "OTEL_SERVICE_NAME": "toolscout-test",
            "OTEL_BSP_SCHEDULE_DELAY": "100",  # ms: spans leave while the test waits, not at exit
        }
        args = ["serve", "-c", str(cfg), "--cache", str(tmp_path / "c.db"), "--transport", "http", "--port", str(port)]
        proc = subprocess.Popen([TOOLSCOUT, *args], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        try:
            gateway = f"http://127.0.0.1:{port}/mcp"
            http = create_mcp_http_client(headers={"traceparent": TRACEPARENT})
            async with http:

                async def answered() -> bool:
                    assert proc.poll() is None, f"toolscout serve exited: {proc.stderr.read() if proc.stderr else ''}"
                    try:
                        async with Client(streamable_http_client(gateway, http_client=http), mode="legacy") as probe:
                            return not (await probe.call_tool("call_tool", {"name": "up_echo", "arguments": {"text": "up?"}})).is_error
                    except Exception:
                        return False

                assert await until(answered, 60, interval=0.1)
                upstream.seen.clear()
                async with Client(streamable_http_client(gateway, http_client=http), mode="legacy") as client:
                    found = await client.call_tool("find_tools", {"query": "echo text back"})
                    assert not found.is_error
                    called = await client.call_tool("call_tool", {"name": "up_echo", "arguments": {"text": "traced"}})
                    assert not called.is_error and "traced" in json.dumps(called.model_dump(mode="json"))

            wanted = {"tools/call find_tools", "toolscout.search", "tools/call call_tool", "toolscout.run", "toolscout.upstream"}
            assert await until(lambda: wanted <= receiver.names(TRACE), 30), receiver.names(TRACE)
        finally:
            stop(proc)

    ours = [s for s in receiver.spans if s["trace_id"] == TRACE]
    assert {s["service"] for s in ours} == {"toolscout-test"}
    # the guard's stages of the proxied call are spans of the same trace
    assert {"toolscout.identify", "toolscout.visibility", "toolscout.screening", "toolscout.audit"} <= receiver.names(TRACE)
    # the gateway's outermost spans are children of the client's span
    ids = {s["span_id"] for s in ours}
    roots = [s for s in ours if s["parent_id"] not in ids]
    assert roots and all(s["parent_id"] == PARENT for s in roots), roots
    # the upstream was called in the same trace, as a child of one of the gateway's spans
    assert upstream.params, "the upstream saw no tools/call"
    version, trace_id, parent_id, _flags = str((upstream.params[-1].get("_meta") or {}).get("traceparent")).split("-")
    assert (version, trace_id) == ("00", TRACE)
    assert parent_id in ids
