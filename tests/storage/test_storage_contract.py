"""The storage contract: the same assertions against every engine, a throwaway engine added
in this file alone, a dead PostgreSQL as StoreUnavailable (and readiness saying so)."""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import httpx
import numpy as np
import pytest

from _postgres import PostgresServer, pg_dsn, postgres  # noqa: F401  (fixtures)
from _redis import RedisServer, redis_server  # noqa: F401  (fixture)
from _session_fixtures import build_catalog
from toolscout import Tool
from toolscout.errors import ConfigError, StoreError, StoreUnavailable
from toolscout.gateway import Gateway
from toolscout.model import Annotations
from toolscout.scaleout.replica import SharedCatalog
from toolscout.server.http_api import create_app
from toolscout.session import Session
from toolscout.sessions.store import InMemorySessionStore
from toolscout.storage import (
    Entry,
    Follower,
    PostgresStore,
    SharedStore,
    SQLiteStore,
    Store,
    StoreHealth,
    engines,
    is_store_url,
    open_store,
    register_engine,
    unregister_engine,
)

# reach-in: the engines' shared codec is tested once here rather than through each engine
from toolscout.storage._codec import check_value, decode_arrays, encode_arrays


# -- a throwaway engine: one class and one registration ---------------------------------------
class MemoryStore:
    """A store in a dict, registered under ``memory://``: what adding an engine takes."""

    engine = "memory"
    _shared: ClassVar[dict[str, MemoryStore]] = {}

    def __init__(self, url: str) -> None:
        self.where = url
        self.tools: list[Tool] = []
        self.blobs: dict[tuple[str, str], Entry] = {}

    @classmethod
    def open(cls, url: str) -> MemoryStore:  # one store per URL, as a database would be
        return cls._shared.setdefault(url, cls(url))

    def save_tools(self, tools: Iterable[Tool]) -> int:
        self.tools = list(tools)
        return len(self.tools)

    def load_tools(self) -> list[Tool]:
        return list(self.tools)

    def tool_names(self) -> list[str]:
        return [t.name for t in self.tools]

    def info(self) -> dict[str, str]:
        return {"tool_count": str(len(self.tools))}

    def put(self, ns: str, key: str, value: bytes | str, meta: dict[str, Any] | None = None) -> None:
        self.put_many(ns, [(key, value, meta)])

    def put_many(self, ns: str, items: Iterable[tuple[str, bytes | str, dict[str, Any] | None]]) -> int:
        now = time.time()
        rows = [(k, Entry(check_value(v), dict(m or {}), now)) for k, v, m in items]
        self.blobs.update(((ns, k), e) for k, e in rows)
        return len(rows)

    def get(self, ns: str, key: str) -> Entry | None:
        return self.blobs.get((ns, key))

    def keys(self, ns: str) -> list[str]:
        return sorted(k for n, k in self.blobs if n == ns)

    def delete(self, ns: str, key: str) -> bool:
        return self.blobs.pop((ns, key), None) is not None

    def clear(self, ns: str) -> int:
        gone = [k for k in self.blobs if k[0] == ns]
        for k in gone:
            del self.blobs[k]
        return len(gone)

    def put_arrays(self, ns: str, key: str, arrays: Mapping[str, Any], meta: dict[str, Any] | None = None) -> None:
        self.put(ns, key, encode_arrays(arrays, f"{ns}/{key}"), meta)

    def get_arrays(self, ns: str, key: str) -> dict[str, Any] | None:
        entry = self.get(ns, key)
        return decode_arrays(entry.value) if entry is not None else None

    def health(self) -> StoreHealth:
        return StoreHealth(self.engine, self.where, True)

    def close(self) -> None:
        pass

    def __enter__(self) -> MemoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@pytest.fixture
def memory_engine() -> Iterator[None]:
    register_engine("memory", MemoryStore.open)
    try:
        yield
    finally:
        unregister_engine("memory")
        MemoryStore._shared.clear()


# -- the same assertions against every engine --------------------------------------------------
@pytest.fixture(params=["sqlite", "postgresql", "memory"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return str(tmp_path / "contract.db")
    if request.param == "postgresql":
        return request.getfixturevalue("pg_dsn")
    request.getfixturevalue("memory_engine")
    return "memory://contract"


def _tools() -> list[Tool]:
    return [
        Tool("crm_create_deal", "Create a deal.", {"type": "object", "properties": {"amount": {"type": "number"}}}),
        Tool("mail_send", "Send an email.", annotations=Annotations(read_only=False), tags=("mail",)),
        Tool("zz_last", "Comes last, saved in this order."),
    ]


def test_every_engine_keeps_the_contract(store_url: str) -> None:
    with open_store(store_url) as store:
        assert isinstance(store, Store)
        health = store.health()
        assert health.reachable and health.engine == store.engine and health.where == store.where
        assert "secret" not in store.where

        # tool records: replaced whole, read back equal and in order
        assert store.save_tools(_tools()) == 3
        assert store.load_tools() == _tools()
        assert store.tool_names() == [t.name for t in _tools()]
        assert store.info()["tool_count"] == "3"
        assert store.save_tools(_tools()[:1]) == 1
        assert store.tool_names() == ["crm_create_deal"]

        # blobs: bytes stay bytes, text stays text, metadata comes back
        store.put("ns", "b", b"\x00\xffraw", {"n": 1})
        store.put("ns", "a", "texte é")
        assert store.get("ns", "b") == Entry(b"\x00\xffraw", {"n": 1}, store.get("ns", "b").updated_at)  # type: ignore[union-attr]
        assert store.get("ns", "a").value == "texte é"  # type: ignore[union-attr]
        assert store.get("ns", "missing") is None
        assert store.put_many("ns", [("c", "3", None), ("d", b"4", {})]) == 2
        assert store.keys("ns") == ["a", "b", "c", "d"]
        assert store.delete("ns", "a") and not store.delete("ns", "a")
        assert store.clear("ns") == 3 and store.keys("ns") == []
        with pytest.raises(StoreError, match="bytes or str"):
            store.put("ns", "x", 12)  # type: ignore[arg-type]

        # arrays: one value, read back equal; absent or damaged is a miss, not an error
        store.put_arrays("snap", "k", {"ints": np.arange(5, dtype=np.int32), "m": np.eye(2)})
        arrays = store.get_arrays("snap", "k")
        assert arrays is not None and arrays["ints"].tolist() == [0, 1, 2, 3, 4] and arrays["m"].shape == (2, 2)
        assert store.get_arrays("snap", "absent") is None
        store.put("snap", "bad", b"not an npz")
        assert store.get_arrays("snap", "bad") is None

    with open_store(store_url) as again:  # what was written is there for the next opener
        assert again.tool_names() == ["crm_create_deal"]
        assert again.get_arrays("snap", "k") is not None


def test_open_store_chooses_the_engine_from_the_url(tmp_path: Path, pg_dsn: str, memory_engine: None) -> None:  # noqa: F811
    with open_store(tmp_path / "a.db") as a, open_store(f"sqlite://{tmp_path}/b.db") as b:
        assert type(a) is type(b) is SQLiteStore and a.engine == "sqlite"
    assert (tmp_path / "b.db").is_file()
    with open_store(pg_dsn) as pg:
        assert isinstance(pg, PostgresStore) and isinstance(pg, SharedStore)
    with open_store("memory://x") as m:
        assert isinstance(m, MemoryStore) and not isinstance(m, SharedStore)
    assert {"sqlite", "postgresql", "postgres", "memory"} <= set(engines())
    assert is_store_url("memory://x") and is_store_url(pg_dsn)
    assert not is_store_url("tools.db") and not is_store_url("redis://h/0") and not is_store_url(r"C:\tools.db")


def test_an_unknown_scheme_is_a_config_error_naming_the_engines() -> None:
    with pytest.raises(ConfigError) as caught:
        open_store("mongodb://db/tools")
    assert "mongodb://" in caught.value.message and "postgresql://" in caught.value.hint


def test_a_catalog_on_a_registered_engine_opens_from_the_cli(memory_engine: None) -> None:
    from toolscout.cli.catalog_commands import open_catalog

    with open_store("memory://cli") as store:
        store.save_tools(_tools())
    catalog = open_catalog("memory://cli")
    assert catalog.names() == [t.name for t in _tools()] and catalog.store is MemoryStore._shared["memory://cli"]


# -- a dead PostgreSQL --------------------------------------------------------------------------
def test_a_dead_postgres_is_store_unavailable_not_a_config_error() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(StoreUnavailable) as caught:
        open_store(f"postgresql://me:hunter2@127.0.0.1:{port}/cat")
    error = caught.value
    assert not isinstance(error, ConfigError)
    info = error.info()
    assert info.code == "store_unavailable" and "hunter2" not in info.message + info.hint
    assert "unreachable" in info.hint


async def test_readiness_asks_the_store_and_says_unavailable_while_postgres_is_down(
    postgres: PostgresServer,  # noqa: F811
    pg_dsn: str,  # noqa: F811
) -> None:
    catalog = SharedCatalog(pg_dsn, kind="mcp")
    try:
        assert isinstance(catalog, Follower)
        catalog.replace_source("crm", _tools()[:1])
        assert catalog.wait_until(lambda c: c.connected, 15)
        transport = httpx.ASGITransport(app=create_app(Gateway(catalog)))
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as http:
            ready = await http.get("/v1/ready")
            assert ready.status_code == 200
            assert ready.json()["store"]["kind"] == "postgresql" and ready.json()["store"]["reachable"] is True
            postgres.stop()
            try:
                assert catalog.wait_until(lambda c: not c.connected, 15)
                assert not catalog.shared.health().reachable
                down = await http.get("/v1/ready")
                assert down.status_code == 503 and down.json()["status"] == "unavailable"
                assert down.json()["store"]["reachable"] is False and down.json()["store"]["last_error"]
                assert (await http.post("/v1/find", json={"query": "create a deal"})).status_code == 200  # from memory
            finally:
                postgres.start()
            assert catalog.wait_until(lambda c: c.connected, 15)
            assert catalog.shared.health().reachable
            assert (await http.get("/v1/ready")).status_code == 200
    finally:
        catalog.close()


# -- one session-store contract ---------------------------------------------------------------
def test_the_in_memory_session_store_keeps_an_attached_session() -> None:
    sessions = InMemorySessionStore(Gateway(build_catalog()))
    session = Session(sessions.gateway, session_id="s1", store=sessions)
    assert sessions.get("s1") is session and sessions.engine == "memory"
    sessions.refresh(session)
    assert sessions.save(session) is False  # the object is the state: nothing to write


def test_a_redis_session_store_keeps_its_bookkeeping_to_itself(redis_server: RedisServer) -> None:  # noqa: F811
    from toolscout.sessions.redis import RedisSessionStore

    store = RedisSessionStore(redis_server.url)
    session = Session(Gateway(build_catalog()), session_id="own-books", store=store)
    session.reveal("get_weather")
    assert session._stored is None  # written by nobody outside the session
    other = Session(Gateway(build_catalog()), session_id="own-books", store=RedisSessionStore(redis_server.url))
    assert "get_weather" in other.revealed and store.engine == "redis"


def test_toolscouts_own_imports_raise_no_deprecation_warning() -> None:
    import subprocess
    import sys

    code = (
        "import warnings; warnings.simplefilter('error', DeprecationWarning)\n"
        "import toolscout, toolscout.storage, toolscout.scaleout.replica, toolscout.cli.catalog_commands, "
        "toolscout.cli.audit_command, toolscout.eval.compare, toolscout.search.learning, toolscout.server.http_api\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_json_of_a_change_event_is_read_by_the_engine() -> None:
    # the parser of NOTIFY payloads, checked without a PostgreSQL server
    from toolscout.storage.postgres_feed import change_from_payload

    assert change_from_payload(json.dumps({"source": "crm", "version": 7, "base": 6, "members": False})).members is False  # type: ignore[union-attr]
    assert change_from_payload(json.dumps({"source": "crm", "version": 8})).base is None  # type: ignore[union-attr]
    with warnings.catch_warnings():
        assert change_from_payload("{not json") is None
