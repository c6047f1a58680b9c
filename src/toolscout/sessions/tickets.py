"""Where single-use approval tickets are claimed and their signing secrets kept.

A stateless approval (``server/elicit_approval.py``) carries a signed ticket; an answer
counts once. Two things must then be shared by every replica that may receive the answer:
the secret that signs tickets, and the record that a ticket's nonce was used. That is a
store of its own, with one small contract (:class:`TicketStore`), not a side job of the
session store: :class:`InMemoryTicketStore` for one process, :class:`RedisTicketStore`
for replicas (on the connection a :class:`~toolscout.sessions.redis.RedisSessionStore`
already holds, through :class:`RedisCommands`, so a deployment configures Redis once).

Both fail closed: a claim that cannot be recorded raises (the approval is refused), never
answers ``True``.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Awaitable, Callable
from typing import Any, Protocol, TypeVar

__all__ = ["InMemoryTicketStore", "RedisCommands", "RedisTicketStore", "TicketStore"]

_T = TypeVar("_T")


class TicketStore(Protocol):
    """Single-use claims and shared secrets, for approval tickets and signed request states."""

    async def aclaim(self, name: str, ttl: float) -> bool:
        """``True`` for the first claim of ``name`` within ``ttl`` seconds, ``False`` after."""
        ...

    async def asecret(self, name: str) -> str:
        """A random secret, the same for every caller of this store (made by the first)."""
        ...


class InMemoryTicketStore:
    """One process's tickets: claims remembered until they expire, secrets random per store.

    Memory is bounded by ``max_claims`` live claims. Forgetting a live claim would let its
    ticket be answered twice, so a store full of live claims refuses new ones (the caller
    asks for a fresh approval) until some lapse, rather than dropping the oldest."""

    def __init__(self, *, clock: Callable[[], float] = time.monotonic, max_claims: int = 65_536) -> None:
        self.clock = clock
        self.max_claims = max(1, max_claims)
        self._claims: dict[str, float] = {}  # name -> when the claim lapses
        self._secrets: dict[str, str] = {}

    async def aclaim(self, name: str, ttl: float) -> bool:
        now = self.clock()
        lapses = self._claims.get(name)
        if lapses is not None and lapses > now:
            return False
        if len(self._claims) >= self.max_claims:
            self._claims = {n: t for n, t in self._claims.items() if t > now}
            if len(self._claims) >= self.max_claims:  # all live: fail closed
                return False
        self._claims[name] = now + max(ttl, 0.001)
        return True

    async def asecret(self, name: str) -> str:
        return self._secrets.setdefault(name, secrets.token_hex(32))


class RedisCommands(Protocol):
    """What a Redis-backed ticket store needs of a connection's owner
    (:class:`~toolscout.sessions.redis.RedisSessionStore` is one)."""

    def key(self, name: str) -> str:
        """``name`` under the owner's key prefix."""
        ...

    async def acommand(self, doing: str, command: Callable[[Any], Awaitable[_T]]) -> _T:
        """``command(client)`` on this event loop's client; an unreachable Redis raises
        :class:`~toolscout.errors.SessionStoreUnavailable` naming ``doing``."""
        ...


class RedisTicketStore:
    """Tickets every replica sharing one Redis agrees on: a claim is ``SET NX`` with the
    ticket's remaining life as expiry, a secret is set once (``NX``) and read by all."""

    def __init__(self, redis: RedisCommands) -> None:
        self.redis = redis

    async def aclaim(self, name: str, ttl: float) -> bool:
        key = self.redis.key(f"claimed:{name}")
        ms = max(1, round(ttl * 1000))
        return bool(await self.redis.acommand("claim", lambda client: client.set(key, "1", nx=True, px=ms)))

    async def asecret(self, name: str) -> str:
        key = self.redis.key(f"secret:{name}")

        async def made_once(client: Any) -> str:
            await client.set(key, secrets.token_hex(32), nx=True)
            value = await client.get(key)
            return value.decode() if isinstance(value, bytes) else str(value)

        return await self.redis.acommand("secret", made_once)
