"""Replicas sharing one catalog through a real PostgreSQL: a change written through one is
searchable on the others within a second (LISTEN/NOTIFY, incremental), concurrent refreshes
never duplicate, and a PostgreSQL restart mid-serve gives clear errors, then recovers."""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from _procs import free_port, stop, wait_http
from _wait import until
from toolscout.catalog import CatalogChange
from toolscout.catalog_base import ListingSuperseded
from toolscout.errors import StoreUnavailable
from toolscout.gateway import Gateway
from toolscout.model import Tool
from toolscout.scaleout.replica import SharedCatalog, sync_source
from toolscout.storage import PostgresStore

if TYPE_CHECKING:
    from _postgres import PostgresServer

psycopg = pytest.importorskip("psycopg", reason="toolscout[postgres] is not installed")

PROPAGATION = 1.0
"""The promise: a change is searchable on every replica within a second."""


def crm_tools(tag: str = "", extra: int = 0) -> list[Tool]:
    base = [
        Tool("crm_update_deal", f"Update a deal's stage or amount{tag}.", source_id="crm"),
        Tool("crm_close_deal", f"Close a deal as won or lost{tag}.", source_id="crm"),
    ]
    return base + [Tool(f"crm_note_{i}", f"Attach note number {i} to a contact{tag}.", source_id="crm") for i in range(extra)]


@pytest.fixture
def pair(pg_dsn: str) -> Iterator[tuple[SharedCatalog, SharedCatalog]]:
    a = SharedCatalog(pg_dsn, kind="mcp")
    b = SharedCatalog(pg_dsn, kind="mcp")
    try:
        assert a.wait_until(lambda c: c.connected, 10) and b.wait_until(lambda c: c.connected, 10)
        yield a, b
    finally:
        a.close()
        b.close()


def top(gateway: Gateway, query: str) -> str | None:
    refs = gateway.find_tools(query, 3).tool_references
    return refs[0].tool_name if refs else None


def test_a_change_through_one_replica_is_searchable_on_the_other_within_a_second(
    pair: tuple[SharedCatalog, SharedCatalog],
) -> None:
    a, b = pair
    search_b = Gateway(b)
    assert top(search_b, "invoice") is None
    a.replace_source("billing", [Tool("billing_send_invoice", "Send an invoice to a customer.")])
    assert b.wait_until(lambda c: "billing_send_invoice" in c, PROPAGATION)
    assert top(search_b, "send an invoice") == "billing_send_invoice"
    assert b.get("billing_send_invoice") == a.get("billing_send_invoice")
    # a change and a removal travel the same way
    a.replace_source("billing", [Tool("billing_void_invoice", "Void an invoice that was sent by mistake.")])
    assert b.wait_until(lambda c: "billing_send_invoice" not in c and "billing_void_invoice" in c, PROPAGATION)
    assert top(search_b, "void invoice") == "billing_void_invoice"
    a.remove_source("billing")
    assert b.wait_until(lambda c: len(c) == 0, PROPAGATION)
    assert b.versions == {} and top(search_b, "invoice") is None


def test_replicas_apply_only_what_changed(pair: tuple[SharedCatalog, SharedCatalog]) -> None:
    a, b = pair
    a.replace_source("crm", crm_tools(extra=200))
    assert b.wait_until(lambda c: len(c) == 202, PROPAGATION)
    changes: list[CatalogChange] = []
    b.subscribe(changes.append)
    edited = crm_tools(extra=200)
    edited[5] = Tool("crm_note_3", "Attach a pinned note to a contact.", source_id="crm")
    a.replace_source("crm", edited[:-1])  # one tool edited, the last one removed
    assert b.wait_until(lambda c: "crm_note_199" not in c, PROPAGATION)
    assert changes == [CatalogChange(added=("crm_note_3",), removed=("crm_note_199",))]
    assert b.get("crm_note_3").description == "Attach a pinned note to a contact."  # type: ignore[union-attr]
    assert top(Gateway(b), "pinned note") == "crm_note_3"


def test_an_edit_that_keeps_the_names_is_applied_without_reading_them(
    pair: tuple[SharedCatalog, SharedCatalog], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A write that adds and removes nothing says so in its notification: the other replica
    reads just the changed row and replaces that tool, and its index is rebuilt on the
    listener thread before any search asks."""
    a, b = pair
    search_b = Gateway(b)
    a.replace_source("crm", crm_tools(extra=50))
    assert b.wait_until(lambda c: len(c) == 52, PROPAGATION)
    assert top(search_b, "note number 7") == "crm_note_7"
    reads: list[tuple[str, int, int | None]] = []
    read = b.shared.read_source

    def spy(source: str, since: int = 0, *, same_names_at: int | None = None) -> Any:
        state = read(source, since, same_names_at=same_names_at)
        reads.append((source, since, None if state is None or state.names is None else len(state.names)))
        return state

    monkeypatch.setattr(b.shared, "read_source", spy)
    warmed: list[tuple[str, bool]] = []  # after the gateway's refresh: where, and was it current
    b.after_apply(lambda: warmed.append((threading.current_thread().name, search_b.index._generation == b.generation)))
    held = b.versions["crm"]
    changes: list[CatalogChange] = []
    b.subscribe(changes.append)
    edited = crm_tools(extra=50)
    edited[9] = edited[9].replace(description="Attach a pinned reminder to a contact.")
    a.replace_source("crm", edited)
    assert b.wait_until(lambda c: c.versions["crm"] > held, PROPAGATION)
    assert reads == [("crm", held, None)]  # one changed row, no names
    assert changes == [CatalogChange(added=("crm_note_7",))]
    assert b.get("crm_note_7") == a.get("crm_note_7") and b.names() == a.names()
    assert b.wait_until(lambda c: bool(warmed), PROPAGATION)
    assert warmed[0] == ("toolscout-listen", True)
    assert top(search_b, "pinned reminder") == "crm_note_7"
    # A write that removes a name reads the names again, and drops the tool.
    a.replace_source("crm", edited[:-1])
    assert b.wait_until(lambda c: "crm_note_49" not in c, PROPAGATION)
    assert reads[-1][2] == 51 and b.names() == a.names()


def test_a_new_replica_starts_with_the_whole_catalog(pg_dsn: str, tmp_path: Path) -> None:
    (tmp_path / "tools.jsonl").write_text("\n".join(json.dumps({"name": f"op_{i}", "description": f"Operation {i}."}) for i in range(300)))
    sync_source(tmp_path, pg_dsn, prefix="ops")
    with SharedCatalog(pg_dsn, listen=False) as fresh:
        assert len(fresh) == 300 and fresh.versions.keys() == {"ops"}
        assert top(Gateway(fresh), "operation 42") == "ops_op_42"


def test_catalog_sync_reaches_every_replica_and_replaces_the_source(pg_dsn: str, tmp_path: Path) -> None:
    path = tmp_path / "crm.yaml"
    path.write_text("update_deal:\n  description: Update a deal.\nclose_deal:\n  description: Close a deal.\n")
    replicas = [SharedCatalog(pg_dsn) for _ in range(3)]
    try:
        assert all(r.wait_until(lambda c: c.connected, 10) for r in replicas)
        sync_source(path, pg_dsn, prefix="crm")
        assert all(r.wait_until(lambda c: len(c) == 2, PROPAGATION) for r in replicas)
        path.write_text("update_deal:\n  description: Move a deal to another pipeline stage.\n")
        sync_source(path, pg_dsn, prefix="crm")
        for r in replicas:
            assert r.wait_until(lambda c: c.names() == ["crm_update_deal"], PROPAGATION)
            assert top(Gateway(r), "pipeline stage") == "crm_update_deal"
    finally:
        for r in replicas:
            r.close()


def test_concurrent_refreshes_of_one_upstream_never_duplicate(pg_dsn: str) -> None:
    """Two replicas list the same upstream at once, over and over, with lists that differ:
    the database ends with one row per name, and every replica converges on it."""
    replicas = [SharedCatalog(pg_dsn, kind="mcp") for _ in range(2)]
    lists = [crm_tools(" (a)", extra=30), crm_tools(" (b)", extra=10)]
    errors: list[BaseException] = []
    start = threading.Barrier(4)

    def refresh(replica: SharedCatalog, which: int) -> None:
        try:
            start.wait(10)
            for i in range(15):
                replica.replace_source("crm", lists[(i + which) % 2])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=refresh, args=(r, k)) for r in replicas for k in (0, 1)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        assert not errors
        with psycopg.connect(pg_dsn) as conn:
            rows = conn.execute("SELECT name, count(*) FROM toolscout.tools GROUP BY name").fetchall()
            (version,) = conn.execute("SELECT version FROM toolscout.sources WHERE source = 'crm'").fetchone()
        assert rows and all(count == 1 for _, count in rows)
        stored = {name for name, _ in rows}
        assert stored in ({t.name for t in lists[0]}, {t.name for t in lists[1]})
        for r in replicas:
            assert r.wait_until(lambda c: c.versions.get("crm") == version, PROPAGATION)
            assert set(r.names()) == stored
    finally:
        for r in replicas:
            r.close()


def test_a_listing_overtaken_by_another_replicas_write_is_refused(pair: tuple[SharedCatalog, SharedCatalog]) -> None:
    """Replica b starts listing the upstream, replica a writes a newer list meanwhile: b's
    write (older, but last) is refused instead of putting the old list back; a listing that
    starts from the refusal's version is written."""
    a, b = pair
    a.replace_source("crm", crm_tools())
    assert b.wait_until(lambda c: "crm_close_deal" in c, PROPAGATION)
    mark = b.listing_mark("crm")
    assert mark == a.listing_mark("crm") and mark > 0
    a.replace_source("crm", crm_tools(extra=1))  # the change, written while b was listing
    with pytest.raises(ListingSuperseded) as refused:
        b.replace_source("crm", crm_tools(), listed_at=mark)
    assert refused.value.version > mark
    with PostgresStore(b.shared.dsn) as store:
        assert "crm_note_0" in store.tool_names()  # nothing of b's stale list was written
    assert b.wait_until(lambda c: "crm_note_0" in c, PROPAGATION)  # a's write reached b as usual
    b.replace_source("crm", crm_tools(" again", extra=1), listed_at=refused.value.version)
    assert a.wait_until(lambda c: "again" in c.get("crm_close_deal").description, PROPAGATION)  # type: ignore[union-attr]


async def test_a_refresh_overtaken_by_another_replica_lists_the_upstream_again(pg_dsn: str) -> None:
    """The race that lost an upstream's change between replicas: this gateway lists the
    upstream, the upstream changes and another replica writes the new list, then this
    gateway's older list arrives last. It lists again and writes the newer list."""
    from mcp_fixtures import fake
    from toolscout.server.app import ServeConfig, build_app
    from toolscout.sources.mcp.config import parse_config

    built = build_app(ServeConfig.for_sources(parse_config({"mcpServers": {"up": fake("normal")}}), cache=pg_dsn))
    server, aggregator = built.server, built.aggregator
    catalog = aggregator.catalog
    assert isinstance(catalog, SharedCatalog)
    catalog.bind_loop(asyncio.get_running_loop())
    other = SharedCatalog(pg_dsn, kind="mcp", listen=False)
    upstream = aggregator.upstreams["up"]
    listed = upstream.list_tools
    listings: list[int] = []

    async def list_tools() -> Any:
        raw = await listed()
        listings.append(len(raw))
        if len(listings) == 2:  # the first refresh's list is in hand: the upstream changes now
            await server.run("up_grow", {})
            grown = [*(t for t in catalog if t.source_id == "up"), Tool("up_extra", "Appeared after grow.", source_id="up")]
            other.replace_source("up", grown)  # another replica listed after the change
        return raw

    upstream.list_tools = list_tools  # type: ignore[method-assign]  # a seam: the race, in order
    try:
        assert await aggregator.refresh("up") == 6
        assert await aggregator.refresh("up") == 7
        assert listings == [6, 6, 7]  # the overtaken listing was done again, after the write
        with PostgresStore(pg_dsn) as store:
            assert "up_extra" in store.tool_names()
        ran = await server.run("up_extra", {})  # installed here, with a handler to this upstream
        assert ran["content"][0]["text"] == "unknown tool extra", ran
    finally:
        await aggregator.aclose()
        catalog.close()
        other.close()


async def test_remote_changes_apply_on_the_bound_loop_with_local_handlers(pg_dsn: str) -> None:
    threads: list[int] = []

    def handler_for(tool: Tool) -> Any:
        return lambda args: f"{tool.name} ran here"

    writer = SharedCatalog(pg_dsn, listen=False)
    reader = SharedCatalog(pg_dsn, handler_factory=handler_for)
    reader.bind_loop(asyncio.get_running_loop())
    reader.subscribe(lambda change: threads.append(threading.get_ident()))
    try:
        assert await asyncio.to_thread(reader.wait_until, lambda c: c.connected, 10)
        writer.replace_source("ops", [Tool("ops_restart", "Restart a service.")])
        assert await asyncio.to_thread(reader.wait_until, lambda c: "ops_restart" in c, PROPAGATION)
        assert threads == [threading.get_ident()]  # applied on this loop's thread
        result = await Gateway(reader).acall("ops_restart", {})
        assert result.ok and result.value == "ops_restart ran here"
    finally:
        writer.close()
        reader.close()


def test_postgres_restart_mid_serve_gives_clear_errors_then_recovers(
    postgres: PostgresServer, pg_dsn: str
) -> None:
    a = SharedCatalog(pg_dsn, kind="mcp")
    b = SharedCatalog(pg_dsn, kind="mcp")
    search_b = Gateway(b)
    try:
        assert a.wait_until(lambda c: c.connected, 10) and b.wait_until(lambda c: c.connected, 10)
        a.replace_source("crm", crm_tools())
        assert b.wait_until(lambda c: len(c) == 2, PROPAGATION)
        postgres.stop()
        try:
            assert b.wait_until(lambda c: not c.connected, 10)
            assert top(search_b, "close a deal") == "crm_close_deal"  # from memory
            with pytest.raises(StoreUnavailable) as caught:
                a.replace_source("crm", crm_tools(" again"))
            assert "PostgreSQL store" in caught.value.message and "Searches keep answering" in caught.value.hint
            assert a.get("crm_close_deal").description == "Close a deal as won or lost."  # type: ignore[union-attr]
            assert b.status()["last_error"]
        finally:
            postgres.start()
        assert a.wait_until(lambda c: c.connected, 15) and b.wait_until(lambda c: c.connected, 15)
        with PostgresStore(pg_dsn) as other:  # a writer that is not a replica: resync or notify
            other.write_source("ops", [Tool("ops_restart", "Restart a service.")])
        a.replace_source("crm", crm_tools(" after the restart"))
        for r in (a, b):
            assert r.wait_until(lambda c: "ops_restart" in c and "restart" in c.get("crm_close_deal").description, PROPAGATION)  # type: ignore[union-attr]
        assert top(search_b, "restart a service") == "ops_restart"
    finally:
        a.close()
        b.close()


def test_a_write_made_while_a_replica_was_away_arrives_by_resync(
    postgres: PostgresServer, pg_dsn: str
) -> None:
    """Notifications are not queued for a disconnected listener: the reconnect resyncs."""
    b = SharedCatalog(pg_dsn)
    try:
        assert b.wait_until(lambda c: c.connected, 10)
        with psycopg.connect(pg_dsn, autocommit=True) as admin:  # drop only b's LISTEN connection
            admin.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database()"
                " AND pid <> pg_backend_pid() AND query ILIKE 'LISTEN%'"
            )
            with PostgresStore(pg_dsn) as other:
                other.write_source("ops", [Tool("ops_restart", "Restart a service.")])
        assert b.wait_until(lambda c: "ops_restart" in c, 5)
    finally:
        b.close()


# -- three `toolscout serve --store postgresql://...` processes, driven by the MCP SDK ----------




@pytest.fixture
def served(pg_dsn: str, tmp_path: Path) -> Iterator[dict[str, Any]]:
    """One HTTP upstream and three gateway replicas on one database."""
    from mcp_fixtures import FAKE

    upstream_port = free_port()
    upstream = subprocess.Popen([sys.executable, FAKE, "--http", str(upstream_port)], stderr=subprocess.DEVNULL)
    cfg = tmp_path / "servers.json"
    cfg.write_text(json.dumps({"mcpServers": {"web": {"url": f"http://127.0.0.1:{upstream_port}/mcp"}}}))
    toolscout = str(Path(sys.executable).with_name("toolscout"))
    procs: dict[str, subprocess.Popen[bytes]] = {}
    ports: dict[str, int] = {}
    try:
        for name in ("a", "b", "c"):  # started together: a replica retries an upstream not up yet
            ports[name] = free_port()
            args = ["serve", "-c", str(cfg), "--transport", "http", "--port", str(ports[name]), "--store", pg_dsn]
            with (tmp_path / f"{name}.log").open("wb") as log:  # read back when a step fails
                procs[name] = subprocess.Popen([toolscout, *args], stderr=log)
        wait_http(upstream, f"http://127.0.0.1:{upstream_port}/mcp")
        for name, proc in procs.items():
            wait_http(proc, f"http://127.0.0.1:{ports[name]}/mcp")
        yield {"ports": ports, "dsn": pg_dsn, "toolscout": toolscout, "tmp": tmp_path}
    finally:
        stop(*procs.values(), upstream)


def _client(port: int) -> Any:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    return Client(streamable_http_client(f"http://127.0.0.1:{port}/mcp"), mode="legacy")


def _logs(tmp: Path) -> str:
    """The replicas' stderr, to say why a step failed."""
    return "\n".join(f"--- {p.name}\n{p.read_text(errors='replace')[-3000:]}" for p in sorted(tmp.glob("?.log")))


async def _found(client: Any, query: str, name: str, timeout: float) -> float | None:
    """Seconds until ``find_tools(query)`` on ``client`` returns ``name`` (bounded), else None."""
    async def found() -> bool:
        result = await client.call_tool("find_tools", {"query": query, "limit": 3})
        return any(r["tool_name"] == name for r in (result.structured_content or {}).get("tool_references", []))

    start = asyncio.get_running_loop().time()
    return asyncio.get_running_loop().time() - start if await until(found, timeout) else None


async def test_three_serve_processes_share_one_catalog(served: dict[str, Any], postgres: PostgresServer) -> None:
    ports = served["ports"]
    async with contextlib.AsyncExitStack() as stack:
        clients = {n: await stack.enter_async_context(_client(p)) for n, p in ports.items()}
        for client in clients.values():  # every replica serves the upstream's tools
            assert await _found(client, "add two integers", "web_add", 20) is not None, _logs(served["tmp"])
        # An upstream change seen by replica a (list_changed after grow) reaches b and c.
        grown = await clients["a"].call_tool("call_tool", {"name": "web_grow", "arguments": {}})
        assert not grown.is_error
        for name in ("b", "c"):
            # a re-lists the upstream, writes the store, b and c hear it: bounded, not timed
            assert await _found(clients[name], "appeared after grow", "web_extra", 20) is not None, _logs(served["tmp"])
        called = await clients["c"].call_tool("call_tool", {"name": "web_extra", "arguments": {}})
        # c ran it on its own connection to the upstream (which has no code for it): c attached
        # its handler to a tool that only a listed
        assert called.content[0].text == "unknown tool extra"
        # `toolscout catalog sync` writes once; every replica finds it.
        spec = served["tmp"] / "billing.yaml"
        spec.write_text("send_invoice:\n  description: Send an invoice to a customer by email.\n")
        done = subprocess.run(
            [served["toolscout"], "catalog", "sync", str(spec), "--store", served["dsn"], "--prefix", "billing"],
            capture_output=True, text=True, timeout=60, check=False,
        )
        assert done.returncode == 0, done.stderr
        for client in clients.values():
            assert await _found(client, "send an invoice", "billing_send_invoice", PROPAGATION + 1) is not None
        # PostgreSQL restarts mid-serve: searches answer from memory, then changes flow again.
        postgres.stop()
        try:
            for client in clients.values():
                assert await _found(client, "send an invoice", "billing_send_invoice", 1) is not None
        finally:
            postgres.start()
        spec.write_text("refund_invoice:\n  description: Refund a paid invoice.\n")
        done = subprocess.run(
            [served["toolscout"], "catalog", "sync", str(spec), "--store", served["dsn"], "--prefix", "billing"],
            capture_output=True, text=True, timeout=60, check=False,
        )
        assert done.returncode == 0, done.stderr
        for client in clients.values():  # each replica reconnected on its own (bounded wait)
            assert await _found(client, "refund a paid invoice", "billing_refund_invoice", 15) is not None
    with PostgresStore(served["dsn"]) as store:  # written once: one row per tool, one source each
        assert {s["source"]: s["kind"] for s in store.sources()} == {"web": "mcp", "billing": "sync"}
        names = store.tool_names()
        assert len(names) == len(set(names)) and "web_extra" in names and "billing_send_invoice" not in names


def test_embedding_vectors_live_in_the_same_database(pg_dsn: str) -> None:
    """With embeddings on, vectors go to the shared store's key/value space: a second replica
    embeds nothing the first one already did."""
    from _fake_embed import FakeEmbedder

    with SharedCatalog(pg_dsn, listen=False) as a:
        a.replace_source("crm", crm_tools(extra=5))
        first = FakeEmbedder()
        Gateway(a, embeddings=first).find_tools("close a deal", 3, search_type="hybrid")
        assert sum(len(c) for c in first.calls) >= 7
        assert a.shared.keys("embeddings") == ["fake-bow"]
    with SharedCatalog(pg_dsn, listen=False) as b:
        again = FakeEmbedder()
        found = Gateway(b, embeddings=again).find_tools("close a deal", 3, search_type="hybrid")
        assert found.tool_references[0].tool_name == "crm_close_deal"
        assert sum(len(c) for c in again.calls) <= 1  # the query only: tool vectors came from PostgreSQL


async def test_an_upstream_change_seen_while_postgres_is_down_is_written_once_it_is_back(
    postgres: PostgresServer, pg_dsn: str
) -> None:
    """The gateway as `serve --store` wires it: a refresh PostgreSQL refused is listed again
    after the listener reconnects, so the change reaches the database without a restart."""
    from mcp_fixtures import fake
    from toolscout.server.app import ServeConfig, build_app
    from toolscout.sources.mcp.config import parse_config

    built = build_app(ServeConfig.for_sources(parse_config({"mcpServers": {"up": fake("normal")}}), cache=pg_dsn))
    server, aggregator = built.server, built.aggregator
    catalog = aggregator.catalog
    assert isinstance(catalog, SharedCatalog)
    catalog.bind_loop(asyncio.get_running_loop())
    try:
        assert await aggregator.refresh("up") == 6
        postgres.stop()
        try:
            assert await asyncio.to_thread(catalog.wait_until, lambda c: not c.connected, 10)
            await server.run("up_grow", {})  # the upstream grows and announces list_changed
            status: dict[str, Any] = {}
            for _ in range(200):  # bounded: until the refused refresh shows in the status
                status = aggregator.status()["up"]
                if "not installed" in (status.get("last_error") or ""):
                    break
                await asyncio.sleep(0.05)
            assert "PostgreSQL store" in status["last_error"]
            assert "up_extra" not in catalog  # memory stays as the database has it
        finally:
            postgres.start()
        assert await asyncio.to_thread(catalog.wait_until, lambda c: "up_extra" in c, 15)
        with PostgresStore(pg_dsn) as store:
            assert "up_extra" in store.tool_names()
    finally:
        await aggregator.aclose()
        catalog.close()
