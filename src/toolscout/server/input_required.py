"""Multi-round-trip requests through the gateway (``InputRequiredResult``, revision 2026-07-28).

An upstream may answer ``tools/call``, ``prompts/get`` or ``resources/read`` with an
``input_required`` result: questions for the client (elicitation, sampling, roots) and an
opaque ``requestState``. The gateway passes the questions on unchanged, but never the
upstream's state as is: it hands out its own :class:`RequestStates` token, which wraps the
upstream's state and binds it to

- the caller (principal id): another caller's retry with it is refused;
- the request the client made (method, name, a digest of the arguments);
- the upstream request that asked (server, method, name), where the retry goes back to;
- an expiry.

The token is HMAC-signed with a key every replica shares (from Redis when replicas share
sessions, else the operator's ``approval_key``, else one per process), so the client's
retry verifies on whichever replica it lands. A token that fails verification is refused
with a JSON-RPC error (-32602, ``data.reason``), never run and never re-asked: a tampered
or foreign state says the client is confused or hostile, and asking again would hide it.

A retry whose state verifies runs the same request again with an
:class:`~toolscout.sources.mcp.negotiation.Exchange` that gives the client's answers and
the upstream's own state to the one upstream request that asked. Per request, the exchange
also carries the client's declared capabilities, and brings back an upstream protocol
error the client must see as such (-32021 with its ``data``).

toolscout's own approval questions to a stateless client travel the same way: the
approval's single-use ticket (:mod:`.elicit_approval`) rides inside the token, with, for
a code-mode program, the journal of the calls it made before it stopped to ask
(:mod:`toolscout.codemode.journal`), so its retry replays them instead of running them again.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from typing import Any

from ..codemode.journal import Journal, journal_scope
from ..model import canonical_json
from ..sessions.tickets import InMemoryTicketStore, TicketStore
from ..sources.mcp.negotiation import Asked, Exchange, exchange, is_input_required

__all__ = ["OWN", "PREFIX", "RequestStates", "RoundTrips", "client_capabilities"]

OWN = "toolscout"
"""The server a state names when the question was the gateway's own (an approval)."""
PARKED = "toolscout-parked"
"""The server a state names when it continues a parked call (see :class:`Parked`)."""
PARK_TTL = 300.0
"""How long a parked call waits for the client's answer before it is cancelled."""
MAX_PARKED = 1000
"""Calls parked at once at most; past it a stateful upstream's question to a stateless
client is refused as before (the client cannot take it), so waiting calls cannot pile up."""
MAX_JOURNAL = 48 * 1024
"""The largest program journal a state carries (JSON characters); a bigger one is left out
(the retried program then runs its earlier calls again) so the state stays under :data:`MAX_STATE`."""

log = logging.getLogger("toolscout.mcp")

PREFIX = "ts1."
"""Marks a state this gateway issued (approval tickets and upstream states are not)."""
MAX_STATE = 64 * 1024
"""The longest state accepted back: an upstream's own state rides inside."""


class StateRefused(Exception):
    """A ``requestState`` that claims to be ours and is not valid for this request."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class RequestStates:
    """Signs and verifies the gateway's ``requestState`` tokens (see the module docstring)."""

    def __init__(
        self,
        key: bytes | None = None,
        *,
        ttl: float = 900.0,
        store: TicketStore | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        """Without ``key``, tokens are signed with ``store``'s secret (the replicas' shared
        :class:`~toolscout.sessions.tickets.TicketStore`; by default one process's)."""
        self.store: TicketStore = store if store is not None else InMemoryTicketStore()
        self.key = key
        self.ttl = ttl
        self.clock = clock

    async def issue(self, binding: Mapping[str, Any], asked: Asked, journal: list[Any] | None = None) -> str:
        body = {
            **binding,
            "u": [asked.server, asked.method, asked.name],
            "s": asked.state,
            "e": round(self.clock() + self.ttl, 3),
        }
        if journal:
            body["j"] = journal
        payload = base64.urlsafe_b64encode(canonical_json(body).encode()).decode().rstrip("=")
        return f"{PREFIX}{payload}.{await self._sign(payload)}"

    async def verify(self, token: str, binding: Mapping[str, Any]) -> Asked:
        """The upstream request ``token`` continues; :class:`StateRefused` says why not."""
        return (await self.open(token, binding))[0]

    async def open(self, token: str, binding: Mapping[str, Any]) -> tuple[Asked, Any]:
        """``(the request it continues, the journal it carries)``, as :meth:`verify`."""
        if len(token) > MAX_STATE or token.count(".") != 2:
            raise StateRefused("malformed")
        payload, signature = token.removeprefix(PREFIX).split(".")
        if not hmac.compare_digest(signature, await self._sign(payload)):
            raise StateRefused("signature does not verify (altered, or issued by another gateway)")
        try:
            body = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        except ValueError:
            raise StateRefused("malformed") from None
        if not isinstance(body, dict):
            raise StateRefused("malformed")
        for key, value in binding.items():
            if body.get(key) != value:
                raise StateRefused("issued to another caller" if key == "p" else "issued for another request")
        expires = body.get("e")
        if not isinstance(expires, int | float) or expires < self.clock():
            raise StateRefused("expired")
        target, state = body.get("u"), body.get("s")
        if not (isinstance(target, list) and len(target) == 3 and all(isinstance(t, str) for t in target)):
            raise StateRefused("malformed")
        return Asked(target[0], target[1], target[2], state if isinstance(state, str) else None), body.get("j")

    async def _sign(self, payload: str) -> str:
        if self.key is None:
            self.key = (await self.store.asecret("request-states")).encode()
        return hmac.new(self.key, payload.encode(), hashlib.sha256).hexdigest()[:32]


def client_capabilities(ctx: Any) -> dict[str, Any] | None:
    """What this request's client declared (stateless: in the request's ``_meta``; stateful:
    at initialize), as JSON; ``None`` when the SDK does not say."""
    session = getattr(ctx, "session", None)
    for holder in (getattr(session, "_connection", None), session):
        caps = getattr(holder, "client_capabilities", None)
        if caps is None:
            params = getattr(holder, "client_params", None)
            caps = getattr(params, "capabilities", None)
        if caps is not None:
            return caps.model_dump(by_alias=True, mode="json", exclude_none=True) if hasattr(caps, "model_dump") else dict(caps)
    return None


def _answers(params: Any) -> dict[str, Any] | None:
    answers = getattr(params, "input_responses", None)
    if answers is None:
        return None
    return {
        k: v.model_dump(by_alias=True, mode="json", exclude_none=True) if hasattr(v, "model_dump") else v
        for k, v in dict(answers).items()
    }


class Parked:
    """A call from a stateless client whose stateful upstream asked something mid-call: the
    call keeps running, its questions wait for the client's retry with the answers.

    It lives in this gateway's memory (the upstream's connection does), so the retry must
    reach the same replica; elsewhere it is refused with a clear error. Unanswered after
    :data:`PARK_TTL` seconds, the call is cancelled."""

    def __init__(self) -> None:
        self.task: asyncio.Task[Any] | None = None
        self.asked = asyncio.Event()
        self._pending: dict[str, tuple[str, dict[str, Any], asyncio.Future[Any]]] = {}
        self._seq = 0
        self._timer: asyncio.TimerHandle | None = None

    async def ask(self, method: str, params: dict[str, Any]) -> Any:
        self._seq += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[f"toolscout-ask-{self._seq}"] = (method, params, future)
        self.asked.set()
        return await future

    def questions(self) -> dict[str, Any]:
        return {key: {"method": method, "params": params} for key, (method, params, _) in self._pending.items()}

    def answer(self, responses: dict[str, Any]) -> None:
        """Hand each answered question its answer; any left unanswered is asked again."""
        if self._timer is not None:
            self._timer.cancel()
        for key in [k for k in self._pending if k in responses]:
            _, _, future = self._pending.pop(key)
            if not future.done():
                future.set_result(responses[key])
        if self._pending:
            self.asked.set()

    def expire(self, ttl: float, forget: Callable[[], Any]) -> None:
        def drop() -> None:
            forget()
            self.close()

        self._timer = asyncio.get_running_loop().call_later(ttl, drop)

    def close(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
        if self.task is not None and not self.task.done():
            self.task.cancel()


class Binding(Mapping[str, Any]):
    """What a request state is bound to: principal, method, name and a digest of the
    arguments. Computed on first read: most requests carry no state and ask nothing, and
    hashing their arguments would be work on every call for nothing."""

    def __init__(self, principal: str, method: str, name: str, arguments: Any) -> None:
        self._raw = (principal, method, name, arguments)
        self._fields: dict[str, Any] | None = None

    def _data(self) -> dict[str, Any]:
        if self._fields is None:
            principal, method, name, arguments = self._raw
            digest = hashlib.sha256(canonical_json(arguments or {}).encode()).hexdigest()[:32]
            self._fields = {"p": principal, "m": method, "n": name, "a": digest}
        return self._fields

    def __getitem__(self, key: str) -> Any:
        return self._data()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data())

    def __len__(self) -> int:
        return 4


class RoundTrips:
    """The MCP edge's side of multi-round-trip requests: :meth:`begin` before a request runs,
    :meth:`finish` on what it answered."""

    def __init__(self, states: RequestStates) -> None:
        self.states = states
        self._parked: dict[str, Parked] = {}  # calls waiting for a stateless client's answer

    @staticmethod
    def binding(principal: str, method: str, name: str, arguments: Any) -> Binding:
        return Binding(principal, method, name, arguments)

    async def begin(self, ctx: Any, params: Any, modern: bool, binding: Mapping[str, Any]) -> Exchange:
        """The exchange for one client request; raises the JSON-RPC error for a bad state."""
        ex = Exchange(modern=modern, capabilities=client_capabilities(ctx), journal=Journal() if modern else None)
        state = getattr(params, "request_state", None)
        if not isinstance(state, str) or not state.startswith(PREFIX):
            return ex
        try:
            asked, journal = await self.states.open(state, binding)
        except StateRefused as exc:
            from mcp.shared.exceptions import MCPError

            raise MCPError(
                code=-32602,
                message=f"requestState refused: {exc.reason}; start the request again without it",
                data={"reason": exc.reason},
            ) from None
        if asked.server == PARKED:  # continues a call parked on this gateway
            ex.parked = asked.name
            ex.responses = _answers(params)
            return ex
        if asked.server == OWN:  # the gateway's own approval question: its ticket, its program's record
            ex.approval = asked.state
            if modern:
                ex.journal = Journal.load(journal)
            return ex
        ex.resume = asked
        ex.responses = _answers(params)
        return ex

    async def run(self, ex: Exchange, work: Callable[[], Awaitable[Any]]) -> Any:
        """Run one request for a stateless client so that a stateful upstream's mid-call
        question becomes an ``input_required`` answer (the call parked until the retry);
        for other clients, just ``work()``."""
        if ex.parked is not None:
            parked = self._parked.pop(ex.parked, None)
            if parked is None:
                from mcp.shared.exceptions import MCPError

                reason = "the call it continues is no longer waiting here (it expired, or waits on another replica)"
                raise MCPError(code=-32602, message=f"requestState refused: {reason}; start the request again", data={"reason": reason})
            parked.answer(ex.responses or {})
            return await self._wait(parked, ex)
        if not ex.modern:
            return await work()
        if len(self._parked) >= MAX_PARKED:
            return await work()
        parked = Parked()

        async def ask(method: str, params: dict[str, Any]) -> Any:
            ex.waiting = True
            try:
                return await parked.ask(method, params)
            finally:
                ex.waiting = False

        ex.ask = ask
        parked.task = asyncio.ensure_future(work())  # the exchange (and its ask) in its context
        return await self._wait(parked, ex)

    async def _wait(self, parked: Parked, ex: Exchange) -> Any:
        """The call's result, or its open questions once it has some (then it stays parked)."""
        assert parked.task is not None
        asked = asyncio.ensure_future(parked.asked.wait())
        try:
            await asyncio.wait({parked.task, asked}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            parked.task.cancel()
            raise
        finally:
            asked.cancel()
        if parked.task.done():
            parked.close()
            return parked.task.result()
        parked.asked.clear()
        key = secrets.token_urlsafe(12)
        self._parked[key] = parked
        parked.expire(PARK_TTL, lambda: self._parked.pop(key, None))
        ex.asked.append(Asked(PARKED, "tools/call", key, None))
        return {"resultType": "input_required", "inputRequests": parked.questions()}

    async def finish(self, ex: Exchange, raw: Any, binding: Mapping[str, Any]) -> Any:
        """``raw`` as the client gets it: an upstream's questions under the gateway's own
        state; an upstream error the client must see re-raised as that error."""
        if ex.error is not None:
            from mcp.shared.exceptions import MCPError

            error = ex.error.error
            raise MCPError(code=error.code, message=error.message, data=error.data)
        if is_input_required(raw) and ex.asked:
            asked = ex.asked[-1]
            raw = {**raw, "requestState": await self.states.issue(binding, asked)}
        elif is_input_required(raw):  # the gateway's own approval question
            own = raw.get("requestState")
            asked = Asked(OWN, str(binding.get("m", "")), str(binding.get("n", "")), own if isinstance(own, str) else None)
            journal = ex.journal.dump() if isinstance(ex.journal, Journal) else None
            if journal and len(json.dumps(journal, default=repr)) > MAX_JOURNAL:
                log.warning("a program's journal is too large to carry in its requestState; its retry runs its calls again")
                journal = None
            raw = {**raw, "requestState": await self.states.issue(binding, asked, journal)}
        return raw

    @staticmethod
    def unwrapped(ex: Exchange, params: Any) -> Any:
        """``params`` as the gateway's approval sees them: its own ticket as the state."""
        if ex.approval is None or not hasattr(params, "model_copy"):
            return params
        return params.model_copy(update={"request_state": ex.approval})

    @staticmethod
    @contextlib.contextmanager
    def scope(ex: Exchange) -> Iterator[Exchange]:
        """Run one client request with ``ex`` (and its program journal) in effect."""
        with exchange(ex), journal_scope(ex.journal):
            yield ex
