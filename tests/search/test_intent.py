"""Request understanding: a message's content, quoted values and everyday verbs (search/intent.py)."""

from __future__ import annotations

import pytest

from toolscout.search.hybrid import rewrite
from toolscout.search.intent import matching_text, message_action, strip_leading, verb_variant


@pytest.mark.parametrize(
    ("request_text", "action"),
    [
        ("let my team know the build is broken", "send a message to my team"),
        ("Tell Bob that the invoice is late", "send a message to Bob"),
        ("notify the on-call engineer: disk is full on db1", "send a message to the on-call engineer"),
        ("email my boss about the delay in shipping", "send an email to my boss"),
        ("remind the team to submit timesheets", "send a reminder to the team"),
        ("message @alice saying the PR is ready", "send a message to @alice"),
        ("text my wife I will be late tonight", "send a text message to my wife"),
        ('post "deploy done, all green" to #releases', "post to #releases"),
    ],
)
def test_the_message_a_request_carries_is_not_what_it_asks_for(request_text: str, action: str) -> None:
    assert message_action(request_text) == action


@pytest.mark.parametrize(
    "request_text",
    [
        "tell me the weather in Paris",  # the assistant is asked, no message is sent
        "let me know the weather",
        "notify the team with a message",  # how, not what: there is no message content
        "notify the team when the build fails",
        "tell the difference between two images",
        "message queue for kafka topics",
        "text classification of tweets",
        '"What was the total revenue of our product line?"',  # all quote: the request itself
        "send a message to my team",  # already says what it does
    ],
)
def test_requests_without_a_carried_message_are_left_alone(request_text: str) -> None:
    assert message_action(request_text) is None


def test_everyday_verbs_map_to_the_verbs_tool_names_use() -> None:
    assert verb_variant("open a jira ticket") == "create a jira ticket"
    assert verb_variant("open the file report.txt") == "get the file report.txt"  # open the ... reads
    assert verb_variant("remove the user bob") == "delete the user bob"
    assert verb_variant("change the title of issue 5") == "update the title of issue 5"
    assert verb_variant("list files") is None and verb_variant("opener settings") is None


def test_keyword_text_drops_the_message_and_adds_the_tool_verb() -> None:
    assert matching_text("Can you let my team know the build is broken?") == "send a message to my team"
    assert matching_text("open a jira ticket") == "open a jira ticket create"
    assert matching_text("weather in Paris") == "weather in Paris"
    assert strip_leading("please, can you help me find flights?") == "find flights"


def test_rewrite_exposes_the_action_and_verb_variants() -> None:
    kinds = {v.kind: v.text for v in rewrite("please let everyone know the meeting moved to 3pm")}
    assert kinds["action"] == "send a message to everyone"
    assert {v.kind: v.text for v in rewrite("open a ticket")}["verb"] == "create a ticket"
