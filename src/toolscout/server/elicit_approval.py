"""Approval by asking the client's user, through MCP elicitation.

The approver the MCP server puts in a call's :class:`~toolscout.context.CallContext` while a
client that supports elicitation calls a tool whose permission kind needs approval
(``serve --approve-kinds``).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .. import approval
from ..model import Tool, canonical_json

__all__ = ["APPROVAL_SCHEMA", "ElicitApproval", "approval_of", "can_elicit"]

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean", "title": "Approve", "description": "Run this call.", "default": True}
    },
    "required": ["approve"],
}


class ElicitApproval:
    """Asks the client's user through MCP elicitation whether a call may run.

    Stateful clients (2025-11-25) get an ``elicitation/create`` request during the call.
    Stateless ones (2026-07-28) cannot take a request mid-call: the call answers with an
    ``input_required`` result carrying the elicitation (:attr:`needed`), and the client
    retries with the answer under a key bound to the tool and its arguments, so an answer
    never approves a different call. Accept runs it; decline or cancel is ``approval_denied``.
    """

    def __init__(self, ctx: Any, params: Any, stateful: bool) -> None:
        self.ctx, self.params, self.stateful = ctx, params, stateful
        self.needed: dict[str, Any] | None = None

    async def __call__(self, tool: Tool, arguments: dict[str, Any]) -> approval.Decision:
        shown = json.dumps(arguments, ensure_ascii=False, default=str)
        shown = shown if len(shown) <= 500 else shown[:499] + "…"
        message = f"Allow {tool.name} ({tool.effective_permission}) to run with {shown}?"
        if self.stateful:
            answer = await self.ctx.session.elicit_form(message, APPROVAL_SCHEMA, related_request_id=self.ctx.request_id)
            return approval_of(answer)
        key = "toolscout-approve-" + hashlib.sha256(f"{tool.name}\x1f{canonical_json(arguments)}".encode()).hexdigest()[:16]
        answer = (getattr(self.params, "input_responses", None) or {}).get(key)
        if answer is not None:
            return approval_of(answer)
        self.needed = {
            key: {
                "method": "elicitation/create",
                "params": {"mode": "form", "message": message, "requestedSchema": APPROVAL_SCHEMA},
            }
        }
        return approval.Decision.deny("waiting for the client's answer")


def approval_of(answer: Any) -> approval.Decision:
    """An elicitation answer (SDK model or dict) as a decision."""
    get = answer.get if isinstance(answer, dict) else lambda key: getattr(answer, key, None)
    action, content = get("action"), get("content") or {}
    if action == "accept":
        if isinstance(content, dict) and content.get("approve") is False:
            return approval.Decision.deny("the user did not approve it")
        return approval.Decision.allow("approved by the user")
    if action == "decline":
        return approval.Decision.deny("the user declined")
    return approval.Decision.deny("the user dismissed the request")


def can_elicit(ctx: Any) -> bool:
    """Whether this request's client declared the elicitation capability."""
    # The SDK's types load on the first call, as in server/mcp.py: not on the start-up path.
    import mcp_types as types

    try:
        wanted = types.ClientCapabilities(elicitation=types.ElicitationCapability())
        return bool(ctx.session.check_client_capability(wanted))
    except Exception:  # no session, or an SDK without the check: nobody to ask
        return False
