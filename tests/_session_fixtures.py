"""A small catalog and a scripted HTTP transport shared by the session and adapter tests."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from types import ModuleType
from typing import Any

import httpx

from toolscout import Catalog, DeferPolicy, Tool
from toolscout.gateway import Gateway
from toolscout.session import Session

WEATHER = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "City name"}},
    "required": ["city"],
}
EMAIL = {
    "type": "object",
    "properties": {"to": {"type": "string"}, "body": {"type": "string"}},
    "required": ["to", "body"],
}


def build_catalog(filler: int = 30) -> Catalog:
    """Weather, email, a tool that raises, one pinned tool, and ``filler`` unrelated tools."""
    cat = Catalog()
    cat.add(
        Tool("get_weather", "Get the current weather forecast for a city.", WEATHER),
        handler=lambda a: {"city": a["city"], "temp_c": 21},
    )
    cat.add(
        Tool("send_email", "Send an email message to a recipient address.", EMAIL),
        handler=lambda a: f"sent to {a['to']}",
    )

    def explode(args: dict[str, Any]) -> None:
        raise RuntimeError("disk on fire")

    cat.add(Tool("format_disk", "Format a storage disk partition.", {"type": "object"}), handler=explode)
    cat.add(
        Tool("read_notes", "Read the user's saved notes.", {"type": "object"}, defer=DeferPolicy.NEVER),
        handler=lambda a: "no notes",
    )
    for i in range(filler):
        cat.add(
            Tool(
                f"inventory_item_{i}",
                f"Look up warehouse inventory record number {i} by SKU.",
                {"type": "object", "properties": {"sku": {"type": "string"}}},
            ),
            handler=lambda a: "ok",
        )
    return cat


def build_session(filler: int = 30, **options: Any) -> Session:
    return Session(Gateway(build_catalog(filler)), **options)


class Script:
    """An ``httpx.MockTransport`` handler that answers each request with the next scripted
    JSON body and keeps every request body it saw. ``validate`` checks each body as it
    arrives (see ``_sdk_requests``: the SDK's own request types, unknown keys refused)."""

    def __init__(
        self,
        *bodies: dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]],
        validate: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.bodies = list(bodies)
        self.requests: list[dict[str, Any]] = []
        self.http: ModuleType = httpx
        self.validate = validate

    def __call__(self, request: Any) -> Any:
        sent = json.loads(request.content or b"{}")
        self.requests.append(sent)
        if self.validate is not None:
            try:
                self.validate(sent)
            except Exception as exc:  # a 400 is not retried: the test fails on this request
                return self.http.Response(400, json={"error": {"message": f"invalid request: {exc}"}})
        if not self.bodies:
            return self.http.Response(500, json={"error": {"message": "script exhausted"}})
        body = self.bodies.pop(0)
        return self.http.Response(200, json=body(sent) if callable(body) else body)

    def client(self, http: ModuleType = httpx) -> Any:
        """An ``http.Client`` over this script (``http`` is httpx, or the httpx2 fork some
        SDKs use)."""
        self.http = http
        return http.Client(transport=http.MockTransport(self))


def prefix_stable(lists: list[list[Any]]) -> bool:
    """Each list starts with the previous one, byte for byte (append-only)."""
    for before, after in itertools.pairwise(lists):
        if json.dumps(after[: len(before)]) != json.dumps(before):
            return False
    return True
