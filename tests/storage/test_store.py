"""The SQLite store: round trips, atomic saves, damaged files, format versions, blobs."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from toolscout.catalog import Catalog
from toolscout.errors import StoreError
from toolscout.model import Annotations, DeferPolicy, Tool
from toolscout.storage import FORMAT_VERSION, load_tools, save_catalog, tools_digest
from toolscout.storage import SQLiteStore as Store


def full_tool() -> Tool:
    """A tool with every field set to a non-default value."""
    return Tool(
        "crm_update_deal",
        "Update a deal's stage or amount. Use after a call.",
        {
            "type": "object",
            "properties": {
                "deal_id": {"type": "string", "description": "Deal id"},
                "stage": {"type": "string", "enum": ["won", "lost"]},
            },
            "required": ["deal_id"],
        },
        output_schema={"type": "object", "properties": {"ok": {"type": "boolean"}}},
        source="mcp",
        source_id="crm",
        original_name="update_deal",
        origin="mcp:crm(config.json)",
        category="crm",
        tags=("sales", "deal"),
        annotations=Annotations(
            title="Update deal", read_only=False, destructive=False, idempotent=True, open_world=True
        ),
        permission="write",
        searchable=False,
        available=False,
        platforms=("macos", "linux"),
        defer=DeferPolicy.NEVER,
        display={"en": "Update deal", "zh-CN": "更新交易"},
        descriptions={"zh-CN": "更新交易的阶段或金额。"},
        meta={"owner": "sales-team", "weight": 2},
    )


def tools(n: int, tag: str = "v1") -> list[Tool]:
    return [Tool(f"tool_{i}", f"Tool number {i} ({tag}).", category="misc") for i in range(n)]


def test_round_trip_keeps_every_field(tmp_path: Path) -> None:
    original = [full_tool(), Tool("plain", "A plain tool.")]
    with Store(tmp_path / "s.db") as store:
        assert store.save_tools(original) == 2
        loaded = store.load_tools()
    assert [t.to_dict() for t in loaded] == [t.to_dict() for t in original]
    assert loaded[0].schema_json == original[0].schema_json
    assert loaded[0].version == original[0].version
    assert loaded[0].annotations == original[0].annotations
    assert loaded[0].defer is DeferPolicy.NEVER


def test_checked_path_restores_the_same_tools(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # reach-in: FAST is the codec's switch to the checked path, which no public call can force
    import toolscout.storage._codec as store_module

    with Store(tmp_path / "s.db") as store:
        store.save_tools([full_tool()])
        fast = store.load_tools()
        monkeypatch.setattr(store_module, "FAST", False)  # as if Tool had gained a field
        checked = store.load_tools()
    assert fast == checked == [full_tool()]


def test_catalog_save_and_open_keep_order(tmp_path: Path) -> None:
    cat = Catalog([*tools(5), full_tool()])
    cat.save(tmp_path / "cat.db")
    again = Catalog.open(tmp_path / "cat.db")
    assert again.names() == cat.names()
    assert again.get("crm_update_deal") == full_tool()


def test_save_replaces_previous_tools(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    save_catalog(Catalog(tools(10)), path)
    save_catalog(Catalog(tools(3, "v2")), path)
    loaded = Catalog(load_tools(path))
    assert len(loaded) == 3
    assert loaded.get("tool_0").description.endswith("(v2).")
    with Store(path) as store:
        assert store.info()["tool_count"] == "3"


def test_failed_save_leaves_previous_catalog_intact(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    save_catalog(Catalog(tools(10)), path)

    def broken() -> Iterator[Tool]:
        yield from tools(5, "v2")
        raise RuntimeError("disk on fire")

    with Store(path) as store, pytest.raises(RuntimeError):
        store.save_tools(broken())
    loaded = Catalog(load_tools(path))
    assert len(loaded) == 10
    assert all(t.description.endswith("(v1).") for t in loaded)


def test_killed_writer_leaves_previous_catalog_intact(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    save_catalog(Catalog(tools(10)), path)
    script = textwrap.dedent(
        f"""
        import sys
        from toolscout.model import Tool
        from toolscout.storage import SQLiteStore as Store

        def gen():
            for i in range(2000):
                if i == 1000:
                    print("half", flush=True)
                    sys.stdin.readline()  # wait here until killed
                yield Tool(f"new_{{i}}", "new")

        Store({str(path)!r}).save_tools(gen())
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "half"
        proc.kill()
    finally:
        proc.wait()
    loaded = Catalog(load_tools(path))
    assert loaded.names() == [f"tool_{i}" for i in range(10)]


def test_reader_sees_last_committed_catalog_while_a_save_runs(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    save_catalog(Catalog(tools(4)), path)
    seen: list[int] = []

    def gen() -> Iterator[Tool]:
        yield from tools(50, "v2")
        with Store(path) as reader:  # another connection, mid-transaction of the writer
            seen.append(len(reader.load_tools()))

    with Store(path) as writer:
        writer.save_tools(gen())
    assert seen == [4]
    assert len(Catalog(load_tools(path))) == 50


@pytest.mark.parametrize(
    "content", [b"this is not a database at all" * 100, b"SQLite format 3\x00" + b"\xff" * 200]
)
def test_damaged_file_gives_store_error_with_hint(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.db"
    path.write_bytes(content)
    with pytest.raises(StoreError) as err:
        Catalog(load_tools(path))
    assert err.value.code == "store_error"
    assert "delete it" in err.value.hint


def test_malformed_tool_record_gives_store_error(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    save_catalog(Catalog(tools(2)), path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE tools SET record='{not json' WHERE pos=1")
    with pytest.raises(StoreError, match="malformed"):
        Catalog(load_tools(path))


def test_foreign_sqlite_database_is_refused_and_left_untouched(tmp_path: Path) -> None:
    path = tmp_path / "app.db"
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    db.close()
    with pytest.raises(StoreError, match="not a toolscout store"):
        Store(path)
    with sqlite3.connect(path) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    db.close()
    assert tables == {"users"}


def test_newer_format_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    save_catalog(Catalog(tools(2)), path)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value=? WHERE key='format_version'", (str(FORMAT_VERSION + 1),))
    with pytest.raises(StoreError) as err:
        Store(path)
    assert "format version" in err.value.message
    assert "Upgrade" in err.value.hint


def test_missing_store_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no store"):
        load_tools(tmp_path / "absent.db")


def test_blob_namespaces(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store:
        store.put("mcp", "github", '[{"name": "x"}]', {"config_hash": "abc"})
        store.put("emb", "minilm:123", b"\x00\x01\x02")
        store.put("emb", "minilm:456", b"\x03")
        assert store.get("mcp", "github").text == '[{"name": "x"}]'
        assert store.get("mcp", "github").meta == {"config_hash": "abc"}
        assert store.get("mcp", "github").updated_at > 0
        assert store.get("emb", "minilm:123").value == b"\x00\x01\x02"
        assert store.keys("emb") == ["minilm:123", "minilm:456"]
        assert store.keys("mcp") == ["github"]
        assert store.get("emb", "github") is None
        assert store.delete("emb", "minilm:123") is True
        assert store.delete("emb", "minilm:123") is False
        assert store.put_many("emb", [("a", b"1", None), ("b", b"2", {"dim": 1})]) == 2
        assert store.clear("emb") == 3
        assert store.keys("emb") == []
    with Store(tmp_path / "s.db") as again:  # persisted, and saving tools does not touch blobs
        again.save_tools(tools(1))
        assert again.get("mcp", "github").meta == {"config_hash": "abc"}


def test_damaged_blob_metadata_gives_store_error(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    with Store(path) as store:
        store.put("ns", "k", b"v", {"a": 1})
    with sqlite3.connect(path) as db:
        db.execute("UPDATE blobs SET meta='{oops'")
    db.close()
    with Store(path) as store, pytest.raises(StoreError, match="damaged"):
        store.get("ns", "k")


def test_arrays_round_trip_without_pickle(tmp_path: Path) -> None:
    import numpy as np

    vocab = np.array(["send", "messag", "通知"])
    scores = np.arange(6, dtype=np.float32).reshape(2, 3)
    with Store(tmp_path / "s.db") as store:
        store.put_arrays("index.keyword", "k1", {"vocab": vocab, "scores": scores}, {"analyzer": 3})
        back = store.get_arrays("index.keyword", "k1")
        assert back is not None and set(back) == {"vocab", "scores"}
        assert back["vocab"].tolist() == vocab.tolist()
        assert back["scores"].dtype == np.float32 and np.array_equal(back["scores"], scores)
        assert store.get("index.keyword", "k1").meta == {"analyzer": 3}
        with pytest.raises(StoreError, match="numbers or strings"):
            store.put_arrays("index.keyword", "bad", {"x": np.array([{"a": 1}], dtype=object)})
        store.put("index.keyword", "damaged", b"not an npz")
        assert store.get_arrays("index.keyword", "damaged") is None
        assert store.get_arrays("index.keyword", "absent") is None


def test_tools_digest_tracks_names_versions_and_order() -> None:
    a, b = tools(2)
    assert tools_digest([a, b]) == tools_digest(tools(2))
    assert tools_digest([a, b]) != tools_digest([b, a])
    assert tools_digest([a, b]) != tools_digest([a, b.replace(description="changed")])


def test_blob_value_of_wrong_type_is_refused(tmp_path: Path) -> None:
    with Store(tmp_path / "s.db") as store, pytest.raises(StoreError, match="bytes or str"):
        store.put("ns", "k", 42)  # type: ignore[arg-type]


def test_one_store_shared_by_threads(tmp_path: Path) -> None:
    import threading

    barrier = threading.Barrier(4)
    with Store(tmp_path / "s.db") as store:

        def writer(w: int) -> None:
            barrier.wait()
            for k in range(50):
                store.put("ns", f"{w}-{k}", f"value {w} {k}")

        threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert len(store.keys("ns")) == 200
        assert store.get("ns", "3-49").text == "value 3 49"


def test_two_processes_writing_one_store_both_land(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    Store(path).close()
    script = "import sys\nfrom toolscout.storage import SQLiteStore as Store\ns = Store(sys.argv[1])\n" + (
        "s.put_many('ns', [(f'{sys.argv[2]}-{k}', 'x', None) for k in range(200)])\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(path), tag]) for tag in ("a", "b")]
    assert [p.wait() for p in procs] == [0, 0]
    with Store(path) as store:
        assert len(store.keys("ns")) == 400


def test_columns_and_rows_restore_the_same_tools(tmp_path: Path) -> None:
    """A save writes the tools twice: rows (the record) and columns (what loads fast). Both
    give back tools equal field for field, and schemas shared by many tools load once."""
    shared = {"type": "object", "properties": {"q": {"type": "string", "description": "Qué"}}}
    original = [full_tool(), Tool("plain", "A plain tool."), Tool("ünïcode", "Déjà vu 東京", shared, category="misc")]
    original += [t.replace(name=f"{t.name}_{i}") for i, t in enumerate(original * 3)]
    path = tmp_path / "s.db"
    with Store(path) as store:
        store.save_tools(original)
        assert store.keys("catalog.columns")
        from_columns = store.load_tools()
    with sqlite3.connect(path) as db:  # any change to a row drops the columns: rows are the record
        db.execute("UPDATE tools SET version=version WHERE pos=0")
    with Store(path) as store:
        assert not store.keys("catalog.columns")
        from_rows = store.load_tools()
    assert [t.to_dict() for t in from_columns] == [t.to_dict() for t in original] == [t.to_dict() for t in from_rows]
    assert from_columns == original and [t.version for t in from_columns] == [t.version for t in original]
    assert from_columns[2].schema_json is from_columns[5].schema_json  # one text for equal schemas
    catalog = Catalog.open(path)
    assert catalog.names() == [t.name for t in original] and catalog.get("plain") == original[1]


def test_arrays_are_read_as_np_load_reads_them_and_damage_is_a_miss(tmp_path: Path) -> None:
    """``get_arrays`` reads plain ``.npz`` members as views of the stored value (no copy):
    every dtype and layout comes back as ``np.load`` gives it, and a flipped byte anywhere
    in an array fails its CRC, so a damaged snapshot is a cache miss, never wrong numbers."""
    import io

    import numpy as np

    arrays = {
        "i": np.arange(10, dtype=np.int64),
        "u": np.array(["send", "通知"]),
        "empty": np.zeros(0, np.float32),
        "c": np.arange(12, dtype=np.float32).reshape(3, 4),
        "f": np.asfortranarray(np.arange(6, dtype=np.int32).reshape(2, 3)),
        "scalar": np.float64(2.5),
        "big": np.arange(200_000, dtype=np.uint16),
    }
    with Store(tmp_path / "s.db") as store:
        store.put_arrays("ns", "k", arrays)
        back = store.get_arrays("ns", "k")
        value = store.get("ns", "k").value
        with np.load(io.BytesIO(value), allow_pickle=False) as ref:
            assert back is not None and set(back) == set(ref.files)
            for name in ref.files:
                assert back[name].dtype == ref[name].dtype and back[name].shape == ref[name].shape
                assert np.array_equal(back[name], ref[name])
        damaged = bytearray(value)
        damaged[value.index(np.arange(200_000, dtype=np.uint16)[1000:1010].tobytes())] ^= 1
        store.put("ns", "damaged", bytes(damaged))
        assert store.get_arrays("ns", "damaged") is None


def _own_texts(n: int) -> list[Tool]:
    """Tools that each have their own description (as real catalogs mostly do), some not
    ASCII, some with output schemas, schemas shared: what a store leaves in its columns."""
    shared = {"type": "object", "properties": {"q": {"type": "string", "description": "Qué buscar"}}}
    out = []
    for i in range(n):
        text = f"Tool number {i} does one particular thing for its users, described at some length."
        if i % 3 == 0:
            text += f" Déjà vu, 東京 {i}."
        out.append(Tool(
            f"tool_{i}" if i % 4 else f"Tool-{i}",
            text,
            shared if i % 2 else {"type": "object", "properties": {f"p{i}": {"type": "integer"}}},
            output_schema={"type": "object"} if i % 5 == 0 else None,
            category=f"c{i % 3}",
            original_name=f"t{i}" if i % 7 == 0 else None,
        ))
    return out


def test_store_tools_read_their_texts_on_first_access(tmp_path: Path) -> None:
    """Reopened from columns, tools whose descriptions are their own leave description and
    schema texts in the store's columns until first read: a restart's index restore and
    keyword searches read none; the first read fills the tool's block of 128; each tool, once
    read, equals the saved one field for field; equal texts are one object; once every tool
    is read the columns are released."""
    import gc
    import weakref

    from toolscout.model import DeferredTool, filled
    from toolscout.search.index import ToolIndex

    original = _own_texts(300)
    path = tmp_path / "s.db"
    saved = Catalog(original)
    saved.save(path)
    ToolIndex(saved, snapshots=Store(path)).search("particular thing", limit=3)  # the snapshot a first start saves
    catalog = Catalog.open(path)
    tools = list(catalog)
    assert all(type(t) is DeferredTool and not filled(t) for t in tools)
    index = ToolIndex(catalog, snapshots=catalog.store)
    hits = index.search("particular thing 17", limit=5).hits
    assert hits and index.search("Tool-8", limit=1).hits[0].tool.name == "Tool-8"
    assert not any(filled(t) for t in tools)  # names, versions and labels only
    texts = weakref.ref(tools[0]._texts.texts)
    # the Catalog's reading surface, record for record
    assert len(catalog) == len(original) and catalog.names() == saved.names()
    assert [t.version for t in catalog] == [t.version for t in original]
    assert catalog.get("tool_130").description == original[130].description
    assert [i for i, t in enumerate(tools) if filled(t)] == list(range(128, 256))  # its block of 128
    assert list(catalog) == original and [t.to_dict() for t in catalog] == [t.to_dict() for t in original]
    assert [t.summary() for t in tools] == [t.summary() for t in original]
    assert tools[1].schema_json is tools[3].schema_json and tools[0].output_schema == {"type": "object"}
    assert tools[6].replace(category="x") == original[6].replace(category="x")
    assert len({*tools, *original}) == len(original)  # equal tools hash alike
    assert [(h.tool.name, h.score) for h in hits] == [
        (h.tool.name, h.score) for h in ToolIndex(Catalog(original)).search("particular thing 17", limit=5).hits
    ]
    del tools, hits, index
    gc.collect()
    assert texts() is None  # every tool read: the columns went


def test_deferred_texts_are_read_once_under_threads(tmp_path: Path) -> None:
    """Threads reading the same unread tools at once all see the saved texts."""
    from concurrent.futures import ThreadPoolExecutor

    original = _own_texts(400)
    save_catalog(original, tmp_path / "s.db")
    loaded = load_tools(tmp_path / "s.db")

    def read(k: int) -> list[tuple[str, str, str | None]]:
        order = loaded if k % 2 else loaded[::-1]
        return [(t.description, t.schema_json, t._output_json) for t in order]

    with ThreadPoolExecutor(8) as pool:
        seen = list(pool.map(read, range(8)))
    want = [(t.description, t.schema_json, t._output_json) for t in original]
    assert all(s == (want if k % 2 else want[::-1]) for k, s in enumerate(seen))


def _rewrite_columns(path: Path, change: Callable[[dict[str, Any]], None]) -> None:
    import numpy as np

    # reach-in: the test writes a damaged column file itself, in the codec's own encoding
    from toolscout.storage._codec import encode_arrays as _npz
    from toolscout.storage.sqlite import COLUMNS_NS  # where SQLite keeps the column file

    with Store(path) as store:
        key = store.info()["saved_at"]
        arrays = {k: np.array(v) for k, v in store.get_arrays(COLUMNS_NS, key).items()}
        change(arrays)
        with store._write("rewrite") as db:
            db.execute("UPDATE blobs SET value=? WHERE ns=? AND key=?", (_npz(arrays), COLUMNS_NS, key))


def test_columns_of_earlier_saves_and_shared_texts_load_whole(tmp_path: Path) -> None:
    """Columns saved before the byte offsets existed (same format version) load every text
    at once, as then; so do columns whose descriptions are mostly shared (deferring costs
    more than it saves); offsets that split a character are damage: the rows are read."""
    from toolscout.model import DeferredTool

    original = _own_texts(120)
    path = tmp_path / "old.db"
    save_catalog(original, path)
    _rewrite_columns(path, lambda a: [a.pop(k) for k in list(a) if k.endswith(".byte_ends")])
    old = load_tools(path)
    assert not any(isinstance(t, DeferredTool) for t in old) and old == original
    with Store(path) as store:
        assert store.keys("catalog.columns")  # read from the columns, not the rows

    copies = [t.replace(name=f"{t.name}_{i}") for i in range(40) for t in original[:3]]
    save_catalog(copies, tmp_path / "shared.db")
    shared = load_tools(tmp_path / "shared.db")
    assert not any(isinstance(t, DeferredTool) for t in shared) and shared == copies

    path = tmp_path / "damaged.db"
    save_catalog(original, path)

    def split_a_character(arrays: dict[str, Any]) -> None:
        text = bytes(arrays["description.text"])
        at = text.index("東".encode())
        ends = arrays["description.byte_ends"]
        ends[int((ends < at).sum())] = at + 1  # the text that holds 東 now ends inside it
    _rewrite_columns(path, split_a_character)
    damaged = load_tools(path)
    assert not any(isinstance(t, DeferredTool) for t in damaged) and damaged == original


def test_column_texts_with_nul_and_empty_values_round_trip(tmp_path: Path) -> None:
    """ASCII columns are split at inserted NULs: a text that holds NUL itself, or is empty,
    must still come back whole (the load then slices instead)."""
    original = [Tool("a\x00b", ""), Tool("c", "x\x00y", original_name=""), Tool("d", "", original_name="z")]
    original += [Tool(f"t{i}", "\x00" * i) for i in range(5)]
    save_catalog(original, tmp_path / "s.db")
    # reach-in: the column decoder on its own, so a NUL-bearing field is checked without a database
    from toolscout.storage._columns import tools_from_columns as _tools_from_columns
    from toolscout.storage.sqlite import COLUMNS_NS

    with Store(tmp_path / "s.db") as store:
        loaded = _tools_from_columns(store.get_arrays(COLUMNS_NS, store.info()["saved_at"]))  # no fallback to rows
    assert loaded == original and [t.original_name for t in loaded] == [t.original_name for t in original]
