"""Run ``toolscout serve`` with clock marks at the stage boundaries of a proxied ``tools/call``.

Started by benchmarks/passthrough_stages.py as ``python _passthrough_probe.py OUT serve ...``
with the tree under test first on the path. Before the CLI builds the app it wraps, by name
(a mark is skipped where a tree lacks the name):

- uvicorn's ``RequestResponseCycle.run_asgi``: the HTTP request's start, and the first body
  bytes sent after the handler returned (the answer leaving, SSE event or JSON body);
- the SDK's ``StreamableHTTPSessionManager._handle_request``: past toolscout's own ASGI
  layers (host and origin, identity, the HTTP API's mounts, session owners), into the SDK's;
- ``GatewayServer._call_tool``: toolscout's MCP handler, start and end;
- ``Upstream.call``: the upstream round trip as the gateway sees it, start and end.

On SIGUSR1 the marks of every complete call go to OUT as JSON (one list of seven times each);
the benchmark reads them between its own calls, one call at a time, so the marks of one
request never interleave with another's.
"""

from __future__ import annotations

import functools
import json
import signal
import sys
import time
from typing import Any

OUT = sys.argv.pop(1)
MARKS = ("request_in", "sdk_in", "handler_in", "upstream_out", "upstream_back", "handler_out", "answer_out")
calls: list[dict[str, float]] = []


def _mark(name: str) -> None:
    if calls and name not in calls[-1]:
        calls[-1][name] = time.perf_counter()


def _install() -> None:
    from uvicorn.protocols.http import h11_impl

    run_asgi = h11_impl.RequestResponseCycle.run_asgi

    async def probed_run_asgi(self: Any, app: Any) -> None:
        if self.scope.get("method") != "POST":
            return await run_asgi(self, app)
        calls.append({"request_in": time.perf_counter()})
        record = calls[-1]

        async def probed_app(scope: Any, receive: Any, send: Any) -> None:
            async def probed_send(message: Any) -> None:
                if message.get("type") == "http.response.body" and message.get("body") and "handler_out" in record:
                    record.setdefault("answer_out", time.perf_counter())
                await send(message)

            await app(scope, receive, probed_send)

        return await run_asgi(self, probed_app)

    h11_impl.RequestResponseCycle.run_asgi = probed_run_asgi  # type: ignore[method-assign]

    def around(cls: Any, method: str, start: str, end: str) -> None:
        inner = getattr(cls, method, None)
        if inner is None:
            return

        @functools.wraps(inner)
        async def probed(*args: Any, **kwargs: Any) -> Any:
            _mark(start)
            try:
                return await inner(*args, **kwargs)
            finally:
                _mark(end)

        setattr(cls, method, probed)

    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    handle = StreamableHTTPSessionManager._handle_request

    async def probed_handle(self: Any, scope: Any, receive: Any, send: Any) -> None:
        if scope.get("method") == "POST":
            _mark("sdk_in")
        return await handle(self, scope, receive, send)

    StreamableHTTPSessionManager._handle_request = probed_handle  # type: ignore[method-assign]
    try:
        from toolscout.server.mcp import GatewayServer

        around(GatewayServer, "_call_tool", "handler_in", "handler_out")
    except ImportError:
        pass
    from toolscout.sources.mcp.upstream import Upstream

    around(Upstream, "call", "upstream_out", "upstream_back")


def _dump(*_: Any) -> None:
    complete = [[c[m] for m in MARKS] for c in calls if all(m in c for m in MARKS)]
    with open(OUT, "w") as f:
        json.dump(complete, f)


if __name__ == "__main__":
    _install()
    signal.signal(signal.SIGUSR1, _dump)
    from toolscout.cli import app

    sys.argv[0] = "toolscout"
    app()
