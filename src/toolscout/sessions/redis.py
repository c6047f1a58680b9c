"""Sessions in Redis: a conversation keeps what it revealed across worker processes and
gateway replicas (``toolscout[redis]``).

Each session is one Redis hash, ``{prefix}{session id}``, with two fields: ``rev`` (a
revision number) and ``state`` (:meth:`Session.state` as JSON). Its TTL is refreshed
whenever the session is used, so an idle conversation expires and an active one never does.

Per handled call a session costs at most two round trips, both Lua scripts:

- **refresh** (before the call): returns only the revision when the session did not
  change elsewhere (a few bytes), or the revision and state when it did;
- **save** (after the call, only when the state changed): a compare-and-set on the
  revision. When another worker wrote first, the same reply carries the stored state; the
  two are merged here (three-way: the state last synced, ours, theirs) and the write is
  retried. Both sides' reveals survive; a tool one side evicted or lost stays out; search
  counters add up; the reveal cap holds (least recently used first out).

Why compare-and-set and not a merge in Lua: the merge needs the session's rules (the cap,
recency, counters) and is plain Python here, testable on its own (:func:`merge_states`);
the script only makes "write if nobody else did" atomic, in one round trip.

Failures: a refresh that cannot reach Redis raises :class:`SessionStoreUnavailable` (the
session answers it as a structured error before anything runs); a save that cannot reach
it logs a warning and keeps the change in this process, written with the next save. The
client reconnects on its own once Redis is back: nothing needs a restart.
"""

from __future__ import annotations

import asyncio
import json
import logging
import weakref
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from .._sync import run_inline
from ..errors import ConfigError, MissingExtra, SessionStoreUnavailable
from ..session import Session
from .state_merge import merge_states
from .tickets import RedisTicketStore

if TYPE_CHECKING:
    from ..gateway import Gateway

__all__ = ["DEFAULT_PREFIX", "DEFAULT_TTL", "RedisSessionStore", "merge_states"]

log = logging.getLogger("toolscout.sessions")
_T = TypeVar("_T")

DEFAULT_TTL = 86_400
"""Seconds an unused session is kept (refreshed on every use)."""
DEFAULT_PREFIX = "toolscout:session:"
DEFAULT_TIMEOUT = 1.0
"""Seconds to connect or to wait for an answer: a dead Redis fails fast."""
_MAX_ATTEMPTS = 16

# KEYS[1] session; ARGV: revision known here ("" for none), TTL in ms.
_LOAD = """
local rev = redis.call('HGET', KEYS[1], 'rev')
if not rev then return false end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if rev == ARGV[1] then return {rev} end
return {rev, redis.call('HGET', KEYS[1], 'state') or ''}
"""
# KEYS[1] session; ARGV: expected revision ("0" when absent), state JSON, TTL in ms.
_SAVE = """
local rev = redis.call('HGET', KEYS[1], 'rev') or '0'
if rev ~= ARGV[1] then return {rev, redis.call('HGET', KEYS[1], 'state') or ''} end
local new = tostring(tonumber(rev) + 1)
redis.call('HSET', KEYS[1], 'rev', new, 'state', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return {new}
"""
# KEYS[1] session; ARGV: TTL in ms. Makes a session known (an MCP session at initialize).
_MARK = """
redis.call('HSETNX', KEYS[1], 'rev', '0')
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
"""

# KEYS[1] session; ARGV: owner, TTL in ms. Records who opened it; the first owner stays.
# Never writes 'rev': a session whose state the store lost stays "not stored" for _LOAD
# (the replica keeps its own copy) rather than becoming an empty stored one.
_OWN = """
redis.call('HSETNX', KEYS[1], 'owner', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""


@dataclass(slots=True)
class _Book:
    """What a session knows of its stored copy: the revision, the state stored at that
    revision (``remote``) and this session's own state when it last matched (``base``)."""

    rev: str | None = None  # None: never loaded
    remote: dict[str, Any] | None = None
    base: dict[str, Any] | None = None


def _newer(rev: str, than: str | None) -> bool:
    try:
        return than is None or int(rev) >= int(than)
    except ValueError:
        return True


def _decode(raw: Any) -> dict[str, Any] | None:
    if not raw:
        return None
    try:
        value = json.loads(raw)
    except ValueError:
        log.warning("a stored session state is not JSON; treating it as empty")
        return None
    return value if isinstance(value, dict) else None


_ENCODER = json.JSONEncoder(separators=(",", ":"))  # ASCII escapes: the faster C path


def _encode(state: dict[str, Any]) -> str:
    return _ENCODER.encode(state)


def _where(url: str) -> str:
    """The URL without credentials (it appears in errors and logs)."""
    parts = urlsplit(url)
    host = parts.hostname or parts.path or "?"
    host = f"[{host}]" if parts.hostname and ":" in host else host
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path if parts.hostname else ''}"


class RedisSessionStore:
    """Session state in Redis, shared by every process that points at the same server: a
    :class:`~toolscout.sessions.store.SessionStore`.

    ``Session(gateway, session_id=..., store=RedisSessionStore(url))`` loads the session now,
    refreshes it before each handled call and saves it after; with ``gateway``,
    :meth:`session` gets or creates, :meth:`get`, :meth:`put`, :meth:`drop`. What this store
    knows of each session's stored copy (revision, state last synced) is kept here, keyed by
    the session object, never written into the session.

    ``ttl``: seconds an unused session is kept (every use restarts it). ``prefix``: the key
    prefix (several gateways can share one Redis). ``timeout``: seconds to connect or wait.
    ``session_options`` are passed to every :class:`Session` this store creates.
    """

    engine = "redis"

    def __init__(
        self,
        url: str,
        gateway: Gateway | None = None,
        *,
        ttl: float = DEFAULT_TTL,
        prefix: str = DEFAULT_PREFIX,
        timeout: float = DEFAULT_TIMEOUT,
        **session_options: Any,
    ) -> None:
        try:
            import redis  # noqa: F401
        except ImportError:
            raise MissingExtra("Sessions in Redis", "redis") from None
        if urlsplit(url).scheme not in ("redis", "rediss", "unix"):
            raise ConfigError(
                f"not a Redis URL: {_where(url)!r}", hint="Use redis://host:6379/0 (rediss:// for TLS, unix:///path.sock)."
            )
        if not ttl > 0:
            raise ConfigError(f"session TTL must be positive seconds, not {ttl!r}")
        self.url = url
        self.where = _where(url)
        self.gateway = gateway
        self.ttl = ttl
        self.prefix = prefix
        self.timeout = timeout
        self.session_options = session_options
        self._ttl_ms = str(max(1, round(ttl * 1000)))
        self._client: Any = None
        self._scripts: Any = None
        self._aclients: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, tuple[Any, Any]] = (
            weakref.WeakKeyDictionary()
        )
        self._down = False
        self._books: weakref.WeakKeyDictionary[Session, _Book] = weakref.WeakKeyDictionary()
        self._tickets: RedisTicketStore | None = None

    def __repr__(self) -> str:
        return f"RedisSessionStore({self.where!r}, ttl={self.ttl}, prefix={self.prefix!r})"

    def key(self, session_id: str) -> str:
        return f"{self.prefix}{session_id}"

    def _book(self, session: Session) -> _Book:
        book = self._books.get(session)
        if book is None:
            book = self._books[session] = _Book()
        return book

    # -- clients ----------------------------------------------------------------------
    def _options(self, retry_cls: Any) -> dict[str, Any]:
        from redis.backoff import NoBackoff

        # One immediate retry: a pooled connection that died with a Redis restart is
        # replaced on the spot, while a Redis that is down still fails within ``timeout``.
        return {
            "decode_responses": True,
            "socket_connect_timeout": self.timeout,
            "socket_timeout": self.timeout,
            "retry": retry_cls(NoBackoff(), 1),
        }

    def _sync(self) -> tuple[Any, Any]:
        if self._client is None:
            import redis
            from redis.retry import Retry

            self._client = redis.Redis.from_url(self.url, **self._options(Retry))
            self._scripts = _Scripts(self._client)
        return self._client, self._scripts

    def _async(self) -> tuple[Any, Any]:
        loop = asyncio.get_running_loop()
        entry = self._aclients.get(loop)
        if entry is None:  # a client per event loop: its connections belong to that loop
            import redis.asyncio
            from redis.asyncio.retry import Retry

            client = redis.asyncio.Redis.from_url(self.url, **self._options(Retry))
            entry = self._aclients[loop] = (client, _Scripts(client))
        return entry

    def _failed(self, exc: Exception, doing: str) -> SessionStoreUnavailable:
        if not self._down:
            log.warning("session store %s unreachable (%s): %s", self.where, doing, exc)
        self._down = True
        return SessionStoreUnavailable(
            f"the session store ({self.where}) cannot be reached: {type(exc).__name__}: {exc}", store=self.where
        )

    def _ok(self) -> None:
        if self._down:
            log.warning("session store %s reachable again", self.where)
            self._down = False

    @staticmethod
    def _errors() -> tuple[type[Exception], ...]:
        from redis.exceptions import RedisError

        return (RedisError, OSError)

    # -- one session's state, kept in step --------------------------------------------
    def attach(self, session: Session, *, load: bool = True) -> None:
        """Bind ``session`` to this store and, with ``load``, bring in its stored state
        (if Redis cannot be reached now, the first handled call loads it or says why)."""
        session.store = self
        book = self._book(session)
        if load:
            try:
                self.refresh(session)
            except SessionStoreUnavailable:
                book.rev = None

    def refresh(self, session: Session) -> None:
        """Catch up with what other workers wrote for this session (one round trip)."""
        _, scripts = self._sync()
        book = self._book(session)
        try:
            reply = scripts.load(keys=[self.key(session.id)], args=[book.rev or "", self._ttl_ms])
        except self._errors() as exc:
            raise self._failed(exc, "refresh") from None
        self._ok()
        self._loaded(session, book, reply)

    async def arefresh(self, session: Session) -> None:
        _, scripts = self._async()
        book = self._book(session)
        try:
            reply = await scripts.load(keys=[self.key(session.id)], args=[book.rev or "", self._ttl_ms])
        except self._errors() as exc:
            raise self._failed(exc, "refresh") from None
        self._ok()
        self._loaded(session, book, reply)

    def _loaded(self, session: Session, book: _Book, reply: Any) -> None:
        if reply is None:  # not stored (new, expired or dropped): the next save writes ours
            book.rev, book.remote = "0", None
            return
        rev = str(reply[0])
        if len(reply) == 1 or not _newer(rev, book.rev):
            book.rev = rev if _newer(rev, book.rev) else book.rev
            return
        self._take(session, book, rev, _decode(reply[1]))

    def _take(self, session: Session, book: _Book, rev: str, theirs: dict[str, Any] | None) -> None:
        """Fold the stored state at ``rev`` into the session, keeping its unsaved changes."""
        ours = session.state()
        pending = book.base is not None and ours != book.base
        merged = merge_states(book.base, ours, theirs, max_revealed=session.max_revealed)
        if merged != ours:
            session.adopt(merged)
        book.rev, book.remote = rev, theirs
        if not pending:
            book.base = session.state()

    def save(self, session: Session) -> bool:
        """Write the session if it changed (one round trip; more only when another worker
        wrote it meanwhile). Never raises: an unreachable store keeps the change here."""
        _, scripts = self._sync()

        async def write(job: _Job) -> Any:  # the sync client's call: never suspends
            return scripts.save(keys=[job.key], args=job.args)

        return run_inline(self._save(session, write))

    async def asave(self, session: Session) -> bool:
        _, scripts = self._async()
        return await self._save(session, lambda job: scripts.save(keys=[job.key], args=job.args))

    async def _save(self, session: Session, write: Callable[[_Job], Awaitable[Any]]) -> bool:
        """The one body of :meth:`save` and :meth:`asave`: ``write`` runs the save script."""
        try:
            for _ in range(_MAX_ATTEMPTS):
                job = self._job(session)
                if job is None:
                    return False
                if self._saved(session, job, await write(job)):
                    return True
        except self._errors() as exc:
            self._failed(exc, "save")
            return False
        log.warning("session %s: gave up saving after %d conflicting writes", session.id, _MAX_ATTEMPTS)
        return False

    def _job(self, session: Session) -> _Job | None:
        book = self._book(session)
        ours = session.state()
        if book.rev not in (None, "0") and ours == book.base:  # "0": Redis does not hold it
            return None
        if book.remote is None or book.remote == book.base:  # in step: ours is the new state
            merged = ours
        else:
            merged = merge_states(book.base, ours, book.remote, max_revealed=session.max_revealed)
        expected = book.rev if book.rev is not None else "0"
        return _Job(self.key(session.id), ours, merged, [expected, _encode(merged), self._ttl_ms])

    def _saved(self, session: Session, job: _Job, reply: Any) -> bool:
        self._ok()
        book = self._book(session)
        rev = str(reply[0])
        if len(reply) == 1:  # written
            now = session.state()
            if now == job.ours:  # nothing happened here meanwhile (the usual case)
                if job.merged is not job.ours and job.merged != now:
                    session.adopt(job.merged)
                    now = session.state()
                book.rev, book.remote, book.base = rev, job.merged, now
                return True
            local = merge_states(job.ours, now, job.merged, max_revealed=session.max_revealed)
            if local != now:
                session.adopt(local)
            book.rev, book.remote, book.base = rev, job.merged, job.ours
            return True
        book.rev, book.remote = rev, _decode(reply[1])  # someone wrote first: merge, retry
        if book.base is None:
            book.base = {}
        return False

    # -- whole sessions by id ----------------------------------------------------
    def session(self, session_id: str | None = None) -> Session:
        """The session with this id, loaded from Redis, or a new one."""
        if self.gateway is None:
            raise ConfigError("RedisSessionStore.session() needs the gateway: RedisSessionStore(url, gateway)")
        return Session(self.gateway, session_id=session_id, store=self, **self.session_options)

    def get(self, session_id: str) -> Session | None:
        return self.session(session_id) if self.exists(session_id) else None

    def put(self, session: Session) -> None:
        if session.store is not self:
            self.attach(session, load=False)
        self.save(session)

    def drop(self, session_id: str) -> None:
        client, _ = self._sync()
        try:
            client.delete(self.key(session_id))
        except self._errors() as exc:
            raise self._failed(exc, "drop") from None

    async def adrop(self, session_id: str) -> None:
        client, _ = self._async()
        try:
            await client.delete(self.key(session_id))
        except self._errors() as exc:
            raise self._failed(exc, "drop") from None

    def exists(self, session_id: str) -> bool:
        client, _ = self._sync()
        try:
            return bool(client.exists(self.key(session_id)))
        except self._errors() as exc:
            raise self._failed(exc, "lookup") from None

    async def aexists(self, session_id: str) -> bool:
        client, _ = self._async()
        try:
            return bool(await client.exists(self.key(session_id)))
        except self._errors() as exc:
            raise self._failed(exc, "lookup") from None

    async def amark(self, session_id: str) -> None:
        """Make a session known before it has any state (an MCP session at initialize), so
        another replica accepts its id."""
        _, scripts = self._async()
        try:
            await scripts.mark(keys=[self.key(session_id)], args=[self._ttl_ms])
        except self._errors() as exc:
            raise self._failed(exc, "mark") from None
        self._ok()

    async def aown(self, session_id: str, owner: str) -> None:
        """Record who opened a session (an MCP session at initialize), beside its state: it
        expires and is dropped with the session, and every replica reads the same owner
        (:mod:`toolscout.server.session_owners`). An owner already recorded is never
        replaced."""
        _, scripts = self._async()
        try:
            await scripts.own(keys=[self.key(session_id)], args=[owner, self._ttl_ms])
        except self._errors() as exc:
            raise self._failed(exc, "own") from None
        self._ok()

    async def aowner(self, session_id: str) -> str | None:
        """Who opened the session (``None``: unknown, or opened before owners were kept)."""
        client, _ = self._async()
        try:
            found = await client.hget(self.key(session_id), "owner")
        except self._errors() as exc:
            raise self._failed(exc, "lookup") from None
        return found.decode() if isinstance(found, bytes) else found

    async def acommand(self, doing: str, command: Callable[[Any], Awaitable[_T]]) -> _T:
        """``command(client)`` on this event loop's client, with this store's error wording
        (an unreachable Redis raises :class:`SessionStoreUnavailable` naming ``doing``): what
        the ticket store (:attr:`tickets`) runs on this connection."""
        client, _ = self._async()
        try:
            return await command(client)
        except self._errors() as exc:
            raise self._failed(exc, doing) from None

    @property
    def tickets(self) -> RedisTicketStore:
        """The approval-ticket store on this Redis (:mod:`toolscout.sessions.tickets`)."""
        if self._tickets is None:
            self._tickets = RedisTicketStore(self)
        return self._tickets

    async def aput_note(self, name: str, value: str, ttl: float) -> None:
        """Keep a small value under ``name`` for ``ttl`` seconds where every replica reads it
        (a session's log level: its next request may reach another replica)."""
        client, _ = self._async()
        try:
            await client.set(self.key(f"note:{name}"), value, px=max(1, round(ttl * 1000)))
        except self._errors() as exc:
            raise self._failed(exc, "note") from None

    async def aget_note(self, name: str) -> str | None:
        client, _ = self._async()
        try:
            value = await client.get(self.key(f"note:{name}"))
        except self._errors() as exc:
            raise self._failed(exc, "note") from None
        return value.decode() if isinstance(value, bytes) else value

    def ping(self) -> bool:
        """Whether Redis answers now (for readiness checks); never raises."""
        client, _ = self._sync()
        try:
            return bool(client.ping())
        except self._errors():
            return False

    async def aping(self) -> bool:
        client, _ = self._async()
        try:
            return bool(await client.ping())
        except self._errors():
            return False

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    async def aclose(self) -> None:
        """Close this event loop's client (and the sync one)."""
        entry = self._aclients.pop(asyncio.get_running_loop(), None)
        if entry is not None:
            await entry[0].aclose()
        self.close()


@dataclass(slots=True)
class _Job:
    key: str
    ours: dict[str, Any]
    merged: dict[str, Any]
    args: list[str]


class _Scripts:
    """The scripts, registered on one client (loaded again after a Redis restart)."""

    def __init__(self, client: Any) -> None:
        self.load = client.register_script(_LOAD)
        self.save = client.register_script(_SAVE)
        self.mark = client.register_script(_MARK)
        self.own = client.register_script(_OWN)
