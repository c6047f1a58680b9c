"""Trace context at the HTTP edge and in MCP requests (:mod:`toolscout.accounting.telemetry`).

A client that traces sends W3C ``traceparent`` / ``tracestate``: in HTTP headers (any
request to ``serve``: ``/mcp``, ``/v1/...``) or in an MCP request's ``_meta``. The
HTTP app is wrapped by :class:`TraceContextMiddleware`, which makes the headers' context
current for the request (while tracing, under a server span named after the route);
:func:`trace_mcp` does the same for each ``tools/call`` from its ``_meta`` (which wins over the
headers: the MCP transport may run the call in a task the HTTP request's context does not
reach, and a client may trace per call). Without a ``traceparent`` and with tracing off,
both cost a scan of the header list or one dict lookup.
"""

from __future__ import annotations

from typing import Any

from ..accounting import telemetry

__all__ = ["TraceContextMiddleware", "trace_mcp"]

_HEADERS = (b"traceparent", b"tracestate")


class TraceContextMiddleware:
    """ASGI middleware: each HTTP request runs inside :func:`~toolscout.accounting.telemetry.incoming`
    of its trace headers."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") != "http":
            await self.app(scope, receive, send)
            return
        carrier = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope.get("headers", ()) if k in _HEADERS}
        if not carrier and not telemetry.tracing():
            await self.app(scope, receive, send)
            return
        name = f"{scope.get('method', 'GET')} {scope.get('path', '')}" if telemetry.tracing() else None
        with telemetry.incoming(carrier, name):
            await self.app(scope, receive, send)


def trace_mcp(server: Any) -> None:
    """Run each ``tools/call`` of ``server`` (a :class:`~toolscout.server.mcp.GatewayServer`)
    inside its trace context: the request's ``_meta``, else the HTTP request's headers.
    Rewrapping replaces, never stacks."""
    dispatch = getattr(server._dispatch, "__traced__", server._dispatch)

    async def traced(ctx: Any, params: Any) -> dict[str, Any]:
        carrier = _carrier(ctx, params)
        if carrier is None and not telemetry.tracing():
            return await dispatch(ctx, params)  # type: ignore[no-any-return]
        name = f"tools/call {getattr(params, 'name', '')}" if telemetry.tracing() else None
        with telemetry.incoming(carrier, name):
            return await dispatch(ctx, params)  # type: ignore[no-any-return]

    traced.__traced__ = dispatch  # type: ignore[attr-defined]
    server._dispatch = traced


def _carrier(ctx: Any, params: Any) -> Any:
    """Where this call's trace context is: its ``_meta`` if that has a ``traceparent``, else the
    headers of the HTTP request that carried it, else ``None``."""
    meta = getattr(params, "meta", None)
    if meta is not None and telemetry.parse_traceparent(_get(meta, "traceparent")) is not None:
        return meta
    request = getattr(ctx, "request", None)
    headers = getattr(request, "headers", None)
    if headers is not None and headers.get("traceparent"):
        return headers
    return None


def _get(meta: Any, key: str) -> Any:
    if isinstance(meta, dict):
        return meta.get(key)
    extra = getattr(meta, "model_extra", None)
    return extra.get(key) if isinstance(extra, dict) else getattr(meta, key, None)
