"""Sessions in a real Redis: another worker process continues a conversation, concurrent
writers lose no reveal, the TTL is refreshed on use, and Redis stopping and restarting
gives structured errors, then recovers without a restart of anything."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from typing import Any

import pytest
import redis

from _paths import TESTS
from _redis import RedisServer
from _session_fixtures import build_catalog
from toolscout import Tool
from toolscout.errors import ConfigError
from toolscout.gateway import Gateway
from toolscout.session import Session
from toolscout.sessions.redis import RedisSessionStore, merge_states


@pytest.fixture
def url(redis_server: RedisServer) -> str:
    redis_server.flush()
    return redis_server.url


def _stored(url: str, session_id: str, prefix: str = "toolscout:session:") -> dict[str, Any]:
    raw = redis.Redis.from_url(url, decode_responses=True).hget(f"{prefix}{session_id}", "state")
    return json.loads(raw) if raw else {}


def test_another_worker_process_continues_the_session(url: str) -> None:
    gateway = Gateway(build_catalog())
    here = Session(gateway, session_id="conv-42", store=RedisSessionStore(url))
    assert here.handle("find_tools", {"query": "weather forecast for a city"}).revealed == ("get_weather",)
    worker = f"""
import json, sys
sys.path.insert(0, {str(TESTS)!r})
from _session_fixtures import build_catalog
from toolscout.gateway import Gateway
from toolscout.sessions.redis import RedisSessionStore
from toolscout.session import Session
s = Session(Gateway(build_catalog()), session_id="conv-42", store=RedisSessionStore({url!r}))
out = {{"restored": list(s.revealed), "call": s.handle("get_weather", {{"city": "Oslo"}}).text(),
        "found": list(s.handle("find_tools", {{"query": "send an email message"}}).revealed)}}
print(json.dumps(out))
"""
    done = subprocess.run([sys.executable, "-c", worker], capture_output=True, text=True, timeout=60, check=True)
    out = json.loads(done.stdout.strip().splitlines()[-1])
    assert out == {"restored": ["get_weather"], "call": '{"city": "Oslo", "temp_c": 21}', "found": ["send_email"]}
    # Back here: the tool the other process revealed is callable by name (refreshed first).
    sent = here.handle("send_email", {"to": "a@example.com", "body": "hi"})
    assert sent.ok, sent.text()
    assert here.revealed == ("get_weather", "send_email")


def test_a_session_is_saved_only_when_it_changed(url: str) -> None:
    store = RedisSessionStore(url)
    session = Session(Gateway(build_catalog()), session_id="quiet", store=store)
    session.handle("find_tools", {"query": "weather forecast"})
    client = redis.Redis.from_url(url, decode_responses=True)
    rev = client.hget("toolscout:session:quiet", "rev")
    assert not store.save(session)  # nothing changed since the handled call saved
    session.handle("get_weather", {"city": "Oslo"})  # the only revealed tool: recency unchanged
    assert client.hget("toolscout:session:quiet", "rev") == rev
    session.reveal("send_email")  # a reveal outside handle() saves at once
    assert int(client.hget("toolscout:session:quiet", "rev")) == int(rev) + 1
    assert _stored(url, "quiet")["revealed"] == ["get_weather", "send_email"]


def test_two_writers_of_one_session_keep_both_reveals(url: str) -> None:
    gateway = Gateway(build_catalog())
    a = Session(gateway, session_id="shared", store=RedisSessionStore(url))
    b = Session(gateway, session_id="shared", store=RedisSessionStore(url))
    a.handle("find_tools", {"query": "weather forecast"})
    # b has not seen a's write; it reveals without a refresh, so its save conflicts.
    b._reveal("send_email", "format_disk")
    assert b.store is not None and b.store.save(b)
    assert set(_stored(url, "shared")["revealed"]) == {"get_weather", "send_email", "format_disk"}
    assert set(b.revealed) == {"get_weather", "send_email", "format_disk"}  # merged back into b
    a.handle("find_tools", {"query": "weather forecast"})
    assert set(a.revealed) == {"get_weather", "send_email", "format_disk"}
    assert _stored(url, "shared")["searches"]["weather forecast\x1f5\x1fauto\x1fNone"] == 2


def test_many_concurrent_writers_lose_nothing(url: str) -> None:
    catalog = build_catalog(filler=40)
    gateway = Gateway(catalog)
    names = [f"inventory_item_{i}" for i in range(40)]
    errors: list[BaseException] = []

    def worker(part: list[str]) -> None:
        try:
            session = Session(gateway, session_id="busy", store=RedisSessionStore(url), max_revealed=100)
            for name in part:
                session.reveal(name)
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(names[i::4],)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors
    assert sorted(_stored(url, "busy")["revealed"]) == sorted(names)


def test_the_ttl_is_refreshed_on_use(url: str) -> None:
    store = RedisSessionStore(url, ttl=600, prefix="ttl:")
    session = Session(Gateway(build_catalog()), session_id="t", store=store)
    session.handle("find_tools", {"query": "weather forecast"})
    client = redis.Redis.from_url(url)
    assert 590_000 < client.pttl("ttl:t") <= 600_000
    client.pexpire("ttl:t", 5_000)
    session.handle("get_weather", {"city": "Oslo"})  # used: the TTL starts again
    assert client.pttl("ttl:t") > 590_000


def test_a_session_store_gets_and_creates_sessions(url: str) -> None:
    gateway = Gateway(build_catalog())
    store = RedisSessionStore(url, gateway, max_revealed=5)
    assert store.get("nobody") is None
    first = store.session("s1")
    assert first.max_revealed == 5
    first.handle("find_tools", {"query": "weather forecast"})
    again = store.get("s1")
    assert again is not None and again.revealed == ("get_weather",)
    store.drop("s1")
    assert store.get("s1") is None


def test_bad_urls_and_ttls_are_config_errors() -> None:
    with pytest.raises(ConfigError, match=r"not a Redis URL: 'http://example\.test'") as info:
        RedisSessionStore("http://u:pw@example.test")
    assert "pw" not in str(info.value)
    assert RedisSessionStore("rediss://u:pw@[::1]:6380/2").where == "rediss://[::1]:6380/2"  # shown in errors
    with pytest.raises(ConfigError, match="TTL"):
        RedisSessionStore("redis://127.0.0.1:1/0", ttl=0)


def test_merge_keeps_both_sides_drops_what_one_dropped_and_holds_the_cap() -> None:
    base = {"id": "s", "revealed": ["a", "b"], "recency": ["a", "b"], "searches": {"q": 1}}
    ours = {"id": "s", "revealed": ["a", "c"], "recency": ["c", "a"], "searches": {"q": 2, "r": 1}}
    theirs = {"id": "s", "revealed": ["a", "b", "d"], "recency": ["a", "b", "d"], "searches": {"q": 3}}
    merged = merge_states(base, ours, theirs, max_revealed=10)
    assert merged["revealed"] == ["a", "d", "c"]  # b: we evicted it; d: theirs; c: ours
    assert merged["recency"] == ["d", "c", "a"]  # we used c then a after base
    assert merged["searches"] == {"q": 4, "r": 1}
    capped = merge_states(base, ours, theirs, max_revealed=2)
    assert capped["revealed"] == ["a", "c"] and capped["recency"] == ["c", "a"]  # d least recent
    assert merge_states(base, ours, None, max_revealed=10) == ours
    loaded = merge_states({"loaded": ["x"]}, {"loaded": ["x", "y"]}, {"loaded": ["x", "z"]}, max_revealed=5)
    assert loaded["loaded"] == ["x", "z", "y"]  # a field the merge does not know: list union


def test_async_sessions_use_the_store_too(url: str) -> None:
    gateway = Gateway(build_catalog())
    store = RedisSessionStore(url)

    async def main() -> tuple[tuple[str, ...], bool]:
        session = Session(gateway, session_id="aio", store=store)
        await session.ahandle("find_tools", {"query": "send an email message"})
        other = Session(gateway, session_id="aio", store=store)
        called = await other.ahandle("send_email", {"to": "x", "body": "y"})
        await store.aclose()
        return other.revealed, called.ok

    assert asyncio.run(main()) == (("send_email",), True)


def test_redis_down_and_restarted_structured_errors_then_recovery() -> None:
    server = RedisServer().start()
    try:
        catalog = build_catalog()
        runs: list[str] = []

        def stop_redis(args: dict[str, Any]) -> str:  # Redis dies while this tool runs
            runs.append("stop_redis")
            server.stop()
            return "stopped"

        catalog.add(Tool("stop_redis", "Stop the redis server now.", {"type": "object"}), handler=stop_redis)
        gateway = Gateway(catalog)
        store = RedisSessionStore(server.url, timeout=0.5)
        session = Session(gateway, session_id="outage", store=store)
        session.handle("find_tools", {"query": "select:stop_redis,get_weather"})
        # The save after this call fails: the result stands (the tool ran), the change waits.
        ran = session.handle("stop_redis", {})
        assert ran.ok and ran.text() == "stopped" and runs == ["stop_redis"]
        # Redis is down: refused before anything runs, with a code a caller can act on.
        refused = session.handle("stop_redis", {})
        assert not refused.ok and refused.error is not None
        assert refused.error.code == "session_store_unavailable"
        assert "redis://127.0.0.1" in refused.error.message and "retry" in refused.error.hint.lower()
        assert runs == ["stop_redis"]
        found = session.handle("find_tools", {"query": "send email"})
        assert found.error is not None and found.error.code == "session_store_unavailable"
        # A session created while Redis is down does not raise; its first call says why.
        late = Session(gateway, session_id="late", store=store)
        assert late.handle("get_weather", {"city": "Oslo"}).error.code == "session_store_unavailable"  # type: ignore[union-attr]
        # Back (empty: no persistence): the same objects recover, no restart; this
        # process's copy of the session is written again.
        server.start()
        again = session.handle("get_weather", {"city": "Oslo"})
        assert again.ok, again.text()
        assert set(_stored(server.url, "outage")["revealed"]) == {"stop_redis", "get_weather"}
        assert late.handle("find_tools", {"query": "weather forecast"}).ok
    finally:
        server.stop()
