"""Skills as MCP resources (``skill://<name>``): listed for whoever may see them, read
under the caller's own rule through the guard (screened and audited like any other read),
as calling the skill would be.
"""

from __future__ import annotations

import asyncio
import inspect
from typing import Any

from ..access.guard import Operation
from ..context import CallContext
from ..errors import ToolscoutError
from ..gateway import Gateway
from ..sources.skills import SKILL_URI_PREFIX

__all__ = ["SKILL_URI_PREFIX", "install_skill_reader", "read_skill", "skill_resources"]


def install_skill_reader(gateway: Gateway) -> None:
    """Let the gateway's guard run ``skills/read`` operations (once per gateway)."""
    if not gateway.guard.handles("skills/read"):
        gateway.guard.register("skills/read", _read_skill)


def skill_resources(gateway: Gateway, allow: Any = None) -> list[dict[str, Any]]:
    """The skills the caller whose rule is ``allow`` may see, as resource entries."""
    return [
        {
            "uri": SKILL_URI_PREFIX + t.name,
            "name": t.name,
            "description": t.summary(),
            "mimeType": "text/markdown",
        }
        for t in gateway.catalog
        if t.kind == "skill" and t.searchable and gateway.visibility.admits(t, allow)
    ]


async def read_skill(gateway: Gateway, uri: str, ctx: CallContext) -> dict[str, Any]:
    """The skill at ``uri`` read for the caller ``ctx``; ``MCPError`` -32002 for an unknown
    (or hidden) skill, -32603 for a refusal."""
    from mcp.shared.exceptions import MCPError

    skill = gateway.catalog.get(uri.removeprefix(SKILL_URI_PREFIX))
    handler = gateway.catalog.handler(skill.name) if skill is not None else None
    if skill is None or skill.kind != "skill" or handler is None:
        raise MCPError(code=-32002, message=f"unknown resource {uri}")
    op = Operation("skills/read", uri, entry=skill, payload=handler)
    try:
        return await gateway.guard.run(op, ctx, hidden=lambda: _unknown_resource(uri))
    except ToolscoutError as exc:
        raise MCPError(code=-32603, message=f"{exc.code}: {exc.message}") from None


async def _read_skill(op: Operation, ctx: CallContext) -> dict[str, Any]:
    """A skill's instructions as a resource (run only by the guard: the caller's rule decided)."""
    assert op.entry is not None
    text = await asyncio.to_thread(op.payload, {})
    text = await text if inspect.isawaitable(text) else text
    return {"contents": [{"uri": op.name, "mimeType": "text/markdown", "text": text}]}


def _unknown_resource(uri: str) -> Exception:
    from mcp.shared.exceptions import MCPError

    return MCPError(code=-32002, message=f"unknown resource {uri}")
