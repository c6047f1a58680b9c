"""The PostgreSQL store on a real server: migrations, the Store interface, per-source writes,
``toolscout catalog sync`` replacing a source atomically, and clear errors when it is down."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner

from _paths import DOCS
from toolscout.cli import app
from toolscout.demo import demo_tools
from toolscout.errors import StoreError, StoreUnavailable
from toolscout.model import Tool
from toolscout.scaleout.replica import load_source, sync_source
from toolscout.sources.mcp.cache import ToolListCache
from toolscout.storage import postgres as pgstore
from toolscout.storage.postgres import CHANNEL, PostgresStore, describe_dsn, is_postgres_url

if TYPE_CHECKING:
    from _postgres import PostgresServer

psycopg = pytest.importorskip("psycopg", reason="toolscout[postgres] is not installed")
runner = CliRunner()


def tools(n: int, tag: str = "v1", prefix: str = "tool") -> list[Tool]:
    return [Tool(f"{prefix}_{i}", f"Tool number {i} ({tag}).", category="misc") for i in range(n)]


# -- migrations ------------------------------------------------------------------------------
def test_migrations_are_recorded_once_and_reopening_applies_nothing(pg_dsn: str) -> None:
    with PostgresStore(pg_dsn) as first:
        assert first.schema_version == pgstore.MIGRATIONS[-1][0]
        assert [v for v, _ in first.migrations()] == [v for v, _, _ in pgstore.MIGRATIONS]
    with PostgresStore(pg_dsn) as again:
        assert len(again.migrations()) == len(pgstore.MIGRATIONS)
        assert again.info()["schema_version"] == str(pgstore.MIGRATIONS[-1][0])


def test_replicas_starting_at_once_migrate_exactly_once(pg_dsn: str) -> None:
    barrier = threading.Barrier(6)
    stores: list[PostgresStore] = []
    errors: list[BaseException] = []

    def open_one() -> None:
        barrier.wait(10)
        try:
            stores.append(PostgresStore(pg_dsn))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert not errors and len(stores) == 6
    with psycopg.connect(pg_dsn) as conn:
        rows = conn.execute("SELECT version, count(*) FROM toolscout.migrations GROUP BY version").fetchall()
    assert rows == [(v, 1) for v, _, _ in pgstore.MIGRATIONS]
    for s in stores:
        s.close()


def test_a_new_migration_is_applied_once_on_the_next_start(pg_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    PostgresStore(pg_dsn).close()
    extra = (99, "test column", "ALTER TABLE toolscout.sources ADD COLUMN note TEXT")
    monkeypatch.setattr(pgstore, "MIGRATIONS", (*pgstore.MIGRATIONS, extra))
    with PostgresStore(pg_dsn) as upgraded:
        assert upgraded.schema_version == 99
        assert upgraded.migrations()[-1] == (99, "test column")
    with PostgresStore(pg_dsn) as again:  # not applied twice (ADD COLUMN would fail)
        assert [v for v, _ in again.migrations()].count(99) == 1


def test_a_database_migrated_by_a_newer_toolscout_is_refused(pg_dsn: str) -> None:
    PostgresStore(pg_dsn).close()
    with psycopg.connect(pg_dsn, autocommit=True) as conn:
        conn.execute("INSERT INTO toolscout.migrations (version, name) VALUES (1000, 'from the future')")
    with pytest.raises(StoreError) as caught:
        PostgresStore(pg_dsn)
    assert "schema version 1000" in caught.value.message and "Upgrade toolscout" in caught.value.hint


# -- the Store interface -----------------------------------------------------------------------
def test_tools_round_trip_equal_in_order(pg_dsn: str) -> None:
    demo = demo_tools()
    with PostgresStore(pg_dsn) as store:
        assert store.save_tools(demo) == len(demo)
        loaded = store.load_tools()
        assert sorted(t.name for t in loaded) == sorted(t.name for t in demo)
        by_name = {t.name: t for t in loaded}
        assert all(by_name[t.name] == t for t in demo)
        assert store.info()["tool_count"] == str(len(demo))
        assert store.save_tools(demo[:3]) == 3
        assert len(store.load_tools()) == 3


def test_namespaces_keep_bytes_and_text_as_given(pg_dsn: str) -> None:
    import numpy as np

    with PostgresStore(pg_dsn) as store:
        store.put("mcp.tools", "github", '[{"name": "é"}]', {"config_hash": "9f2c"})
        store.put_many("notes", [("a", b"\x00\x01", None), ("b", "text\x00nul", {"lang": "en"})])
        entry = store.get("mcp.tools", "github")
        assert entry is not None and entry.value == '[{"name": "é"}]' and entry.meta == {"config_hash": "9f2c"}
        assert store.get("notes", "a").value == b"\x00\x01"  # type: ignore[union-attr]
        assert store.get("notes", "b").value == "text\x00nul"  # type: ignore[union-attr]
        assert store.keys("notes") == ["a", "b"]
        assert store.delete("notes", "a") and not store.delete("notes", "a")
        assert store.clear("notes") == 1 and store.get("notes", "b") is None
        store.put_arrays("index.x", "k", {"v": np.arange(3, dtype=np.float32), "s": np.array(["a", "b"])})
        arrays = store.get_arrays("index.x", "k")
        assert arrays is not None and arrays["v"].tolist() == [0.0, 1.0, 2.0] and arrays["s"].tolist() == ["a", "b"]


def test_the_mcp_tool_list_cache_works_on_postgres(pg_dsn: str) -> None:
    with PostgresStore(pg_dsn) as store:
        cache = ToolListCache(store)
        cache.save("github", "hash1", [{"name": "create_issue", "inputSchema": {"type": "object"}}])
        hit = cache.load("github", "hash1")
        assert hit is not None and hit.tools[0]["name"] == "create_issue"
        assert cache.load("github", "other-config") is None


# -- sources ---------------------------------------------------------------------------------
def test_write_source_reports_the_difference_and_skips_identical_lists(pg_dsn: str) -> None:
    with PostgresStore(pg_dsn) as store:
        first = store.write_source("s", tools(3))
        assert first.added == ("tool_0", "tool_1", "tool_2") and first.version > 0
        same = store.write_source("s", tools(3))
        assert same.unchanged and same.version == first.version  # no new version, no notification
        new = [*tools(2)[:1], Tool("tool_1", "Changed."), Tool("tool_9", "New.")]
        second = store.write_source("s", new)
        assert (second.added, second.changed, second.removed) == (("tool_9",), ("tool_1",), ("tool_2",))
        assert second.version > first.version
        since = store.read_source("s", since=first.version)  # what a replica holding v1 reads
        assert since is not None and since.names == ("tool_0", "tool_1", "tool_9")
        assert set(since.changed) == {"tool_1", "tool_9"}
        assert store.source_versions() == {"s": second.version}


def test_a_write_that_keeps_the_names_lets_readers_skip_them(pg_dsn: str) -> None:
    with PostgresStore(pg_dsn) as store, store.connect() as listen:
        listen.execute(f"LISTEN {CHANNEL}")
        first = store.write_source("crm", [Tool("crm_a", "A."), Tool("crm_b", "B.")])
        edit = store.write_source("crm", [Tool("crm_a", "A."), Tool("crm_b", "B, edited.")])
        grow = store.write_source("crm", [Tool("crm_a", "A."), Tool("crm_b", "B, edited."), Tool("crm_c", "C.")])
        notes = [json.loads(n.payload) for n in listen.notifies(timeout=5, stop_after=3)]
        assert notes == [
            {"source": "crm", "version": first.version},  # a new source: nothing to build on
            {"source": "crm", "version": edit.version, "base": first.version, "members": False},
            {"source": "crm", "version": grow.version, "base": edit.version, "members": True},
        ]
        # The source moved past the edit: the hint no longer holds and the names are read.
        state = store.read_source("crm", since=first.version, same_names_at=edit.version)
        assert state is not None and state.names == ("crm_a", "crm_b", "crm_c")
        store.write_source("crm", [Tool("crm_a", "A, edited."), Tool("crm_b", "B, edited."), Tool("crm_c", "C.")])
        latest = store.source_versions()["crm"]
        state = store.read_source("crm", since=grow.version, same_names_at=latest)
        assert state is not None and state.names is None and list(state.changed) == ["crm_a"]


def test_a_stale_base_version_falls_back_to_comparing_every_tool(pg_dsn: str) -> None:
    """A replica names the tools it holds unchanged since version ``base``; if another writer
    moved the source meanwhile, that claim is ignored and every tool is compared."""
    with PostgresStore(pg_dsn) as store:
        v1 = store.write_source("s", tools(3)).version
        store.write_source("s", [*tools(3)[:1], Tool("tool_1", "Edited elsewhere."), tools(3)[2]])
        mine = store.write_source("s", tools(3), base=v1, unchanged=["tool_0", "tool_1", "tool_2"])
        assert mine.changed == ("tool_1",)  # the stale claim did not hide the difference
        state = store.read_source("s")
        assert state is not None and state.changed["tool_1"].description == "Tool number 1 (v1)."
        current = store.write_source("s", [*tools(3), Tool("tool_3", "New.")], base=mine.version,
                                     unchanged=["tool_0", "tool_1", "tool_2"])
        assert current.added == ("tool_3",) and not current.changed


def test_names_are_unique_across_sources_with_a_clear_error(pg_dsn: str) -> None:
    with PostgresStore(pg_dsn) as store:
        store.write_source("a", tools(2))
        with pytest.raises(StoreError) as caught:
            store.write_source("b", [Tool("tool_1", "Same name, other source.")])
        assert "tool_1" in caught.value.message and "source 'a'" in caught.value.message
        assert "--prefix" in caught.value.hint
        assert store.source_versions().keys() == {"a"}  # nothing of b was written


def test_writers_of_one_source_queue_on_its_advisory_lock(pg_dsn: str) -> None:
    """A writer waits for the one holding the source; past ``lock_timeout`` it gives up with a
    retry hint (not an "unreachable" one), and the connection stays usable."""
    with PostgresStore(pg_dsn, lock_timeout=0.3) as store, psycopg.connect(pg_dsn, autocommit=True) as other:
        other.execute("SELECT pg_advisory_lock(hashtextextended('s', %s))", (pgstore._SOURCE_LOCK_SEED,))
        with pytest.raises(StoreError) as caught:
            store.write_source("s", tools(1))
        assert "retry" in caught.value.hint and "unreachable" not in caught.value.hint
        store.write_source("other", tools(1, prefix="other"))  # other sources do not wait
        other.execute("SELECT pg_advisory_unlock_all()")
        assert store.write_source("s", tools(1)).added == ("tool_0",)


def test_a_synced_source_cannot_overwrite_an_upstreams(pg_dsn: str) -> None:
    with PostgresStore(pg_dsn) as store:
        store.write_source("github", tools(1), kind="mcp")
        with pytest.raises(StoreError, match="held by a mcp writer"):
            store.write_source("github", tools(1, "other"), kind="sync")


def test_sync_replaces_a_source_atomically(pg_dsn: str, tmp_path: Path) -> None:
    """Readers see the old list or the new one, never a mix; other sources are untouched."""
    old = tmp_path / "old.jsonl"
    new = tmp_path / "new.jsonl"
    old.write_text("\n".join(json.dumps({"name": f"op_{i}", "description": f"Old op {i}."}) for i in range(1500)))
    new.write_text("\n".join(json.dumps({"name": f"op_{i}", "description": f"New op {i}."}) for i in range(500, 2500)))
    with PostgresStore(pg_dsn) as store:
        store.write_source("other", tools(2, prefix="other"))
        sync_source(old, store, prefix="big")
        old_names = {f"big_op_{i}" for i in range(1500)}
        new_names = {f"big_op_{i}" for i in range(500, 2500)}
        seen: list[frozenset[str]] = []
        done = threading.Event()

        def read() -> None:
            with PostgresStore(pg_dsn) as reader:
                while not done.is_set():
                    state = reader.read_source("big")
                    assert state is not None
                    seen.append(frozenset(state.names))

        thread = threading.Thread(target=read)
        thread.start()
        try:
            result = sync_source(new, store, prefix="big")
        finally:
            done.set()
            thread.join(30)
        assert len(result.added) == 1000 and len(result.changed) == 1000 and len(result.removed) == 500
        assert seen and all(s in (old_names, new_names) for s in seen)
        state = store.read_source("big")
        assert state is not None and set(state.names) == new_names
        assert all(t.source_id == "big" for t in state.changed.values())
        assert store.read_source("other") is not None and len(store.read_source("other").names) == 2  # type: ignore[union-attr]


def test_a_failed_sync_leaves_the_previous_tools(pg_dsn: str, tmp_path: Path) -> None:
    good = tmp_path / "tools.jsonl"
    good.write_text(json.dumps({"name": "lookup", "description": "Look a thing up."}))
    with PostgresStore(pg_dsn) as store:
        store.write_source("taken", [Tool("shared_x", "Held by another source.")])
        sync_source(good, store, source_id="shared")
        bad = tmp_path / "bad.jsonl"  # shared_lookup is fine, but x collides with source 'taken'
        bad.write_text("\n".join(json.dumps({"name": n, "description": "d"}) for n in ("lookup", "extra", "x")))
        with pytest.raises(StoreError, match="already held by source 'taken'"):
            sync_source(bad, store, prefix="shared")
        state = store.read_source("shared")
        assert state is not None and state.names == ("lookup",)


def test_load_source_reads_declarations_openapi_and_data_directories(tmp_path: Path) -> None:
    spec = {
        "openapi": "3.0.0",
        "info": {"title": "Pets"},
        "servers": [{"url": "http://127.0.0.1:9/api"}],
        "paths": {"/pets": {"get": {"operationId": "listPets", "summary": "List every pet."}}},
    }
    (tmp_path / "pets.json").write_text(json.dumps(spec))
    sid, found = load_source(tmp_path / "pets.json", prefix="pets")
    assert sid == "pets" and [t.name for t in found] == ["pets_listPets"] and found[0].source_id == "pets"
    data = tmp_path / "toolpool"
    data.mkdir()
    (data / "tools.jsonl").write_text(json.dumps({"name": "a", "description": "A."}))
    sid, found = load_source(data)
    assert sid == "toolpool" and [t.name for t in found] == ["a"]


def test_cli_catalog_sync(pg_dsn: str, tmp_path: Path) -> None:
    path = tmp_path / "crm.yaml"
    path.write_text("update_deal:\n  description: Update a deal.\nclose_deal:\n  description: Close a deal.\n")
    out = runner.invoke(app, ["catalog", "sync", str(path), "--store", pg_dsn, "--prefix", "crm"])
    assert out.exit_code == 0, out.output
    assert "2 added" in out.output and "source 'crm'" in out.output
    path.write_text("update_deal:\n  description: Update a deal's stage.\n")
    out = runner.invoke(app, ["catalog", "sync", str(path), "--store", pg_dsn, "--prefix", "crm", "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.stdout)
    assert report["changed"] == ["crm_update_deal"] and report["removed"] == ["crm_close_deal"]
    with PostgresStore(pg_dsn) as store:
        assert store.sources()[0]["kind"] == "sync" and store.sources()[0]["tool_count"] == 1
    found = runner.invoke(app, ["search", pg_dsn, "deal stage", "--json"])  # what replicas serve
    assert found.exit_code == 0, found.output
    assert json.loads(found.stdout)["tool_references"][0]["tool_name"] == "crm_update_deal"


def test_cli_catalog_sync_errors_are_clear(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps({"name": "a", "description": "A."}))
    out = runner.invoke(app, ["catalog", "sync", str(path), "--store", str(tmp_path / "x.db")])
    assert out.exit_code == 2 and "postgresql://" in out.output
    port = _closed_port()
    out = runner.invoke(app, ["catalog", "sync", str(path), "--store", f"postgresql://u:secret@127.0.0.1:{port}/db"])
    # a database that is down is not a usage error: status 1 (PROBLEM), code store_unavailable
    assert out.exit_code == 1 and "store_unavailable" in out.output and "secret" not in out.output


# -- failures --------------------------------------------------------------------------------
def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_server_is_store_unavailable_without_the_password() -> None:
    dsn = f"postgresql://me:hunter2@127.0.0.1:{_closed_port()}/cat"
    with pytest.raises(StoreUnavailable) as caught:
        PostgresStore(dsn)
    text = caught.value.message + caught.value.hint
    assert "127.0.0.1" in text and "hunter2" not in text and "unreachable" in caught.value.hint
    assert is_postgres_url(dsn) and not is_postgres_url("tools.db")
    assert describe_dsn(dsn).endswith("/cat")


def test_a_restart_is_survived_by_the_next_call(postgres: PostgresServer, pg_dsn: str) -> None:
    """A connection closed by a server restart is replaced on the next call; during the
    outage calls fail with StoreUnavailable."""
    with PostgresStore(pg_dsn) as store:
        store.put("ns", "k", "before")
        postgres.stop()
        try:
            with pytest.raises(StoreUnavailable) as caught:
                store.put("ns", "k", "during")
            assert "PostgreSQL store" in caught.value.message and "restarting" in caught.value.hint
        finally:
            postgres.start()
        assert store.get("ns", "k").text == "before"  # type: ignore[union-attr]
        store.put("ns", "k", "after")
        assert store.get("ns", "k").text == "after"  # type: ignore[union-attr]


def test_the_postgres_examples_in_docs_store_md_run(pg_dsn: str) -> None:
    import re

    text = (DOCS / "store.md").read_text(encoding="utf-8")
    found = re.findall(r"```python postgres\n(.*?)```", text, re.S)
    assert found
    for code in found:
        exec(compile(code, "docs/store.md", "exec"), {"DSN": pg_dsn})
