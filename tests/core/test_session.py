"""Sessions: deferral rules, append-only lists, reveal bounds, versions, and handle()."""

from __future__ import annotations

import asyncio
import itertools
import json

import pytest

from _session_fixtures import build_catalog, build_session
from toolscout import Catalog, DeferPolicy, Tool
from toolscout.gateway import Gateway
from toolscout.session import Session
from toolscout.sessions.store import InMemorySessionStore


def names(defs: list[dict]) -> list[str]:
    return [d["name"] for d in defs]


def small_catalog(n: int, **extra: DeferPolicy) -> Catalog:
    cat = Catalog()
    for i in range(n):
        cat.add(Tool(f"t{i}", f"tool {i}"), handler=lambda a: "ok")
    for name, policy in extra.items():
        cat.add(Tool(name, f"{name} tool", defer=policy), handler=lambda a: "ok")
    return cat


# -- deferral rules (seed 003) ------------------------------------------------------------
def test_below_threshold_sends_every_tool_without_meta_tools() -> None:
    session = Session(Gateway(small_catalog(14)))
    assert not session.deferring
    assert names(session.tools()) == [f"t{i}" for i in range(14)]
    assert session.handle("t3", {}).ok


def test_at_threshold_only_meta_and_pinned_are_sent() -> None:
    session = Session(Gateway(small_catalog(14, pinned=DeferPolicy.NEVER)))
    assert session.deferring
    assert names(session.tools()) == ["find_tools", "pinned"]


def test_always_policy_defers_even_below_threshold() -> None:
    session = Session(Gateway(small_catalog(3, secret=DeferPolicy.ALWAYS)))
    assert names(session.tools()) == ["find_tools", "t0", "t1", "t2"]
    assert session.handle("secret", {}).error.code == "not_revealed"


def test_never_defer_allowlist_pins_by_name() -> None:
    with pytest.warns(UserWarning, match="never_defer names no tool in the catalog: missing"):
        session = Session(Gateway(small_catalog(20)), never_defer=["t7", "missing"])
    assert names(session.tools()) == ["find_tools", "t7"]
    assert session.handle("t7", {}).ok


def test_threshold_is_configurable() -> None:
    assert not Session(Gateway(small_catalog(20)), threshold=50).deferring


# -- append-only, byte-stable lists ---------------------------------------------------
def test_reveals_append_and_earlier_bytes_never_change() -> None:
    session = build_session()
    lists = [session.tools("anthropic")]
    for query in ("weather forecast", "send email", "select:format_disk", "inventory record 7"):
        assert session.handle("find_tools", {"query": query}).ok
        lists.append(session.tools("anthropic"))
    for before, after in itertools.pairwise(lists):
        assert json.dumps(after[: len(before)]) == json.dumps(before)
        assert len(after) >= len(before)
    assert names(lists[-1])[:5] == ["find_tools", "read_notes", "get_weather", "send_email", "format_disk"]


def test_find_outcome_lists_versions_and_reveals() -> None:
    session = build_session()
    outcome = session.handle("find_tools", '{"query": "weather forecast", "limit": 1}')
    assert outcome.ok and outcome.revealed == ("get_weather",)
    version = session.gateway.catalog.get("get_weather").version
    assert outcome.references[0].version == version
    assert f"get_weather@{version}" in outcome.text()
    again = session.handle("find_tools", {"query": "weather forecast", "limit": 1})
    assert again.revealed == ()  # already in the list: nothing new appended


def test_select_loads_exact_names_and_suggests_for_typos() -> None:
    session = build_session()
    outcome = session.handle("find_tools", {"query": "select:send_email, `format_disk`"})
    assert outcome.revealed == ("send_email", "format_disk")
    bad = session.handle("find_tools", {"query": "select:get_wether"})
    assert bad.error.code == "unknown_tool"
    assert "get_weather" in bad.error.details["suggestions"]


def test_reveal_set_is_bounded_and_evicts_least_recently_used() -> None:
    session = build_session(max_revealed=2)
    session.handle("find_tools", {"query": "select:get_weather"})
    session.handle("find_tools", {"query": "select:send_email"})
    assert session.handle("get_weather", {"city": "Oslo"}).ok  # get_weather is now the freshest
    session.handle("find_tools", {"query": "select:format_disk"})
    assert session.revealed == ("get_weather", "format_disk")
    assert session.handle("send_email", {"to": "a", "body": "b"}).error.code == "not_revealed"
    assert {"event": "evicted", "turn": 0, "tool": "send_email"} in session.ledger.events


def test_changed_schema_is_sent_in_place_and_noted() -> None:
    cat = build_catalog()
    session = Session(Gateway(cat))
    session.handle("find_tools", {"query": "select:send_email,get_weather"})
    before = session.tools("openai")
    new = cat.get("send_email").replace(description="Send an email, with CC.")
    cat.add(new, handler=lambda a: "sent", replace=True)
    after = session.tools("openai")
    assert names_openai(after) == names_openai(before)
    assert after[2]["function"]["description"] == "Send an email, with CC."
    assert json.dumps(after[:2]) == json.dumps(before[:2])
    change = next(e for e in session.ledger.events if e["event"] == "schema_changed")
    assert change["tool"] == "send_email" and change["new"] == new.version


def test_removed_tool_leaves_the_list() -> None:
    cat = build_catalog()
    session = Session(Gateway(cat))
    session.handle("find_tools", {"query": "select:send_email"})
    cat.remove("send_email")
    assert "send_email" not in names(session.tools())
    assert session.handle("send_email", {}).error.code == "unknown_tool"


def names_openai(defs: list[dict]) -> list[str]:
    return [d["function"]["name"] for d in defs]


# -- handle(): every kind of call -----------------------------------------------------
def test_bad_calls_get_recoverable_errors() -> None:
    session = build_session()
    assert session.handle("send_email", {"to": "x"}).error.code == "not_revealed"
    unknown = session.handle("sendemail", {})
    assert unknown.error.code == "unknown_tool" and "did you mean" in unknown.text().lower()
    assert session.handle("find_tools", '{"query": ').error.code == "invalid_arguments"
    assert session.handle("find_tools", "[1, 2]").error.code == "invalid_arguments"
    assert session.handle("find_tools", {"query": ""}).error.code == "empty_query"
    session.handle("find_tools", {"query": "select:send_email,format_disk"})
    missing = session.handle("send_email", '{"to": "x"}')
    assert missing.error.code == "invalid_arguments" and missing.error.details["errors"][0]["pointer"] == "/body"
    raised = session.handle("format_disk", None)
    assert raised.error.code == "tool_error" and "disk on fire" in raised.text()
    assert session.handle("send_email", {"to": "a", "body": "b"}).text() == "sent to a"


def test_repeated_search_gets_a_hint() -> None:
    session = build_session(repeat_limit=3)
    outcomes = [session.handle("find_tools", {"query": "weather forecast"}) for _ in range(3)]
    assert not outcomes[1].hint
    assert "3 times" in outcomes[2].hint and "get_weather" in outcomes[2].text()


def test_call_tool_meta_tool() -> None:
    session = build_session(call_tool=True)
    assert names(session.tools())[:2] == ["find_tools", "call_tool"]
    session.handle("find_tools", {"query": "select:get_weather"})
    outcome = session.handle("call_tool", {"name": "get_weather", "arguments": {"city": "Rome"}})
    assert outcome.ok and json.loads(outcome.text()) == {"city": "Rome", "temp_c": 21}
    assert session.handle("call_tool", {"arguments": {}}).error.code == "invalid_arguments"


def test_allow_scopes_search_and_calls() -> None:
    session = build_session(allow=lambda t: t.name != "get_weather")
    found = session.handle("find_tools", {"query": "weather forecast"})
    assert "get_weather" not in [r.tool_name for r in found.references]
    assert session.handle("find_tools", {"query": "select:get_weather"}).error.code == "unknown_tool"
    assert session.handle("get_weather", {"city": "x"}).error.code == "unknown_tool"  # hidden means absent


def test_async_and_sync_inside_a_running_loop() -> None:
    session = build_session()

    async def main() -> tuple[str, str]:
        found = await session.ahandle("find_tools", {"query": "select:read_notes"})
        sync = session.handle("read_notes", {})  # the sync variant works inside a loop too
        return found.name, sync.text()

    assert asyncio.run(main()) == ("find_tools", "no notes")


# -- stores and ledger ----------------------------------------------------------------
def test_store_evicts_oldest_sessions_and_state_round_trips() -> None:
    gateway = Gateway(build_catalog())
    store = InMemorySessionStore(gateway, max_sessions=2, threshold=15)
    a, b = store.session("a"), store.session("b")
    assert store.session("a") is a  # touching "a" makes "b" the oldest
    store.session("c")
    assert "b" not in store and "a" in store and len(store) == 2
    a.handle("find_tools", {"query": "select:send_email,get_weather"})
    a.handle("get_weather", {"city": "x"})
    copy = Session(gateway, session_id="a").restore(json.loads(json.dumps(a.state())))
    assert copy.revealed == a.revealed
    assert json.dumps(copy.tools("mcp")) == json.dumps(a.tools("mcp"))
    assert b.id == "b"


def test_ledger_counts_turns_against_the_static_list() -> None:
    session = build_session()
    session.tools("openai")
    session.handle("find_tools", {"query": "select:get_weather"})
    session.tools("openai")
    turns = session.ledger.turns
    assert [t.names for t in turns] == [
        ("find_tools", "read_notes"),
        ("find_tools", "read_notes", "get_weather"),
    ]
    assert 0 < turns[0].tokens < turns[1].tokens < turns[0].baseline_tokens
    assert session.ledger.baseline_tokens == 2 * turns[0].baseline_tokens
    assert 0.5 < session.ledger.saved_fraction < 1
    assert "saved, o200k" in session.ledger.report()
    assert session.ledger.to_dict()["turns"][1]["tools"][-1] == "get_weather"


# -- property: order is preserved under any sequence of reveals and evictions ------------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_PROPERTY_GATEWAY = Gateway(build_catalog(filler=12))
_NAMES = [n for n in _PROPERTY_GATEWAY.catalog.names() if n != "read_notes"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.sampled_from(_NAMES), min_size=1, max_size=3), max_size=12), st.integers(1, 6))
def test_list_order_survives_any_reveal_sequence(batches: list[list[str]], cap: int) -> None:
    session = Session(_PROPERTY_GATEWAY, max_revealed=cap)
    before = session.tools("mcp", record=False)
    for batch in batches:
        session.handle("find_tools", {"query": "select:" + ",".join(batch)})
        after = session.tools("mcp", record=False)
        kept = [d for d in after if d["name"] in {b["name"] for b in before}]
        # Survivors keep their relative order and exact bytes; new tools only at the end.
        assert json.dumps(kept) == json.dumps([d for d in before if d["name"] in {k["name"] for k in kept}])
        assert json.dumps(after[: len(kept)]) == json.dumps(kept)
        assert len(session.revealed) <= cap
        before = after
