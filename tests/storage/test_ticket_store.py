"""The approval-ticket store (sessions/tickets.py): one contract, in memory and in a real
Redis. A claim counts once, a secret is the same for every store sharing it, and a store
that cannot record a claim refuses it (fails closed)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest

from _redis import RedisServer
from toolscout.errors import SessionStoreUnavailable
from toolscout.sessions.redis import RedisSessionStore
from toolscout.sessions.tickets import InMemoryTicketStore, RedisTicketStore, TicketStore


@pytest.fixture(params=["memory", "redis"])
def stores(request: pytest.FixtureRequest) -> Iterator[tuple[TicketStore, TicketStore | None]]:
    """``(a store, another replica's view of the same tickets)``; in memory there is no
    other replica (``None``)."""
    if request.param == "memory":
        yield InMemoryTicketStore(), None
        return
    server: RedisServer = request.getfixturevalue("redis_server")
    server.flush()
    one, two = RedisSessionStore(server.url), RedisSessionStore(server.url)
    yield one.tickets, two.tickets
    one.close()
    two.close()


def test_a_claim_counts_once_and_a_secret_is_shared(stores: tuple[TicketStore, TicketStore | None]) -> None:
    store, replica = stores

    async def scenario() -> None:
        assert await store.aclaim("approval:n1", 60) is True
        assert await store.aclaim("approval:n1", 60) is False  # a replayed ticket
        assert await store.aclaim("approval:n2", 60) is True  # another ticket is its own
        secret = await store.asecret("approval-tickets")
        assert len(secret) == 64 and await store.asecret("approval-tickets") == secret
        assert await store.asecret("request-states") != secret
        if replica is not None:  # any replica: the same secret, and a used nonce stays used
            assert await replica.asecret("approval-tickets") == secret
            assert await replica.aclaim("approval:n1", 60) is False
            assert await replica.aclaim("approval:n3", 60) is True
            assert await store.aclaim("approval:n3", 60) is False

    asyncio.run(scenario())


def test_an_expired_claim_may_be_made_again_in_memory() -> None:
    now = [100.0]
    store = InMemoryTicketStore(clock=lambda: now[0], max_claims=2)

    async def scenario() -> None:
        assert await store.aclaim("a", 10) and not await store.aclaim("a", 10)
        now[0] = 111.0  # past the ticket's life: its nonce is forgotten (the ticket itself has expired)
        assert await store.aclaim("a", 10)
        assert await store.aclaim("b", 10)
        # full of live claims: a new one is refused, and no live claim is forgotten
        assert not await store.aclaim("c", 10)
        assert not await store.aclaim("a", 10) and not await store.aclaim("b", 10)
        now[0] = 122.0  # both lapsed: room again
        assert await store.aclaim("c", 10)

    asyncio.run(scenario())


def test_a_redis_ticket_store_fails_closed_when_redis_is_down() -> None:
    server = RedisServer().start()
    tickets = RedisTicketStore(RedisSessionStore(server.url))
    try:
        assert asyncio.run(tickets.aclaim("approval:n1", 60)) is True
        server.stop()

        async def claim() -> bool:
            return await tickets.aclaim("approval:n2", 60)

        with pytest.raises(SessionStoreUnavailable):
            asyncio.run(claim())
        with pytest.raises(SessionStoreUnavailable):
            asyncio.run(tickets.asecret("approval-tickets"))
    finally:
        server.stop()
