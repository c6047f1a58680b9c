"""The RFC 0001 contract: find, call, use, and structured errors for every bad input."""

import asyncio
import threading

import pytest

from toolscout import Catalog, Tool
from toolscout.access.policy import Policy
from toolscout.gateway import Gateway
from toolscout.request import MAX_QUERY_CHARS
from toolscout.search.keyword_snapshot import SNAPSHOT_NS

WEATHER = {
    "type": "object",
    "properties": {
        "city": {"type": "string", "description": "City name"},
        "days": {"type": "integer", "minimum": 1, "maximum": 10},
        "units": {"type": "string", "enum": ["metric", "imperial"]},
    },
    "required": ["city"],
}


def build() -> tuple[Catalog, dict]:
    cat = Catalog()
    calls: dict = {}

    def weather(args: dict) -> dict:
        calls["weather"] = args
        return {"city": args["city"], "temp_c": 21}

    async def send(args: dict) -> str:
        await asyncio.sleep(0)
        return f"sent to {args['channel']}"

    def explode(args: dict) -> None:
        raise RuntimeError("disk on fire")

    hang_release = threading.Event()

    def hang(args: dict) -> None:
        hang_release.wait(5)

    cat.add(Tool("get_weather_forecast", "Get the weather forecast for a city.", WEATHER, category="weather"), weather)
    cat.add(
        Tool(
            "slack_send_message",
            "Send a message to a Slack channel.",
            {"type": "object", "properties": {"channel": {"type": "string"}, "text": {"type": "string"}}, "required": ["channel", "text"]},
            category="slack",
        ),
        send,
    )
    cat.add(Tool("slack_list_channels", "List the channels of a Slack workspace.", category="slack"), lambda a: ["general"])
    cat.add(Tool("disk_cleanup", "Free disk space by removing temporary files.", category="system"), explode)
    cat.add(Tool("slow_report", "Build the quarterly sales report.", category="reports"), hang)
    cat.add(Tool("internal_reindex", "Rebuild the internal search index.", searchable=False, category="system"), lambda a: "ok")
    cat.add(Tool("declared_only", "A tool known only by its declaration.", category="misc"))
    calls["release"] = hang_release
    return cat, calls


@pytest.fixture
def gw() -> Gateway:
    cat, _ = build()
    return Gateway(cat, call_timeout=2.0)


def test_find_returns_seed_001_shape_with_schemas(gw: Gateway):
    r = gw.find_tools("weather forecast for a city", format="anthropic")
    assert r.ok, r.error
    d = r.to_dict()
    assert set(d) >= {"tools", "tool_references", "total_matches", "search_metadata"}
    assert d["tool_references"][0]["tool_name"] == "get_weather_forecast"
    assert 0 < d["tool_references"][0]["relevance_score"] <= 1
    assert d["tool_references"][0]["version"] == gw.catalog.get("get_weather_forecast").version
    assert d["tools"][0]["input_schema"]["required"] == ["city"]
    assert d["search_metadata"]["search_type"] in {"keyword", "hybrid"}
    assert d["search_metadata"]["query"] == "weather forecast for a city"


@pytest.mark.parametrize("query", ["", "   ", "\x00\x01\n\t"])
def test_empty_query_never_lists_the_catalog(gw: Gateway, query: str):
    r = gw.find_tools(query)
    assert r.error is not None and r.error.code == "empty_query"
    assert r.tools == [] and r.tool_references == []
    assert r.error.details["categories"]["slack"] == 2


def test_no_match_offers_names_and_categories(gw: Gateway):
    r = gw.find_tools("xylophone tuning quantum")
    assert r.error is not None and r.error.code == "no_match"
    assert "categories" in r.error.details and "suggestions" in r.error.details


def test_unknown_category_is_reported(gw: Gateway):
    r = gw.find_tools("send message", category="nope")
    assert r.error is not None and r.error.code == "no_match"
    assert "nope" in r.error.message


def test_non_searchable_tools_are_never_found_but_remain_callable(gw: Gateway):
    assert all(ref.tool_name != "internal_reindex" for ref in gw.find_tools("rebuild internal search index").tool_references)
    assert gw.call("internal_reindex", {}).ok


def test_limit_is_capped_and_validated(gw: Gateway):
    assert len(gw.find_tools("slack", limit=1).tools) == 1
    assert gw.find_tools("slack", limit="many").error.code == "invalid_request"  # type: ignore[arg-type]
    assert gw.find_tools("slack", limit=10_000).ok


def test_bad_search_type_and_format_are_structured_errors(gw: Gateway):
    assert gw.find_tools("slack", search_type="psychic").error.code == "invalid_request"
    assert gw.find_tools("slack", format="cobol").error.code == "invalid_request"
    assert gw.find_tools(None).error.code == "invalid_request"  # type: ignore[arg-type]


def test_huge_and_hostile_queries_do_not_crash(gw: Gateway):
    r = gw.find_tools("send slack message " + "x" * 50_000)
    assert r.ok and any("truncated" in w for w in r.warnings)
    assert len(r.query) <= MAX_QUERY_CHARS
    for q in ["🚀🔥 send message 💬", "发送 slack 消息", "\u202eslack\u200b", "((((((", "select:"]:
        out = gw.find_tools(q)
        assert out.ok or out.error.code in {"no_match", "empty_query", "invalid_request"}


def test_regex_search_and_hostile_pattern(gw: Gateway):
    r = gw.find_tools("slack_.*", search_type="regex")
    assert {ref.tool_name for ref in r.tool_references} == {"slack_send_message", "slack_list_channels"}
    bad = gw.find_tools("(a+)+$" * 2000, search_type="regex")
    assert bad.error is not None


def test_exact_name_wins_quoted_or_backticked(gw: Gateway):
    for q in ["slack_list_channels", "`slack_list_channels`", '"slack_list_channels"']:
        assert gw.find_tools(q).tool_references[0].tool_name == "slack_list_channels"


def test_policy_filters_before_ranking_and_blocks_calls():
    cat, _ = build()
    gw = Gateway(cat, policy=Policy(deny=("slack_send_*",)))
    names = [r.tool_name for r in gw.find_tools("send slack message", limit=5).tool_references]
    assert "slack_send_message" not in names
    denied = gw.call("slack_send_message", {"channel": "a", "text": "b"})
    unknown = gw.call("slack_send_nothing", {"channel": "a", "text": "b"})
    assert denied.error.code == "unknown_tool"  # hidden means absent: answered as a name that does not exist
    assert denied.error.model_dump(exclude={"message"}) == unknown.error.model_dump(exclude={"message"})
    assert "slack_send_message" not in denied.error.details["suggestions"]


def test_call_validates_and_runs_sync_and_async():
    cat, calls = build()
    gw = Gateway(cat)
    ok = gw.call("get_weather_forecast", {"city": "Paris", "days": 3})
    assert ok.ok and ok.structured == {"city": "Paris", "temp_c": 21}
    assert calls["weather"] == {"city": "Paris", "days": 3}
    sent = gw.call("slack_send_message", '{"channel": "#eng", "text": "hi"}')  # JSON text is accepted
    assert sent.ok and sent.text() == "sent to #eng"


def test_invalid_arguments_list_pointers_and_expected_types(gw: Gateway):
    r = gw.call("get_weather_forecast", {"days": "three", "units": "kelvin"})
    assert r.error.code == "invalid_arguments"
    problems = {p["pointer"]: p for p in r.error.details["errors"]}
    assert problems["/city"]["expected"] == "present"
    assert problems["/days"]["expected"] == "integer"
    assert problems["/units"]["expected"] == ["metric", "imperial"]


@pytest.mark.parametrize("args", [[1, 2], 42, "not json {", "[1]"])
def test_arguments_that_are_not_an_object(gw: Gateway, args):
    r = gw.call("get_weather_forecast", args)
    assert r.error.code == "invalid_arguments"


def test_unknown_tool_suggests_names(gw: Gateway):
    r = gw.call("slack_send_mesage", {})
    assert r.error.code == "unknown_tool"
    assert "slack_send_message" in r.error.details["suggestions"]


def test_raising_tool_returns_tool_error_and_gateway_carries_on(gw: Gateway):
    r = gw.call("disk_cleanup", {})
    assert r.error.code == "tool_error" and "disk on fire" in r.error.message
    assert gw.call("slack_list_channels", {}).ok


def test_hanging_tool_times_out():
    cat, calls = build()
    gw = Gateway(cat)
    r = gw.call("slow_report", {}, timeout=0.05)
    calls["release"].set()
    assert r.error.code == "timeout"


def test_declared_tool_without_handler(gw: Gateway):
    # Refused as metadata only, before its arguments are even checked (issue 24, item 1).
    assert gw.call("declared_only", {"anything": object()}).error.code == "metadata_only"


async def test_acall_inside_running_loop_and_sync_call_too(gw: Gateway):
    assert (await gw.acall("slack_list_channels", {})).ok
    assert gw.call("slack_list_channels", {}).ok  # sync wrapper works inside a loop


def test_use_tool_runs_clear_winner_and_refuses_ties(gw: Gateway):
    r = gw.use_tool("weather forecast", {"city": "Oslo"})
    assert r.ok and r.tool == "get_weather_forecast"
    tie = gw.use_tool("slack", {})
    assert tie.error.code == "ambiguous"
    assert {c["name"] for c in tie.error.details["candidates"]} >= {"slack_send_message", "slack_list_channels"}


def test_meta_tools_and_system_prompt(gw: Gateway):
    openai = gw.meta_tools("openai", call_tool=True)
    assert [t["function"]["name"] for t in openai] == ["find_tools", "call_tool"]
    assert gw.meta_tools("anthropic")[0]["input_schema"]["required"] == ["query"]
    prompt = gw.system_prompt()
    assert "find_tools" in prompt and "slack" in prompt


def test_catalog_changes_reach_search(gw: Gateway):
    gw.catalog.add(Tool("github_create_issue", "Open a new GitHub issue.", category="github"), lambda a: 1)
    assert gw.find_tools("open github issue").tool_references[0].tool_name == "github_create_issue"
    gw.catalog.remove("github_create_issue")
    assert all(r.tool_name != "github_create_issue" for r in gw.find_tools("open github issue").tool_references)


def test_semantic_without_embeddings_falls_back_to_keyword_with_warning(gw: Gateway):
    r = gw.find_tools("weather forecast", search_type="semantic")
    assert r.ok and r.search_type == "keyword"
    assert any("semantic" in w for w in r.warnings)


def test_calls_by_wire_name_reach_tools_whose_names_apis_reject():
    from toolscout import formats

    cat = Catalog()
    cat.add(Tool("weather.get forecast/v2", "Odd name from an upstream."), lambda a: "sunny")
    gw = Gateway(cat)
    wire = gw.find_tools("odd upstream name", format="openai").tools[0]["function"]["name"]
    assert wire == formats.wire_name("weather.get forecast/v2", "openai") != "weather.get forecast/v2"
    result = gw.call(wire, {})
    assert result.ok and result.text() == "sunny"


def test_format_aliases_are_accepted(gw: Gateway):
    assert gw.find_tools("weather", format="claude").tools[0]["input_schema"]


def test_store_backed_catalog_keeps_a_keyword_snapshot_for_fast_restarts(tmp_path):
    cat, _ = build()
    path = tmp_path / "tools.db"
    cat.save(path)
    first = Gateway(Catalog.open(path))
    assert first.find_tools("weather forecast").tool_references[0].tool_name == "get_weather_forecast"
    assert first.catalog.store is not None
    assert list(first.catalog.store.keys(SNAPSHOT_NS))  # snapshot written
    again = Gateway(Catalog.open(path))  # restart: the index loads the snapshot
    assert again.find_tools("weather forecast").tool_references[0].tool_name == "get_weather_forecast"


def test_policy_plus_per_call_allow_reuses_one_combined_predicate():
    cat, _ = build()
    gw = Gateway(cat, policy=Policy(deny=("disk_*",)))

    def only_slack(t: Tool) -> bool:
        return t.category == "slack"

    assert gw.visibility.predicate(only_slack) is gw.visibility.predicate(only_slack)
    names = {r.tool_name for r in gw.find_tools("slack message channel", allow=only_slack).tool_references}
    assert names and all(n.startswith("slack_") for n in names)


def test_embeddings_turn_auto_into_hybrid_and_cache_vectors_in_the_store(tmp_path):
    from _fake_embed import FakeEmbedder
    from toolscout.storage import SQLiteStore as Store

    cat, _ = build()
    embedder = FakeEmbedder(synonyms={"notify": "message", "team": "channel"})
    store = Store(tmp_path / "vectors.db")
    gw = Gateway(cat, embeddings=embedder, vector_store=store)
    r = gw.find_tools("notify my team")
    assert r.ok and r.search_type == "hybrid"
    assert r.tool_references[0].tool_name.startswith("slack_")
    assert gw.find_tools("notify my team", search_type="semantic").search_type == "semantic"
    embedded = sum(len(c) for c in embedder.calls)
    again = Gateway(cat, embeddings=embedder, vector_store=store)  # restart: vectors come from the store
    again.find_tools("weather forecast")
    assert sum(len(c) for c in embedder.calls) - embedded <= 2  # only query texts, no tool re-embedded


def test_keyword_only_by_default(gw: Gateway):
    assert gw.hybrid is None and gw.find_tools("weather").search_type == "keyword"


def test_select_with_only_unknown_names_is_unknown_tool_with_per_name_suggestions(gw: Gateway):
    r = gw.find_tools("select:slack_send_mesage, get_weather_forcast")
    assert r.error.code == "unknown_tool"
    assert {"slack_send_message", "get_weather_forecast"} <= set(r.error.details["suggestions"])
    assert gw.find_tools("select: ,").error.code in {"invalid_request", "empty_query"}
