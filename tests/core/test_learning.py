"""Learning from usage: events from every surface, a bounded prior that needs agreement
across sessions, the off switch, ``usage_boost`` and ``also_used_with``, and ``eval --learn``."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest
from mcp import Client
from typer.testing import CliRunner

from _catalogs import catalog_of
from _paths import FIXTURES
from toolscout import Catalog
from toolscout.adapters.openai import ChatCompletionsAdapter
from toolscout.cli import app
from toolscout.context import Principal
from toolscout.gateway import Gateway
from toolscout.search.learning import NS, UsageLearner
from toolscout.server.mcp import GatewayServer
from toolscout.session import Session

FIXTURE = FIXTURES / "eval_small"
QUERY = "notify the team with a message"


def _catalog() -> Catalog:
    return catalog_of(
        (
            ("post_message", "Post a chat message to a channel."),
            ("send_email", "Send an email message to a recipient."),
            ("create_branch", "Create a git branch in a repository."),
            ("open_pull_request", "Open a pull request from a branch."),
            ("evil_tool", "Does something unrelated entirely."),
        ),
        fillers=10,
    )


def _handled(cat: Catalog) -> Catalog:
    """Handlers are code, not stored: give a reopened catalog its handlers back."""
    for tool in list(cat):
        cat.add(tool, handler=lambda a, n=tool.name: f"{n} done", replace=True)
    return cat


def _ranked(gw: Gateway, query: str = QUERY) -> list[str]:
    return [r.tool_name for r in gw.find_tools(query).tool_references]


def _use(gw: Gateway, session_id: str, query: str = QUERY, call: str = "send_email") -> None:
    session = Session(gw, session_id=session_id, threshold=1)
    assert session.handle("find_tools", {"query": query}).ok
    assert session.handle(call, {}).ok


def test_calls_across_sessions_lift_a_tool_and_the_boost_is_visible() -> None:
    gw = Gateway(_catalog(), learn=True)
    assert _ranked(gw)[0] == "post_message"
    for i in range(5):
        _use(gw, f"s{i}")
    refs = gw.find_tools(QUERY).tool_references
    assert refs[0].tool_name == "send_email"
    assert 0 < refs[0].usage_boost <= gw.learner.max_boost
    assert refs[0].to_dict()["usage_boost"] == refs[0].usage_boost
    # a new query sharing terms with the logged ones shares their evidence
    assert next(r for r in gw.find_tools("message the team").tool_references if r.tool_name == "send_email").usage_boost > 0


def test_a_small_log_is_exact_right_after_its_events_on_a_slow_machine() -> None:
    """However long the last rebuild took (a loaded machine), a small log is rebuilt inline,
    so a search right after calls reflects them."""
    gw = Gateway(_catalog(), learn=True)
    assert gw.learner is not None and _ranked(gw)[0] == "post_message"
    for i in range(5):
        gw.learner._build_cost, gw.learner._built_at = 1.0, time.time()  # as measured under load
        _use(gw, f"s{i}")
    assert _ranked(gw)[0] == "send_email"


def _one_session_bound(learner: UsageLearner) -> float:
    """What one session can move a tool by, in relevance units (docs/learning.md)."""
    return 2 * learner.max_boost / (1 + learner.min_sessions)


def test_one_session_alone_moves_a_tool_by_a_small_bounded_amount() -> None:
    gw = Gateway(_catalog(), learn=True)
    assert gw.learner is not None
    for _ in range(20):  # one session, repeating itself, counts once
        _use(gw, "same-session")
    refs = gw.find_tools(QUERY).tool_references
    assert refs[0].tool_name == "post_message"
    assert all(abs(r.usage_boost) <= _one_session_bound(gw.learner) + 1e-9 for r in refs)
    # words the tool does not contain need agreement: one session lifts it by nothing there
    learner = UsageLearner()
    for _ in range(50):
        learner.searched("one", "notify the team", ["send_email", "post_message"])
        learner.called("one", "send_email", True)
    prior = learner.prior("notify the team", list(_catalog()), 0)
    assert prior is None or prior.of([1]).get(1, 0.0) <= 0  # doc 1 is send_email


def test_pairs_weigh_more_than_their_terms_but_one_session_stays_bounded() -> None:
    # terms many sessions search alone are common; their pairs, searched by one session, are
    # rare: a pair may weigh up to its two terms together, and a query's pairs are scaled to
    # weigh together at most its terms, so one session still moves a tool by at most the bound
    tools = list(_catalog())
    learner = UsageLearner()
    query = "create a git branch in the repository"
    for i, word in enumerate(["create", "git", "branch", "repository"] * 3):
        learner.searched(f"word-{i}", word, ["filler_0"])
        learner.called(f"word-{i}", "filler_0", True)
    for _ in range(200):  # one session, repeating itself: every word is create_branch's own
        learner.searched("one", query, ["create_branch"])
        learner.called("one", "create_branch", True)
    prior = learner.prior(query, tools, 0)
    assert prior is not None
    derived = learner._derived
    assert derived is not None
    terms = ["creat", "git", "branch", "repositori"]
    pairs = ["creat git", "git branch", "branch repositori"]
    weight = {k: derived.terms[k][2] for k in terms + pairs}
    assert weight["git branch"] > (weight["git"] + weight["branch"]) / 2  # more than the mean (the old cap)
    assert weight["git branch"] <= weight["git"] + weight["branch"] + 1e-12
    assert sum(weight[k] for k in pairs) > sum(weight[k] for k in terms)  # the scaling applies
    lift = prior.of([2]).get(2, 0.0)  # doc 2 is create_branch
    assert 0 < lift <= _one_session_bound(learner) + 1e-9


def test_one_hostile_session_cannot_lift_a_wrong_tool_over_a_clearly_better_match() -> None:
    gw = Gateway(_catalog(), learn=True)
    learner = gw.learner
    assert learner is not None
    query = "create a git branch in the repository"
    assert _ranked(gw, query)[0] == "create_branch"
    for _ in range(500):  # a flood from one session: a tool sharing a word, and an unrelated one
        learner.searched("hostile", query, ["create_branch", "open_pull_request", "evil_tool"])
        learner.called("hostile", "open_pull_request", True)
        learner.searched("hostile", query, ["create_branch", "evil_tool"])
        learner.called("hostile", "evil_tool", True)
    refs = gw.find_tools(query).tool_references
    assert refs[0].tool_name == "create_branch"
    assert all(abs(r.usage_boost) <= _one_session_bound(learner) + 1e-9 for r in refs)
    assert all(r.usage_boost == 0 for r in refs if r.tool_name == "evil_tool")  # no shared word: nothing


def test_a_flood_of_poisoned_events_stays_bounded() -> None:
    gw = Gateway(_catalog(), learn=True)
    learner = gw.learner
    assert learner is not None
    before = {r.tool_name: r.relevance_score for r in gw.find_tools(QUERY).tool_references}
    for i in range(500):  # many fake sessions, all calling an unrelated tool
        learner.searched(f"p{i}", QUERY, ["evil_tool", "post_message"])
        learner.called(f"p{i}", "evil_tool", True)
    refs = gw.find_tools(QUERY).tool_references
    names = [r.tool_name for r in refs]
    assert names.index("evil_tool") > max(names.index("post_message"), names.index("send_email"))  # below real matches
    evil = next(r for r in refs if r.tool_name == "evil_tool")
    assert evil.usage_boost <= learner.max_boost and evil.relevance_score <= learner.max_boost + 1e-6
    post = next(r for r in refs if r.tool_name == "post_message")  # shown, never chosen: sinks, bounded
    floor = before["post_message"] * (1 - learner.max_sink) - learner.max_boost
    assert floor - 1e-3 <= post.relevance_score < before["post_message"]


def test_found_but_never_chosen_sinks_slowly_and_visibly() -> None:
    gw = Gateway(_catalog(), learn=True)
    learner = gw.learner
    assert learner is not None
    before = {r.tool_name: r.relevance_score for r in gw.find_tools(QUERY).tool_references}
    for i in range(60):  # post_message is shown every time and never chosen
        learner.searched(f"n{i}", "post a chat message", ["post_message"])
    refs = {r.tool_name: r for r in gw.find_tools(QUERY).tool_references}
    post = refs["post_message"]
    assert post.relevance_score < before["post_message"]
    assert post.relevance_score >= before["post_message"] * (1 - learner.max_sink) - 1e-3  # at most 5%
    assert -learner.max_sink <= post.usage_boost < 0  # shown, as a negative contribution


def test_off_switch_and_default_for_a_store_the_user_owns(tmp_path: Path) -> None:
    off = Gateway(_catalog(), learn=False)
    assert off.learner is None and off.index.usage is None
    _use(off, "a")
    assert all(r.usage_boost == 0 for r in off.find_tools(QUERY).tool_references)
    assert Gateway(_catalog()).learner is None  # no store of the user's: nothing learned

    path = tmp_path / "catalog.db"
    _catalog().save(path)
    cat = _handled(Catalog.open(path))
    gw = Gateway(cat)  # a store the user owns: on by default, events persisted there
    assert gw.learner is not None
    for i in range(5):
        _use(gw, f"s{i}")
    gw.learner.flush()  # events are written in the background: an orderly stop writes them
    assert cat.store is not None and len(cat.store.keys(NS)) >= 5
    events = [json.loads(cat.store.get(NS, k).text) for k in cat.store.keys(NS)]
    assert all(set(e) == {"s", "t", "q", "p", "f", "c"} for e in events)  # terms, pairs, names, outcomes: no arguments
    cat.store.put(NS, "broken", "{not json")  # a bad row is skipped, never fatal
    cat.store.put(NS, "old", json.dumps({"s": "x", "t": 1.0, "q": ["team"], "f": [], "c": {}}))
    again = Gateway(Catalog.open(path))  # a restart keeps what was learned
    assert "old" not in cat.store.keys(NS)  # decayed to nothing: pruned from the store
    assert _ranked(again)[0] == "send_email"
    assert _ranked(Gateway(Catalog.open(path), learn=False))[0] == "post_message"


def test_co_usage_hints_and_select_loads_them() -> None:
    gw = Gateway(_catalog(), learn=True)
    for i in range(3):
        session = Session(gw, session_id=f"c{i}", threshold=1)
        session.handle("find_tools", {"query": "create a git branch"})
        assert session.handle("create_branch", {}).ok
        session.handle("find_tools", {"query": "open a pull request"})
        assert session.handle("open_pull_request", {}).ok
    found = gw.find_tools("create a git branch")
    ref = next(r for r in found.tool_references if r.tool_name == "create_branch")
    assert ref.also_used_with == ("open_pull_request",)
    assert ref.to_dict()["also_used_with"] == ["open_pull_request"]
    assert "also used with: open_pull_request" in found.text()
    loaded = gw.find_tools("select:" + ",".join(ref.also_used_with))
    assert [t.name for t in loaded.found] == ["open_pull_request"]
    # a tool the caller may not see is never named
    hidden = gw.find_tools("create a git branch", allow=lambda t: t.name != "open_pull_request")
    assert all("open_pull_request" not in r.also_used_with for r in hidden.tool_references)


def test_events_through_the_library_without_a_session_object() -> None:
    gw = Gateway(_catalog(), learn=True)
    for i in range(5):
        gw.find_tools(QUERY, session=f"lib{i}")
        assert gw.call("send_email", {}, session=f"lib{i}").ok
    gw.call("no_such_tool", {}, session="lib0")  # an unknown name is not recorded
    assert _ranked(gw)[0] == "send_email"
    assert all("no_such_tool" not in e["c"] for e in gw.learner._events.values())


def test_events_through_a_provider_adapter() -> None:
    gw = Gateway(_catalog(), learn=True)
    for i in range(5):
        chat = ChatCompletionsAdapter(Session(gw, session_id=f"o{i}", threshold=1))
        find = {"tool_calls": [{"id": "f", "function": {"name": "find_tools", "arguments": json.dumps({"query": QUERY})}}]}
        chat.tool_messages(find)
        call = {"tool_calls": [{"id": "c", "function": {"name": "send_email", "arguments": "{}"}}]}
        assert chat.tool_messages(call)[0]["content"] == "send_email done"
    assert _ranked(gw)[0] == "send_email"


@pytest.mark.asyncio
async def test_events_through_the_mcp_server() -> None:
    """Five connections of one caller (here the OS user of stdio) vote once: no agreement;
    five callers do agree (issue 23: a vote is a principal, not a connection)."""
    gw = Gateway(_catalog(), learn=True)
    server = GatewayServer(gw)

    async def conversation() -> None:
        async with Client(server.lowlevel, mode="legacy") as client:
            found = await client.call_tool("find_tools", {"query": QUERY})
            assert not found.is_error
            called = await client.call_tool("call_tool", {"name": "send_email", "arguments": {}})
            assert not called.is_error

    for _ in range(5):
        await conversation()
    assert _ranked(gw)[0] == "post_message"  # one caller, however many connections
    for i in range(5):
        server.router.local = Principal(f"user-{i}", "user")
        await conversation()
    assert _ranked(gw)[0] == "send_email"
    async with Client(server.lowlevel, mode="legacy") as client:
        found = await client.call_tool("find_tools", {"query": QUERY})
        top = found.structured_content["tool_references"][0]
        assert top["tool_name"] == "send_email" and top["usage_boost"] > 0


@pytest.mark.asyncio
async def test_stateless_clients_that_name_their_conversation_are_learned_from() -> None:
    """A 2026-07-28 (stateless) client may name its conversation in
    ``_meta["toolscout/session"]``: learning credits calls to the search of the same
    conversation, but five names from one caller are still one vote (issue 23); the same
    from five callers reach agreement."""
    gw = Gateway(_catalog(), learn=True)
    server = GatewayServer(gw)
    async with Client(server.lowlevel, mode="auto") as client:
        assert client.protocol_version == "2026-07-28"
        for _ in range(5):  # unnamed: all "stateless"
            await client.call_tool("find_tools", {"query": QUERY})
            await client.call_tool("call_tool", {"name": "send_email", "arguments": {}})
        assert _ranked(gw)[0] == "post_message"
        for i in range(5):  # named by one caller: one vote
            meta = {"toolscout/session": f"conversation-{i}"}
            found = await client.call_tool("find_tools", {"query": QUERY}, meta=meta)  # type: ignore[arg-type]
            assert not found.is_error
            called = await client.call_tool("call_tool", {"name": "send_email", "arguments": {}}, meta=meta)  # type: ignore[arg-type]
            assert not called.is_error
        bad = await client.call_tool("find_tools", {"query": QUERY}, meta={"toolscout/session": "x" * 500})  # type: ignore[arg-type]
        assert not bad.is_error  # an unusable name is ignored, not an error
        assert _ranked(gw)[0] == "post_message"
        assert len(server.router.tagged) == 5
        for i in range(5):  # five callers, each naming a conversation
            server.router.local = Principal(f"user-{i}", "user")
            meta = {"toolscout/session": "conversation"}
            await client.call_tool("find_tools", {"query": QUERY}, meta=meta)  # type: ignore[arg-type]
            await client.call_tool("call_tool", {"name": "send_email", "arguments": {}}, meta=meta)  # type: ignore[arg-type]
    assert _ranked(gw)[0] == "send_email"
    assert len(server.router.tagged) == 10  # one caller never continues another's conversation


def test_learner_keeps_no_arguments_and_decays() -> None:
    learner = UsageLearner(half_life_days=1.0)
    old = 1_000_000.0  # long ago: its evidence has decayed to nothing
    for i in range(5):
        learner.searched(f"s{i}", QUERY, ["send_email"], now=old)
        learner.called(f"s{i}", "send_email", True, now=old)
    gw = Gateway(_catalog(), learn=learner)
    send = next(r for r in gw.find_tools(QUERY).tool_references if r.tool_name == "send_email")
    assert send.usage_boost < 1e-3


runner = CliRunner()


def _log(tmp_path: Path, lines: list[dict]) -> Path:
    log = tmp_path / "log.jsonl"
    log.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return log


def test_eval_learn_keeps_the_output_and_run_file_shape(tmp_path: Path) -> None:
    plain_run, learn_run = tmp_path / "plain.jsonl", tmp_path / "learn.jsonl"
    log = _log(tmp_path, [{"query": "zebra quantum", "called": ["translate_text"], "session": f"s{i}"} for i in range(3)])
    plain = runner.invoke(app, ["eval", str(FIXTURE), "--type", "keyword", "--json", "--run-out", str(plain_run)])
    learned = runner.invoke(
        app, ["eval", str(FIXTURE), "--learn", str(log), "--type", "keyword", "--json", "--run-out", str(learn_run)]
    )
    assert plain.exit_code == 0 and learned.exit_code == 0, learned.output
    a, b = json.loads(plain.stdout), json.loads(learned.stdout)
    assert set(a) == set(b) and set(a["splits"]) == set(b["splits"])
    assert a["queries"] == b["queries"] and a["tools"] == b["tools"]
    plain_lines = [json.loads(x) for x in plain_run.read_text().splitlines()]
    learn_lines = [json.loads(x) for x in learn_run.read_text().splitlines()]
    assert [set(x) for x in plain_lines] == [set(x) for x in learn_lines] == [{"id", "ranked"}] * 4
    # the logged query's tool is now found for it (it matched nothing before)
    assert plain_lines[3]["ranked"] == [] and learn_lines[3]["ranked"][0] == "translate_text"
    assert b["nDCG@10"] > a["nDCG@10"]
    table = runner.invoke(app, ["eval", str(FIXTURE), "--learn", str(log)])
    assert table.exit_code == 0 and "nDCG@10" in table.stdout


def test_eval_learn_rejects_a_malformed_log(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"query": "x", "called": "not a list"}\n')
    result = runner.invoke(app, ["eval", str(FIXTURE), "--learn", str(bad)])
    assert result.exit_code == 2
    assert "bad.jsonl:1" in result.output and "called" in result.output


def test_replicas_share_usage_through_postgresql(pg_dsn: str) -> None:
    pytest.importorskip("psycopg", reason="toolscout[postgres] is not installed")
    from toolscout.storage import PostgresStore

    with PostgresStore(pg_dsn) as store:
        first = Gateway(_catalog(), usage_store=store)  # a store the user owns: on by default
        assert first.learner is not None
        for i in range(5):
            _use(first, f"r{i}")
        first.learner.flush()  # written in the background; flushed here so the test does not race it
        second = Gateway(_catalog(), usage_store=store)  # another replica, started later
        assert _ranked(second)[0] == "send_email"


def test_hybrid_ranking_uses_the_prior_too() -> None:
    from _fake_embed import FakeEmbedder

    gw = Gateway(_catalog(), learn=True, embeddings=FakeEmbedder())
    assert gw.learner is not None
    request = {"query": QUERY, "search_type": "hybrid"}

    def ranked() -> list[tuple[str, float]]:
        return [(h.tool.name, h.usage) for h in gw.find(request, autocut=False).hits]

    before = ranked()
    for i in range(5):  # the prior enters through hybrid's keyword side
        gw.learner.searched(f"h{i}", QUERY, ["post_message", "send_email"])
        gw.learner.called(f"h{i}", "send_email", True)
    after = ranked()
    position = [name for name, _ in after].index("send_email")
    assert position < [name for name, _ in before].index("send_email")
    assert after[position][1] > 0


@pytest.mark.parametrize(("search_type", "query"), [("semantic", QUERY), ("regex", "message")])
def test_semantic_and_regex_ranking_use_the_prior_too(search_type: str, query: str) -> None:
    from _fake_embed import FakeEmbedder

    gw = Gateway(_catalog(), learn=True, embeddings=FakeEmbedder())
    assert gw.learner is not None
    request = {"query": query, "search_type": search_type}

    def ranked() -> dict[str, tuple[int, float, float]]:
        hits = gw.find(request, autocut=False).hits
        return {h.tool.name: (i, h.score, h.usage) for i, h in enumerate(hits)}

    before = ranked()
    assert before["send_email"][0] > 0 and before["send_email"][2] == 0  # post_message leads
    for i in range(5):
        gw.learner.searched(f"{search_type}{i}", query, ["post_message", "send_email"])
        gw.learner.called(f"{search_type}{i}", "send_email", True)
    after = ranked()
    position, score, usage = after["send_email"]
    assert usage > 0 and score > before["send_email"][1] and position <= before["send_email"][0]
    if search_type == "semantic":
        assert position < before["send_email"][0]
    else:  # a pattern is a filter: usage reorders what it matched and never adds a tool
        assert set(after) == set(before)


def test_a_slow_rebuild_runs_off_the_search_path_and_then_takes_over(monkeypatch: pytest.MonkeyPatch) -> None:
    gw = Gateway(_catalog(), learn=True)
    for i in range(5):
        _use(gw, f"s{i}")
    learner = gw.learner
    assert learner is not None
    before = gw.find_tools(QUERY).tool_references[0]  # built inline: the log is small
    assert before.tool_name == "send_email"
    learner.background_from = 0.0  # as if the last rebuild had been slow
    learner.inline_below = 0  # ...and the log were not small
    learner._build_cost, learner._built_at = 1.0, time.time()  # it just ran: searches keep its prior
    release, building = threading.Event(), threading.Event()
    build = learner._build

    def slow_build(*args: object) -> object:
        building.set()
        assert release.wait(30)
        return build(*args)  # type: ignore[arg-type]

    # reach-in: the rebuild is held mid-way to see searches go on without it; no public call can pause it
    monkeypatch.setattr(learner, "_build", slow_build)
    for i in range(5, 10):
        _use(gw, f"s{i}", query="post a chat message to the team", call="post_message")
    learner._built_at = 0.0  # past the throttle window: the next search sees all ten sessions
    stale = gw.find_tools(QUERY).tool_references[0]
    assert building.wait(30)  # that search noticed the new events and started the rebuild...
    assert (stale.tool_name, stale.usage_boost) == ("send_email", before.usage_boost)  # ...and did not wait
    old = {r.tool_name: r.usage_boost for r in gw.find_tools("post a chat message to the team").tool_references}
    release.set()
    learner._worker.join(30)  # type: ignore[union-attr]
    learner._built_at = 0.0  # past the throttle window
    fresh = {r.tool_name: r.usage_boost for r in gw.find_tools("post a chat message to the team").tool_references}
    assert fresh["post_message"] > max(old.get("post_message", 0.0), 0.0)  # the background build is in use


def test_a_voter_counts_once_however_many_sessions_it_names() -> None:
    """Issue 23: sessions are the caller's to name; the principal (``voter``) is not. Ten
    sessions of one voter, in a burst, move the ranking no more than one session does."""
    burst = UsageLearner()
    for i in range(10):
        burst.searched(f"s{i}", QUERY, ["post_message", "send_email"], voter="mallory")
        burst.called(f"s{i}", "send_email", True, voter="mallory")
    one = UsageLearner()
    one.searched("s0", QUERY, ["post_message", "send_email"])
    one.called("s0", "send_email", True)
    boost = {}
    for name, learner in (("burst", burst), ("one", one)):
        gw = Gateway(_catalog(), learn=learner)
        boost[name] = next(r.usage_boost for r in gw.find_tools(QUERY).tool_references if r.tool_name == "send_email")
        assert _ranked(gw)[0] == "post_message"
    assert boost["burst"] == pytest.approx(boost["one"])
    crowd = UsageLearner()
    for i in range(3):
        crowd.searched(f"s{i}", QUERY, ["post_message", "send_email"], voter=f"user-{i}")
        crowd.called(f"s{i}", "send_email", True, voter=f"user-{i}")
    assert _ranked(Gateway(_catalog(), learn=crowd))[0] == "send_email"


def test_events_written_in_the_background_are_all_readable_after_close(tmp_path: Path) -> None:
    """A store write per call is off the request path (search/usage_writer.py): what a
    learner recorded is all in the store once it is closed, in its latest state, and an
    event recorded after close is written at once."""
    from toolscout.storage import open_store

    store = open_store(tmp_path / "usage.db")
    learner = UsageLearner(store)
    keys = []
    for i in range(300):  # more than one batch, with updates of queued events
        keys.append(learner.searched(f"s{i}", "send an email to the team", ["send_email", "post_message"]))
        learner.called(f"s{i}", "send_email", i % 2 == 0)
    learner.close()
    stored = {k: json.loads(store.get(NS, k).text) for k in store.keys(NS)}  # type: ignore[union-attr]
    assert set(keys) <= set(stored) and len(stored) == 300
    assert all(stored[k]["c"] == {"send_email": i % 2 == 0} for i, k in enumerate(keys))  # the latest text of each
    late = learner.searched("late", "post a chat message", ["post_message"])
    assert late is not None and store.get(NS, late) is not None
    reopened = UsageLearner(store)
    assert len(reopened) == 301
