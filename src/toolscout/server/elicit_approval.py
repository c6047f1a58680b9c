"""Approval by asking the client's user, through MCP elicitation.

The approver the MCP server puts in a call's :class:`~toolscout.context.CallContext` while a
client that supports elicitation calls a tool whose permission kind needs approval
(``serve --approve-kinds``).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import secrets
import time
from collections.abc import Callable
from typing import Any

from ..access import approval
from ..model import Tool, canonical_json
from ..sessions.tickets import InMemoryTicketStore, TicketStore

__all__ = ["APPROVAL_SCHEMA", "ApprovalTickets", "ElicitApproval", "approval_of", "can_elicit", "may_ask"]

APPROVAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "approve": {"type": "boolean", "title": "Approve", "description": "Run this call.", "default": True}
    },
    "required": ["approve"],
}


class ApprovalTickets:
    """Stateless approvals that cannot be replayed: each question carries a signed ticket.

    A 2026-07-28 client answers an approval by retrying the call with the answer and the
    ``requestState`` the question came with. That state is a ticket, HMAC-signed with this
    gateway's key, naming the session, the tool, a hash of the canonical arguments, an
    expiry and a nonce; the answer is keyed by the nonce. An answer counts only with a
    ticket that verifies, matches this call exactly, has not expired and whose nonce was
    never used (each is used once): anything else is asked again, never run.

    Nonces are claimed in ``store`` (a :class:`~toolscout.sessions.tickets.TicketStore`),
    and the key, unless one is given, is the store's secret. The default store is one
    process's memory (a random key, claims remembered until they expire); replicas pass
    the one they share (``RedisSessionStore(url).tickets``), so any replica checks a ticket
    and none accepts it twice; if Redis cannot be reached the approval fails closed.
    """

    def __init__(
        self,
        key: bytes | None = None,
        *,
        ttl: float = 300.0,
        clock: Callable[[], float] = time.time,
        store: TicketStore | None = None,
    ) -> None:
        self.store: TicketStore = store if store is not None else InMemoryTicketStore()
        self.key = key
        self.ttl = ttl
        self.clock = clock

    async def issue(self, session: str, tool: str, arguments: dict[str, Any]) -> tuple[str, str]:
        """A fresh ``(nonce, ticket)`` for this exact call in ``session``."""
        nonce = secrets.token_urlsafe(12)
        body = {"s": session, "t": tool, "a": _digest(arguments), "e": round(self.clock() + self.ttl, 3), "n": nonce}
        payload = base64.urlsafe_b64encode(canonical_json(body).encode()).decode().rstrip("=")
        return nonce, f"{payload}.{await self._sign(payload)}"

    async def redeem(self, ticket: Any, session: str, tool: str, arguments: dict[str, Any]) -> str | None:
        """The ticket's nonce if it is this gateway's, for this call, unexpired and unused
        (it is used up now); else ``None``."""
        if not isinstance(ticket, str) or ticket.count(".") != 1 or len(ticket) > 2048:
            return None
        payload, signature = ticket.split(".")
        if not hmac.compare_digest(signature, await self._sign(payload)):
            return None
        try:
            body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        except ValueError:
            return None
        now = self.clock()
        nonce = body.get("n") if isinstance(body, dict) else None
        if not isinstance(nonce, str) or (body.get("s"), body.get("t"), body.get("a")) != (session, tool, _digest(arguments)):
            return None
        expires = body.get("e")
        if not isinstance(expires, int | float) or expires < now:
            return None
        return nonce if await self.store.aclaim(f"approval:{nonce}", max(expires - now, 0.001)) else None

    async def _sign(self, payload: str) -> str:
        if self.key is None:
            self.key = (await self.store.asecret("approval-tickets")).encode()
        return hmac.new(self.key, payload.encode(), hashlib.sha256).hexdigest()[:32]


def _digest(arguments: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(arguments).encode()).hexdigest()[:32]


class ElicitApproval:
    """Asks the client's user through MCP elicitation whether a call may run.

    Stateful clients (2025-11-25) get an ``elicitation/create`` request during the call.
    Stateless ones (2026-07-28) cannot take a request mid-call: the call answers with an
    ``input_required`` result carrying the elicitation (:attr:`needed`) and a signed
    ticket as ``requestState`` (:class:`ApprovalTickets`: bound to the session, the tool and
    its arguments, expiring, single use); the client retries with the answer and the
    ticket, so an answer never approves a different call, nor the same call twice. Accept
    runs it; decline or cancel is ``approval_denied``.
    """

    def __init__(
        self, ctx: Any, params: Any, stateful: bool, *, tickets: ApprovalTickets | None = None, session: str = "", trust_hints: bool = True
    ) -> None:
        self.ctx, self.params, self.stateful = ctx, params, stateful
        self.tickets = tickets or ApprovalTickets()
        self.session, self.trust_hints = session, trust_hints
        self.needed: dict[str, Any] | None = None
        self.state: str | None = None

    async def __call__(self, tool: Tool, arguments: dict[str, Any]) -> approval.Decision:
        shown = json.dumps(arguments, ensure_ascii=False, default=str)
        shown = shown if len(shown) <= 500 else shown[:499] + "…"
        kind = (tool.effective_permission if self.trust_hints else tool.permission) or approval.UNKNOWN_KIND
        message = f"Allow {tool.name} ({kind}) to run with {shown}?"
        if self.stateful:
            answer = await self.ctx.session.elicit_form(message, APPROVAL_SCHEMA, related_request_id=self.ctx.request_id)
            return approval_of(answer)
        nonce = await self.tickets.redeem(getattr(self.params, "request_state", None), self.session, tool.name, arguments)
        answer = (getattr(self.params, "input_responses", None) or {}).get(_KEY + nonce) if nonce else None
        if answer is not None:
            return approval_of(answer)
        nonce, self.state = await self.tickets.issue(self.session, tool.name, arguments)
        self.needed = {
            _KEY + nonce: {
                "method": "elicitation/create",
                "params": {"mode": "form", "message": message, "requestedSchema": APPROVAL_SCHEMA},
            }
        }
        return approval.Decision.deny("waiting for the client's answer")


_KEY = "toolscout-approve-"


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


def may_ask(gateway: Any, name: str, arguments: Any) -> bool:
    """Whether a call of ``name`` may need the user's approval: some kind is gated, hints
    are distrusted, or the operator set an approval rule on the tool called."""
    if gateway.gated_kinds() or not gateway.trust_hints:
        return True
    if name in ("call_tool", "use_tool", "execute"):  # execute: a program may call any tool
        name = (arguments or {}).get("name") if name == "call_tool" else None
        if name is None:
            return any(t.meta.get("approval") == "always" for t in gateway.catalog if t.meta)
    tool = gateway.lookup(name) if isinstance(name, str) else None
    return tool is not None and bool(tool.meta) and tool.meta.get("approval") == "always"
