"""What the team-gateway tests share: the issuer's clients, the operator's policies, a
small catalog split between two teams, and an in-process HTTP server."""

from __future__ import annotations

import asyncio
from typing import Any

import uvicorn

from toolscout import Catalog, Tool
from toolscout.access.principal import PRINCIPAL_KEY
from toolscout.context import Principal

OBJ = {"type": "object"}
CLIENTS = [
    {"id": "alice", "groups": ["eng"]},
    {"id": "bob", "groups": ["sales"]},
    {"id": "carol", "groups": ["eng", "admins"]},
    {"id": "dave", "groups": ["eng"]},
    {"id": "erin", "groups": ["sales"]},
    {"id": "opaque-agent", "groups": ["eng"], "opaque": True},
    {"id": "gateway", "groups": []},
]
POLICIES = [
    {"match": {"groups": "eng"}, "tools": ["github_*", "weather_*", "mail_*", "chat_*"], "approve": ["dangerous"]},
    {"match": {"groups": "sales"}, "tools": ["crm_*", "weather_*", "mail_*", "chat_*"]},
]


class AsUser:
    """Test-only identity (the seam an authenticating middleware fills): ``X-Test-User: alice`` makes the request alice's."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            user = dict(scope.get("headers") or []).get(b"x-test-user")
            if user:
                scope = {**scope, PRINCIPAL_KEY: Principal(user.decode(), "user")}
        await self.app(scope, receive, send)


def catalog() -> Catalog:
    cat = Catalog()
    tools = {
        "github_create_issue": "Create an issue in a GitHub repository.",
        "github_delete_repository": "Delete a GitHub repository for good.",
        "crm_lookup_customer": "Look up a customer record in the CRM.",
        "crm_export_leads": "Export sales leads from the CRM.",
        "weather_forecast": "Forecast the weather for a city.",
        "chat_post_message": "Post a chat message to a channel.",
        "mail_send_email": "Send an email message to a recipient.",
    }
    for name, text in tools.items():
        kind = "dangerous" if "delete" in name else None
        cat.add(Tool(name, text, OBJ, permission=kind), handler=lambda a, n=name: f"{n} done")
    cat.add(Tool("github_status", "Show GitHub's service status.", OBJ, defer="never"), handler=lambda a: "green")
    for i in range(8):
        cat.add(Tool(f"filler_{i}", f"Look up warehouse record {i}.", OBJ), handler=lambda a: "ok")
    return cat



async def serve(app: Any, port: int) -> tuple[uvicorn.Server, asyncio.Future[None]]:
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    task = asyncio.ensure_future(server.serve())
    while not server.started:  # readiness, not timing: uvicorn sets this once bound
        if task.done():
            task.result()
        await asyncio.sleep(0.01)
    return server, task
