"""Which protocol revision each upstream request goes out on, and what it carries.

An upstream reached over HTTP may speak both the stateful 2025-11-25 revision and the
stateless 2026-07-28 one, and it may offer different things on each (tools, prompts and
resources that need a multi-round-trip answer exist only on the newer one). The
:class:`~toolscout.sources.mcp.upstream.Upstream` keeps its stateful connection (what
stateful clients need: ``list_changed``, mid-call sampling and elicitation, subscriptions)
and, when the server answers ``server/discover``, a second *modern lane* next to it:

- lists come from the modern lane (the newest revision's offer), tools also from the
  stateful one, so an entry that exists on either is listed (:func:`merge_tools`);
- a call to a tool only the modern lane lists, and the retry of a multi-round-trip request,
  go out on the modern lane; everything else on the stateful connection, exactly as before
  (a proven path: a server's newer side may be less finished than its older one), except
  that a prompt or resource the session does not have is asked of the modern lane (the
  session's "not found" means nothing ran, so asking again is safe).

Per client request, an :class:`Exchange` (a context variable set at the gateway's MCP edge)
says what the upstream request must carry: the client's declared capabilities (so an
upstream can refuse one the client lacks with -32021), and, on a verified retry of a
multi-round-trip request, the client's ``inputResponses`` with the upstream's own
``requestState``, handed to the one upstream request that asked for them. What the
upstream answers back (an ``input_required`` result, or a protocol error to pass through)
is noted on the same exchange for the edge to finish (:mod:`toolscout.server.input_required`).
"""

from __future__ import annotations

import contextlib
import contextvars
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MODERN",
    "NOT_HERE",
    "PASS_THROUGH_CODES",
    "Asked",
    "Exchange",
    "again",
    "current_exchange",
    "drive",
    "exchange",
    "is_input_required",
    "merge_tools",
    "modern_lane",
    "prepare",
    "with_fallback",
]

log = logging.getLogger("toolscout.mcp")

MODERN = "2026-07-28"
"""The stateless revision the modern lane speaks."""
PASS_THROUGH_CODES = frozenset({-32021})
"""Upstream protocol errors that reach the client as JSON-RPC errors (with their ``data`` and
HTTP status), not as a failed tool result: they describe the client's request, not the tool."""
_CAPS_KEY = "io.modelcontextprotocol/clientCapabilities"
_RESUMABLE = frozenset({"tools/call", "prompts/get", "resources/read"})
_NAME_OF = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}


@dataclass
class Asked:
    """An upstream's ``input_required`` answer: which server asked, for which request."""

    server: str
    method: str
    name: str
    state: str | None


@dataclass
class Exchange:
    """What one client request lets its upstream requests carry, and what they answered."""

    modern: bool = False
    """The client speaks a stateless revision (it cannot take a request mid-call)."""
    capabilities: dict[str, Any] | None = None
    """What the client declared (forwarded on the modern lane); ``None``: unknown."""
    resume: Asked | None = None
    """On a verified retry: the upstream request it continues (its state inside)."""
    responses: dict[str, Any] | None = None
    """The client's ``inputResponses`` for that request."""
    asked: list[Asked] = field(default_factory=list)
    error: Any = None
    """An upstream ``MCPError`` in :data:`PASS_THROUGH_CODES` (the edge re-raises it)."""
    approval: str | None = None
    """The edge's own: the gateway's approval ticket this retry carries (unwrapped)."""
    journal: Any = None
    """The edge's own: the :class:`~toolscout.codemode.journal.Journal` of a code-mode program."""
    ask: Callable[[str, dict[str, Any]], Awaitable[Any]] | None = None
    """Puts a stateful upstream's mid-call request (sampling, elicitation) to a client that
    cannot take one, as a question in the answer (the edge parks the call meanwhile)."""
    parked: str | None = None
    """The edge's own: the parked call this retry answers."""
    waiting: bool = False
    """A question of this request's call is out (so a new one comes from another call)."""

    def take_resume(self, server: str, method: str, name: str) -> tuple[dict[str, Any] | None, str | None] | None:
        """The responses and state for this upstream request, once; else ``None``."""
        resume = self.resume
        if resume is None or (resume.server, resume.method, resume.name) != (server, method, name):
            return None
        self.resume = None
        return self.responses, resume.state


_CURRENT: contextvars.ContextVar[Exchange | None] = contextvars.ContextVar("toolscout_exchange", default=None)


def current_exchange() -> Exchange | None:
    return _CURRENT.get()


@contextlib.contextmanager
def exchange(value: Exchange) -> Any:
    """Make ``value`` the exchange of the code run inside (one client request)."""
    token = _CURRENT.set(value)
    try:
        yield value
    finally:
        _CURRENT.reset(token)


def asking(own: Exchange | None, inflight: list[Exchange | None]) -> Exchange | None:
    """The exchange a server's mid-call request belongs to: the caller's own (streamable
    HTTP hands it over in the call's context), else the only call in flight's (stdio)."""
    if own is not None and any(e is own for e in inflight):
        return own
    free = [e for e in inflight if e is None or not e.waiting]  # a waiting call asks nothing new
    return free[0] if len(free) == 1 else None


def is_input_required(raw: Any) -> bool:
    return isinstance(raw, Mapping) and raw.get("resultType") == "input_required"


def wants_modern(method: str, params: Mapping[str, Any] | None, modern_only: frozenset[str]) -> bool:
    """Whether a request goes out on the modern lane (when the upstream has one)."""
    if method in ("resources/subscribe", "resources/unsubscribe", "logging/setLevel", "ping"):
        return False  # the stateless revision has none of these
    if method.endswith("/list"):
        return True
    ex = _CURRENT.get()
    if ex is not None and ex.resume is not None:
        return True
    return method == "tools/call" and (params or {}).get("name") in modern_only


NOT_HERE = frozenset({-32601, -32602, -32002})
"""Errors by which a session says it has no such prompt or resource (nothing ran): the same
request may then go to the stateless lane, which may have it."""


def prepare(
    server: str, client: Any, modern: bool, method: str, params: Mapping[str, Any] | None
) -> tuple[dict[str, Any] | None, dict[str, Any]]:
    """``(params, opts)`` for one raw request on ``client``: the session's own stamp (on the
    modern lane: protocol version, client info and capabilities in ``_meta``, the standard
    headers), then the caller's capabilities and, on a retry, its answers."""
    data: dict[str, Any] = {"method": method}
    if params is not None:
        data["params"] = dict(params)
    opts: dict[str, Any] = {}
    ex = _CURRENT.get()
    resume = None
    if ex is not None and method in _RESUMABLE and params is not None:
        resume = ex.take_resume(server, method, str(params.get(_NAME_OF[method], "")))
    if resume is not None:
        responses, state = resume
        body = data.setdefault("params", {})
        if responses is not None:
            body["inputResponses"] = responses
        if state is not None:
            body["requestState"] = state
    stamp = getattr(client.session, "_stamp", None)
    if modern and stamp is not None:
        stamp(data, opts)
        if ex is not None and ex.capabilities is not None:
            data["params"]["_meta"][_CAPS_KEY] = ex.capabilities
    return data.get("params"), opts


def note_answer(server: str, method: str, params: Mapping[str, Any] | None, raw: Any) -> None:
    """Remember an upstream's ``input_required`` answer on the current exchange."""
    ex = _CURRENT.get()
    if ex is None or not is_input_required(raw) or method not in _RESUMABLE:
        return
    state = raw.get("requestState")
    name = str((params or {}).get(_NAME_OF[method], ""))
    ex.asked.append(Asked(server, method, name, state if isinstance(state, str) else None))


def note_error(exc: Any) -> None:
    """Keep an upstream error the client must see as a protocol error (:data:`PASS_THROUGH_CODES`)."""
    ex = _CURRENT.get()
    if ex is not None and getattr(exc, "code", None) in PASS_THROUGH_CODES and ex.error is None:
        ex.error = exc


MAX_ROUNDS = 8
"""Questions a stateful client is asked for one request at most (an upstream that never stops
asking must not hold the call forever)."""
_ASKS = {"elicitation/create": "elicitation", "sampling/createMessage": "sampling", "roots/list": "roots"}


def again(params: Mapping[str, Any] | None, send: Callable[..., Awaitable[dict[str, Any]]]) -> Any:
    """``send(params)`` for one round of :func:`drive`: the request with that round's answers
    and state (``send`` puts it on the stateless lane)."""

    async def retry(answers: dict[str, Any], state: str | None) -> dict[str, Any]:
        return await send({**(params or {}), "inputResponses": answers, **({"requestState": state} if state else {})})

    return retry


async def with_fallback(
    server: str,
    method: str,
    params: Mapping[str, Any] | None,
    modern_only: frozenset[str],
    send: Callable[..., Awaitable[dict[str, Any]]],
) -> dict[str, Any]:
    """A request other than a call on an upstream with both lanes (``send(modern=...)``): a
    list the stateless lane fails to give comes from the session; a prompt or resource the
    session does not have (:data:`NOT_HERE`: nothing ran) is asked of the stateless lane."""
    from mcp.shared.exceptions import MCPError

    if method.endswith("/list"):
        try:
            return await send()
        except Exception as exc:
            log.debug("upstream %s: %s on %s failed (%s); asking the session", server, method, MODERN, exc)
            return await send(modern=False)
    try:
        return await send()
    except MCPError as exc:
        if exc.code not in NOT_HERE or wants_modern(method, params, modern_only):
            raise
        return await send(modern=True)


async def drive(raw: dict[str, Any], relay: Any, retry: Callable[[dict[str, Any], str | None], Awaitable[dict[str, Any]]]) -> dict[str, Any]:
    """Answer an upstream's ``input_required`` for a client that takes requests mid-call
    (2025-11-25): each question goes to the client on the call's own channel, and the
    request is sent again with the answers, until the upstream answers for good. Returns
    ``raw`` unchanged when the client cannot answer (no relay, or a capability it lacks)."""
    ex = _CURRENT.get()
    if ex is not None and ex.modern:  # a stateless client answers in a round trip of its own
        return raw
    for _ in range(MAX_ROUNDS):
        if not is_input_required(raw):
            return raw
        requests = raw.get("inputRequests") or {}
        if relay is None or not isinstance(requests, dict) or not all(
            isinstance(r, dict) and r.get("method") in _ASKS and relay.supports(_ASKS[r["method"]]) for r in requests.values()
        ):
            return raw
        answers = {key: await relay.request(r["method"], r.get("params")) for key, r in requests.items()}
        state = raw.get("requestState")
        raw = await retry(answers, state if isinstance(state, str) else None)
    return raw


def merge_tools(stateful: list[Any], modern: list[Any] | None) -> tuple[list[Any], frozenset[str]]:
    """Every tool either lane lists (the stateful lane's entry first), and the names only the
    modern lane lists (calls to them go out on it whoever calls)."""
    if modern is None:
        return stateful, frozenset()
    have = {t.get("name") for t in stateful if isinstance(t, dict)}
    extra = [t for t in modern if isinstance(t, dict) and t.get("name") not in have]
    return [*stateful, *extra], frozenset(str(t.get("name")) for t in extra)


@contextlib.asynccontextmanager
async def modern_lane(name: str, url: str | None, make_transport: Any, enabled: bool) -> AsyncIterator[Any]:
    """A stateless (2026-07-28) client of the same HTTP server, or ``None`` when the server
    does not speak that revision (or is reached over stdio: one process, one connection).

    Probing costs one ``server/discover`` at connect; a failed probe never fails the
    stateful connection next to it.
    """
    if not enabled or url is None:
        yield None
        return
    from mcp import Client

    stack = contextlib.AsyncExitStack()
    client: Any = None
    try:  # bounded by the transport's own timeouts (the stateful session is already up)
        client = await stack.enter_async_context(Client(make_transport(), mode="auto", cache=None))
        if client is not None and client.session.discover_result is None:
            client = None  # it answered initialize only: a stateful server, nothing more to offer
    except Exception as exc:  # a server that cannot be probed is simply not modern
        log.debug("upstream %s: no %s lane: %s", name, MODERN, exc)
        client = None
    try:
        if client is not None:
            log.info("upstream %s: speaks %s (a stateless lane next to the stateful session)", name, MODERN)
        yield client
    finally:
        with contextlib.suppress(Exception):
            await stack.aclose()
