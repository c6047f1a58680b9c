"""ToolIndex: exact names, select:, filters before ranking, modes, AutoCut, updates, suggest."""

from __future__ import annotations

import numpy as np
import pytest

from toolscout.catalog import Catalog
from toolscout.errors import EmptyQuery, InvalidRegex, InvalidRequest
from toolscout.model import Tool
from toolscout.search.autocut import autocut
from toolscout.search.base import Hit
from toolscout.search.index import ToolIndex


def _catalog() -> Catalog:
    return Catalog([
        Tool("send_email", "Send an email message to a recipient.", category="mail"),
        Tool("read_email", "Read the emails in an inbox.", category="mail"),
        Tool("get_weather_data", "Current weather for a city.", category="weather"),
        Tool("get_stock_data", "Latest stock quote for a ticker.", category="finance"),
        Tool("internal_reindex", "Rebuild the email search index.", searchable=False),
        Tool("mac_only_email", "Send email with the macOS Mail app.", platforms=("macos",)),
        Tool("offline_email", "Send email later.", available=False),
    ])


@pytest.fixture
def index() -> ToolIndex:
    return ToolIndex(_catalog())


def _names(outcome) -> list[str]:  # type: ignore[no-untyped-def]
    return [h.tool.name for h in outcome.hits]


@pytest.mark.parametrize("query", ["get_stock_data", "`get_stock_data`", '"get_stock_data"', "GET-STOCK-DATA", "get stock data", "get.stock.data"])
def test_exact_name_wins_in_any_spelling(index: ToolIndex, query: str) -> None:
    out = index.search(query, limit=5)
    assert _names(out)[0] == "get_stock_data"
    assert out.hits[0].relevance == 1.0


def test_select_returns_exactly_the_names_and_warns_on_unknown(index: ToolIndex) -> None:
    out = index.search("select:read_email, send_email,nope_tool", limit=1)
    assert _names(out) == ["read_email", "send_email"]
    assert out.mode == "select"
    assert any("nope_tool" in w for w in out.warnings)


def test_non_searchable_unavailable_and_other_platform_tools_are_hidden(index: ToolIndex) -> None:
    names = _names(index.search("email", limit=10))
    assert "internal_reindex" not in names and "offline_email" not in names
    assert "mac_only_email" not in _names(index.search("email", limit=10, platform="linux"))
    assert "mac_only_email" in _names(index.search("email", limit=10, platform="macos"))
    assert _names(index.search("internal_reindex", limit=5)) == []  # not even by exact name


def test_filters_apply_before_ranking_so_limit_is_filled() -> None:
    hidden = [Tool(f"weather_tool_{i}", "weather weather weather forecast") for i in range(10)]
    visible = [Tool(f"forecast_{i}", "a weather forecast service with many other words in it") for i in range(5)]
    index = ToolIndex(Catalog(hidden + visible))
    allow = lambda t: not t.name.startswith("weather_tool")  # noqa: E731
    out = index.search("weather", limit=3, allow=allow, autocut=False)
    assert len(out.hits) == 3 and all(n.startswith("forecast_") for n in _names(out))
    assert out.total_matches == 5
    out = index.search("weather", limit=5, exclude=[f"weather_tool_{i}" for i in range(10)], autocut=False)
    assert len(out.hits) == 5


def test_allow_mask_is_cached_per_predicate_and_catalog_generation() -> None:
    catalog = _catalog()
    index = ToolIndex(catalog)
    calls: list[str] = []

    def allow(tool: Tool) -> bool:
        calls.append(tool.name)
        return True

    index.search("email", limit=3, allow=allow)
    index.search("weather", limit=3, allow=allow)
    assert len(calls) == len(catalog)
    catalog.add(Tool("new_tool", "x"))
    index.search("email", limit=3, allow=allow)
    assert len(calls) == 2 * len(catalog) - 1


def test_category_filter(index: ToolIndex) -> None:
    assert set(_names(index.search("data email", limit=10, category="mail"))) == {"send_email", "read_email"}
    assert _names(index.search("email", limit=10, category="no-such-category")) == []


def test_regex_mode_and_glob(index: ToolIndex) -> None:
    assert _names(index.search("get_*_data", limit=5, mode="regex")) == ["get_weather_data", "get_stock_data"]
    assert _names(index.search("^read_", limit=5, mode="regex")) == ["read_email"]


def test_hostile_regexes_are_fast_or_rejected() -> None:
    index = ToolIndex(Catalog([Tool("a" * 60, "a" * 20_000 + "!")]))
    out = index.search("(a+)+$", limit=5, mode="regex")  # linear in RE2; would hang a backtracker
    assert _names(out) == ["a" * 60]
    with pytest.raises(InvalidRegex):
        index.search("x" * 10_000, limit=5, mode="regex")
    with pytest.raises(InvalidRegex):
        index.search(r"(a)\1", limit=5, mode="regex")
    with pytest.raises(InvalidRegex):
        index.search("(?=a)b", limit=5, mode="regex")


def test_bad_queries_raise_structured_errors(index: ToolIndex) -> None:
    with pytest.raises(EmptyQuery) as empty:
        index.search("   ", limit=5)
    assert empty.value.details["categories"]["mail"] == 2
    # Length is bounded at the edge (FindRequest truncates); the index trusts its input.
    assert index.search("email " * 2000, limit=5).hits
    with pytest.raises(InvalidRequest):
        index.search("email", limit=5, mode="telepathy")


def test_odd_characters_in_queries_do_not_crash(index: ToolIndex) -> None:
    for q in ["🎉🎉", "((((", "select:"]:
        out = index.search(q, limit=5)
        assert out.hits == [] and out.total_matches == 0  # nothing matches: an empty answer, not an error
    assert index.search("select:", limit=5).mode == "select"
    plain = _names(index.search("email", limit=5, autocut=False))
    assert plain
    for q in ["\x00\x01email", "邮件 email"]:  # the usable word still matches, whatever surrounds it
        assert _names(index.search(q, limit=5, autocut=False)) == plain


def test_relevance_is_between_zero_and_one(index: ToolIndex) -> None:
    out = index.search("send an email", limit=5, autocut=False)
    assert out.hits and all(0.0 < h.relevance <= 1.0 for h in out.hits)
    assert out.hits[0].why.startswith("keyword")


def test_catalog_changes_are_seen_on_next_search() -> None:
    catalog = _catalog()
    index = ToolIndex(catalog)
    assert _names(index.search("translate", limit=5)) == []
    catalog.add(Tool("translate_text", "Translate text between languages."))
    assert _names(index.search("translate", limit=5)) == ["translate_text"]
    catalog.remove("translate_text")
    assert _names(index.search("translate", limit=5)) == []
    assert _names(index.search("translate_text", limit=5)) == []


def test_registered_mode_and_auto_prefers_hybrid(index: ToolIndex) -> None:
    seen: list[np.ndarray] = []

    def ranker(query: str, limit: int, mask: np.ndarray) -> list[Hit]:
        seen.append(mask)
        doc = next(i for i, t in enumerate(index.tools) if t.name == "get_stock_data")
        return [Hit(doc, 2.0, "fake"), Hit(0, 1.5, "fake")]

    assert index.search("email", limit=3).mode == "keyword"
    index.register_mode("hybrid", ranker)
    out = index.search("email", limit=3, autocut=False)
    assert out.mode == "hybrid" and _names(out)[:2] == ["get_stock_data", "send_email"]
    assert out.hits[0].relevance == 1.0 and out.hits[1].relevance == pytest.approx(0.75)
    assert seen[0].dtype == bool and len(seen[0]) == len(index.tools)
    assert index.backend("keyword").name == "keyword"


def test_autocut_rules() -> None:
    assert autocut([10.0, 9.0, 4.0, 3.9]) == 2  # cliff: 9 -> 4 is a drop of more than half
    assert autocut([10.0, 6.0, 4.0, 3.0]) == 4  # no adjacent ratio above 2
    assert autocut([10.0, 6.0, 4.0, 3.0], "band") == 2  # band: >= half the top
    assert autocut([10.0, 1.0], "none") == 2
    assert autocut([]) == 0


def test_autocut_trims_the_search_tail() -> None:
    index = ToolIndex(Catalog([
        Tool("convert_currency", "Convert an amount between currencies using exchange rates."),
        Tool("misc_tool", "Does things; a long description about many unrelated topics like rates, music, food and travel plans."),
    ]))
    assert _names(index.search("convert currency exchange rates", limit=5)) == ["convert_currency"]
    assert len(index.search("convert currency exchange rates", limit=5, autocut=False).hits) == 2


def test_suggest_finds_close_names(index: ToolIndex) -> None:
    assert index.suggest("send_emial")[0] == "send_email"
    assert index.suggest("stock data", n=1) == ["get_stock_data"]
    assert "internal_reindex" not in index.suggest("internal_reindex")
    assert index.suggest("zzzzqqq") == []


def test_keyword_index_snapshot_restores_without_reanalysing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from toolscout.search.analyzer import analyze
    from toolscout.search.keyword import KeywordBackend
    from toolscout.storage import SQLiteStore as Store

    calls: list[str] = []

    def counting(text: str) -> list[str]:
        calls.append(text)
        return analyze(text)

    store = Store(tmp_path / "snap.db")
    first = ToolIndex(_catalog(), keyword=KeywordBackend(analyzer=counting), snapshots=store)
    expected = _names(first.search("send email", limit=5, autocut=False))
    assert calls and store.keys("index.keyword")
    calls.clear()
    again = ToolIndex(_catalog(), keyword=KeywordBackend(analyzer=counting), snapshots=store)
    assert _names(again.search("send email", limit=5, autocut=False)) == expected
    assert set(calls) == {"send email"}  # only the query was analysed: the index came from the snapshot
    changed = _catalog()
    changed.add(Tool("send_fax", "Send a fax."))
    calls.clear()
    fresh = ToolIndex(changed, keyword=KeywordBackend(analyzer=counting), snapshots=store)
    assert "send_fax" in _names(fresh.search("send", limit=10, autocut=False))
    assert len(calls) > 1  # a different catalog is a miss and rebuilds


def test_damaged_snapshot_is_a_miss(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from toolscout.search.keyword import KeywordBackend
    from toolscout.storage import SQLiteStore as Store

    store = Store(tmp_path / "snap.db")
    catalog = _catalog()
    key = KeywordBackend().snapshot_key(list(catalog))
    store.put_arrays("index.keyword", key, {"vocab": np.zeros(3, np.uint8)})
    index = ToolIndex(catalog, snapshots=store)
    assert _names(index.search("send email", limit=5))[0] == "send_email"



def test_a_rebuild_on_another_thread_is_waited_for_once_and_swapped_in_whole() -> None:
    """A replica's listener rebuilds the index right after a change. A search arriving
    meanwhile waits for the rest of that build (it never starts a second one) and finds the
    change; until the swap, the index still holds the previous snapshot whole."""
    import threading

    from toolscout.search.keyword import KeywordBackend

    started, gate = threading.Event(), threading.Event()
    rebuilds: list[int] = []

    class Gated(KeywordBackend):
        def rebuild(self, tools: list[Tool]) -> None:  # type: ignore[override]
            rebuilds.append(len(tools))
            if len(rebuilds) > 1:  # the first build (below) runs at once
                started.set()
                assert gate.wait(10)
            super().rebuild(tools)

    catalog = Catalog([Tool("crm_close_deal", "Close a deal as won or lost.")])
    index = ToolIndex(catalog, keyword=Gated())
    assert _names(index.search("close a deal", limit=3)) == ["crm_close_deal"]
    catalog.add(Tool("crm_open_ticket", "Open a support ticket for a customer."))
    builder = threading.Thread(target=index.refresh)
    builder.start()
    assert started.wait(10)  # the builder is inside the keyword rebuild
    found: list[list[str]] = []
    searcher = threading.Thread(target=lambda: found.append(_names(index.search("support ticket", limit=3))))
    searcher.start()
    assert len(index._tools) == 1 and len(index._resolver.tools) == 1  # the old snapshot, whole
    gate.set()
    builder.join(10)
    searcher.join(10)
    assert found == [["crm_open_ticket"]]
    assert rebuilds == [1, 2]  # the search waited for the listener's build instead of its own


def test_without_waiting_a_search_answers_from_the_old_snapshot_until_the_swap() -> None:
    """``wait_for_rebuild = False`` (a server's event loop): while another thread rebuilds,
    a search answers at once from the previous snapshot; after the swap it finds the change."""
    import threading

    from toolscout.search.keyword import KeywordBackend

    started, gate = threading.Event(), threading.Event()

    class Gated(KeywordBackend):
        def rebuild(self, tools: list[Tool]) -> None:  # type: ignore[override]
            if len(tools) > 1:
                started.set()
                assert gate.wait(10)
            super().rebuild(tools)

    catalog = Catalog([Tool("crm_close_deal", "Close a deal as won or lost.")])
    index = ToolIndex(catalog, keyword=Gated())
    index.wait_for_rebuild = False
    assert _names(index.search("close a deal", limit=3)) == ["crm_close_deal"]
    catalog.add(Tool("crm_open_ticket", "Open a support ticket for a customer."))
    builder = threading.Thread(target=index.refresh)
    builder.start()
    try:
        assert started.wait(10)
        assert _names(index.search("support ticket", limit=3)) == []  # answered now, from the old one
        assert _names(index.search("close a deal", limit=3)) == ["crm_close_deal"]
    finally:
        gate.set()
        builder.join(10)
    assert _names(index.search("support ticket", limit=3)) == ["crm_open_ticket"]


def test_snapshot_key_follows_content_not_object_sharing() -> None:
    from toolscout.search.keyword import KeywordBackend

    key = KeywordBackend().snapshot_key
    tools = list(_catalog())
    copies = [Tool.from_dict(t.to_dict()) for t in tools]
    assert key(copies) == key(tools)
    labelled = [Tool("a", "x", display={"fr": "A"}), Tool("b", "y", display={"fr": "A"})]
    assert key(labelled) == key([Tool.from_dict(t.to_dict()) for t in labelled])
    for change in ({"category": "other"}, {"tags": ["new"]}, {"original_name": "up"}, {"display": {"de": "B"}}):
        assert key([tools[0].replace(**change), *tools[1:]]) != key(tools), change
    assert key([tools[1], tools[0], *tools[2:]]) != key(tools)  # order is doc ids


@pytest.mark.parametrize("counts_kept", [True, False])
def test_a_restart_reads_the_term_counts_only_when_a_change_needs_them(tmp_path, counts_kept: bool) -> None:  # type: ignore[no-untyped-def]
    """A restart restores the scores and leaves the per-field term counts in the store; the
    first rebuild after a change reads them (or, if they are gone, analyses the tools again)
    and answers exactly as an index built from scratch."""
    from toolscout.search.keyword import KeywordBackend
    from toolscout.storage import SQLiteStore as Store

    store = Store(tmp_path / "snap.db")
    ToolIndex(_catalog(), snapshots=store).refresh()
    assert store.keys("index.keyword") == store.keys("index.keyword.counts")
    if not counts_kept:
        store.clear("index.keyword.counts")
    catalog = _catalog()
    index = ToolIndex(catalog, snapshots=store)
    index.refresh()
    kw = index.backend("keyword")
    assert isinstance(kw, KeywordBackend) and kw._counts_loader is not None and not kw._raw  # left in the store
    queries = ["send email", "weather in a city", "stock"]
    fresh = ToolIndex(_catalog())
    for q in queries:
        assert [(h.tool.name, h.score) for h in index.search(q, limit=5).hits] == [(h.tool.name, h.score) for h in fresh.search(q, limit=5).hits]
    assert index.explain("send email", "send_email") == fresh.explain("send email", "send_email")
    new = Tool("send_fax", "Send a fax to a number.", category="mail")
    catalog.add(new)
    fresh.catalog.add(new)
    for q in [*queries, "send a fax"]:
        assert [(h.tool.name, h.score) for h in index.search(q, limit=5).hits] == [(h.tool.name, h.score) for h in fresh.search(q, limit=5).hits]


def test_resolver_keeps_every_doc_of_a_shared_normalised_name() -> None:
    """Names that normalise alike (``Send-Email``, ``send.email``) share a key: the
    resolver lists all of them in catalog order and never guesses between them."""
    from toolscout.search.resolve import NameResolver

    names = ["Send-Email", "get_weather", "send.email", "Fetch", "SEND_EMAIL", "fetch_x", "Other.Tool"]
    resolver = NameResolver([Tool(n, f"tool {n}") for n in names])
    assert resolver.docs_named("send email") == [0, 2, 4]
    assert resolver.resolve("send_email") is None  # three tools: no guess
    assert resolver.resolve("Send-Email") == 0 and resolver.resolve("`send.email`") == 2
    assert resolver.docs_named("fetch") == [3] and resolver.resolve("other_tool") == 6
    assert resolver.docs_named("get-weather") == [1]


def test_resolver_answers_the_same_when_every_name_hashes_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """The resolver keeps hashes of names and normalised names, not the strings: a lookup
    checks each doc with the text's hash against the text, so a hash shared by other names
    (forced here: three hash values for all) never gives a wrong or missing answer."""
    from toolscout.search import resolve

    names = ["Send-Email", "get_weather", "send.email", "Fetch", "SEND_EMAIL", "fetch_x", "Other.Tool", "send_email_v2", "fetch"]
    tools = [Tool(n, f"tool {n}") for n in names]
    queries = [*names, "send email", "`send.email`", "other_tool", "FETCH", "get-weather", "nothing", "send_email", ""]
    plain = resolve.NameResolver(tools)
    expected = [(plain.resolve(q), plain.docs_named(q), plain.doc_of(q)) for q in queries]
    # reach-in: forces hash collisions between names, which no real catalog produces on demand
    monkeypatch.setattr(resolve, "_hash", lambda text: len(text) % 3)
    colliding = resolve.NameResolver(tools)
    assert [(colliding.resolve(q), colliding.docs_named(q), colliding.doc_of(q)) for q in queries] == expected
    assert expected[names.index("fetch")] == (8, [3, 8], 8)  # exact name first; both spellings listed
    assert colliding.docs_named("send email") == [0, 2, 4] and colliding.resolve("send_email") is None
