"""Learning that cannot flip a ranking on one vote (issue 32): one principal's evidence is
bounded by the score margin it would have to overturn; agreement between principals is not."""

from __future__ import annotations

from _catalogs import catalog_of
from toolscout import Catalog
from toolscout.gateway import Gateway
from toolscout.session import Session

QUERY = "send a message"


def _catalog() -> Catalog:
    return catalog_of(
        (
            ("send_message", "Send a message to a chat channel."),
            ("send_sms_message", "Send an SMS text message to a phone number."),
            ("send_message_template", "Send a message built from a stored template, with placeholders filled in."),
            ("read_inbox", "Read the newest messages of the inbox."),
        ),
        fillers=8,
    )


def _refs(gw: Gateway) -> list[tuple[str, float, float]]:
    return [(r.tool_name, r.relevance_score, r.usage_boost) for r in gw.find_tools(QUERY).tool_references]


def _vote(gw: Gateway, session_id: str, tool: str) -> None:
    session = Session(gw, session_id=session_id, threshold=1)
    assert session.handle("find_tools", {"query": QUERY}).ok
    assert session.handle(tool, {}).ok


def test_one_vote_closes_a_gap_but_never_flips_the_ranking() -> None:
    gw = Gateway(_catalog(), learn=True)
    before = [name for name, _, _ in _refs(gw)]
    third = before[2]
    assert before.index(third) == 2
    for _ in range(10):  # one session, however often it repeats: one vote
        _vote(gw, "one-session", third)
    after = _refs(gw)
    names = [name for name, _, _ in after]
    assert names[:3] == before[:3]  # not #3 -> #1, not even #3 -> #2
    boost = dict((name, b) for name, _, b in after)[third]
    assert boost > 0  # the vote still counts: it closed part of the gap, visibly
    gap_before = {n: s for n, s, _ in _refs(Gateway(_catalog()))}
    assert gap_before[before[1]] - gap_before[third] > dict((n, s) for n, s, _ in after)[before[1]] - dict((n, s) for n, s, _ in after)[third]


def test_principals_that_agree_can_reorder() -> None:
    gw = Gateway(_catalog(), learn=True)
    before = [name for name, _, _ in _refs(gw)]
    third = before[2]
    for i in range(6):  # six principals choose the same tool: agreement, no margin bound
        _vote(gw, f"user-{i}", third)
    names = [name for name, _, _ in _refs(gw)]
    assert names.index(third) < 2
