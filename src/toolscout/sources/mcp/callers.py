"""What a server sends the caller mid-call: sampling, elicitation and log messages.

While it serves a call, a server may ask the client something (sampling, elicitation) or
log to it: both go to the client that made the call (the call's
:class:`~toolscout.context.Relay`), never to another session. On streamable HTTP the
request rides the call's own response stream, so the SDK hands it to us in the caller's
context; on stdio nothing on the wire says which call it belongs to, so it goes to the
only call in flight, and is refused (a clear error to the server) when several are.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ...context import Relay, current
from ...errors import ToolscoutError
from . import negotiation
from .config import ServerConfig

__all__ = ["CallerRelay", "masked"]

log = logging.getLogger("toolscout.mcp")


class CallerRelay:
    """The calls in flight to one upstream, and the way back to each one's caller."""

    def __init__(self, name: str, config: ServerConfig) -> None:
        self.name = name
        self.config = config
        self.guard: Callable[[str, dict[str, Any], Any], Awaitable[dict[str, Any]]] | None = None
        """Forwards a sampling or elicitation request to the caller through the gateway's
        guard (audited, screened like results: :func:`toolscout.access.guard.relay_through`);
        ``None``: straight to the call's relay."""
        self.inflight: dict[int, Relay | None] = {}  # per request in flight: its caller's relay
        self.exchanges: dict[int, negotiation.Exchange | None] = {}  # ... and its caller's exchange
        self._seq = 0

    def enter(self) -> int:
        """Note a request going out for the current caller; the token :meth:`leave` takes."""
        self._seq += 1
        token = self._seq
        self.inflight[token] = current().relay
        self.exchanges[token] = negotiation.current_exchange()
        return token

    def leave(self, token: int) -> None:
        self.inflight.pop(token, None)
        self.exchanges.pop(token, None)

    def caller(self) -> tuple[Relay | None, str]:
        """The relay of the call this server request belongs to, or why there is none."""
        mine = current().relay
        if mine is not None and any(r is mine for r in self.inflight.values()):
            return mine, ""  # streamable HTTP: it came on that call's own stream
        if not self.inflight:
            return None, "no call to this server is in progress"
        if len(self.inflight) > 1:
            return None, "several calls to this server are in progress and the request does not say which it serves"
        (only,) = self.inflight.values()
        return only, "" if only is not None else "the client that made the call cannot take requests"

    async def relay_request(self, capability: str, method: str, params: Any, result: Any) -> Any:
        """Forward one server-to-client request to the caller; an ``ErrorData`` if it cannot be."""
        import mcp_types as types
        from mcp.shared.exceptions import MCPError

        relay, why = self.caller()
        ex = negotiation.asking(negotiation.current_exchange(), list(self.exchanges.values()))
        if (relay is None or not relay.supports(capability)) and ex is not None and ex.ask is not None:
            try:  # a stateless client: the question goes out in the answer, the call waits (.negotiation)
                return result.model_validate(await ex.ask(method, params.model_dump(by_alias=True, mode="json", exclude_none=True)))
            except MCPError as exc:
                return exc.error
            except Exception as exc:  # expired, or answered nonsense
                return types.ErrorData(code=types.INTERNAL_ERROR, message=f"toolscout could not relay {method}: {exc}")
        if relay is None:
            return types.ErrorData(code=types.INVALID_REQUEST, message=f"toolscout cannot relay {method}: {why}")
        if not relay.supports(capability):  # what a client without the capability answers
            return types.ErrorData(
                code=types.METHOD_NOT_FOUND, message=f"the client does not support {capability} ({method})"
            )
        raw = params.model_dump(by_alias=True, mode="json", exclude_none=True)
        try:
            if self.guard is not None:  # screened, then forwarded, and recorded
                return result.model_validate(await self.guard(method, raw, relay))
            return result.model_validate(await relay.request(method, raw))
        except ToolscoutError as exc:
            return types.ErrorData(code=types.INVALID_REQUEST, message=f"{exc.code}: {exc.message}")
        except MCPError as exc:
            return exc.error
        except Exception as exc:  # the client went away, or answered nonsense
            return types.ErrorData(code=types.INTERNAL_ERROR, message=f"toolscout could not relay {method}: {exc}")

    async def on_sampling(self, context: Any, params: Any) -> Any:
        import mcp_types as types

        return await self.relay_request("sampling", "sampling/createMessage", params, types.CreateMessageResult)

    async def on_elicitation(self, context: Any, params: Any) -> Any:
        import mcp_types as types

        return await self.relay_request("elicitation", "elicitation/create", params, types.ElicitResult)

    async def on_log(self, params: Any) -> None:
        """A log message during a call reaches that caller only, with this server's secrets masked."""
        relay, _ = self.caller()
        if relay is None:
            return  # outside any call (or ambiguous): nobody's to read
        raw = masked(params.model_dump(by_alias=True, mode="json", exclude_none=True), self.config.redact)
        try:
            await relay.notify("notifications/message", raw)
        except Exception as exc:  # the client went away: its log goes with it
            log.debug("upstream %s: log not relayed: %s", self.name, exc)


def masked(value: Any, redact: Callable[[str], str]) -> Any:
    """``value`` (JSON data) with ``redact`` applied to every string in it, keys included."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {redact(k): masked(v, redact) for k, v in value.items()}
    if isinstance(value, list):
        return [masked(v, redact) for v in value]
    return value
