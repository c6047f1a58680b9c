"""A hit's score taken apart (``ScoredTool.parts``): in every mode the named parts add up to
the score the model and the console are shown, learned usage and every other signal
included (issue 24.2: the console's parts summed to 3.02 under a score of 12.784)."""

from __future__ import annotations

import pytest

from _catalogs import catalog_of
from _fake_embed import FakeEmbedder
from toolscout.gateway import Gateway
from toolscout.search.hybrid import enable_hybrid
from toolscout.session import Session

QUERY = "send a message"
KNOWN = {"keyword", "semantic", "hybrid", "regex", "usage", "name", "rank", "exact name", "select"}


def _gateway() -> Gateway:
    cat = catalog_of(
        (
            ("post_message", "Post a chat message to a channel."),
            ("send_email", "Send an email message to a recipient."),
            ("twilio_send_sms", "Send a text message to a phone number."),
            ("create_branch", "Create a git branch in a repository."),
            ("notify_team", "Notify the team."),
        ),
        fillers=10,
    )
    gw = Gateway(cat, learn=True)
    enable_hybrid(gw.index, FakeEmbedder(dim=256), query_encoder=None)
    for i in range(5):  # five sessions call send_email for the query: usage lifts it
        session = Session(gw, session_id=f"s{i}", threshold=1)
        assert session.handle("find_tools", {"query": QUERY, "search_type": "keyword", "limit": 10}).ok
        assert session.handle("send_email", {}).ok
    return gw


GATEWAY = _gateway()


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
@pytest.mark.parametrize("query", [QUERY, "let my team know the build is broken", "send_emial", "notify_team"])
def test_parts_add_up_to_the_score_in_every_mode_with_usage_learned(mode: str, query: str) -> None:
    hits = GATEWAY.index.search(query, limit=10, mode=mode, autocut=False).hits
    assert hits or mode == "semantic"  # the test embedder knows no typos
    for hit in hits:
        names = [name for name, _ in hit.parts]
        assert set(names) <= KNOWN and len(names) == len(set(names)), hit.parts
        assert sum(v for _, v in hit.parts) == pytest.approx(hit.score, rel=1e-9, abs=1e-12), (hit.tool.name, hit.parts)


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_the_usage_boost_is_a_named_part(mode: str) -> None:
    hits = GATEWAY.index.search(QUERY, limit=10, mode=mode, autocut=False).hits
    lifted = next(h for h in hits if h.tool.name == "send_email")
    assert lifted.usage > 0 and dict(lifted.parts)["usage"] > 0
    shown = next(h for h in hits if h.tool.name == "post_message")  # shown five times, never called: sunk
    assert shown.usage < 0
    if mode != "hybrid":  # (hybrid: the sink took it below the keyword list's mean, where it adds nothing)
        assert dict(shown.parts)["usage"] < 0


def test_hybrid_parts_name_each_backend() -> None:
    hits = GATEWAY.index.search("post a chat message", limit=5, mode="hybrid", autocut=False).hits
    top = dict(hits[0].parts)
    assert hits[0].tool.name == "post_message" and top["keyword"] > 0 and top["semantic"] > 0
    typo = GATEWAY.index.search("run send_emial please", limit=5, mode="hybrid", autocut=False).hits
    assert dict(next(h for h in typo if h.tool.name == "send_email").parts).get("name", 0) > 0
