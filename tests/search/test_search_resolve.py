"""The name resolver's exact-name rule and ``select:`` parsing: the one place every surface
(index, hybrid, gateway) asks."""

from __future__ import annotations

import numpy as np
import pytest

from toolscout.model import Tool
from toolscout.search.resolve import (
    NameResolver,
    exact_match,
    is_clear_winner,
    is_exact_name,
    parse_select,
)

TOOLS = [Tool("send_email", "Send."), Tool("read_email", "Read."), Tool("Send-Email", "Another spelling.")]


@pytest.mark.parametrize(
    ("query", "names"),
    [
        ("select:a,b", ("a", "b")),
        ("SELECT: `a` , 'b',\"c\"", ("a", "b", "c")),
        ("select:a,a,,b", ("a", "b")),
        ("select:", ()),
        ("  select:x  ", ("x",)),
        ("selected: a", None),
        ("find a, b", None),
    ],
)
def test_parse_select(query: str, names: tuple[str, ...] | None) -> None:
    assert parse_select(query) == names


@pytest.mark.parametrize("query", ["send_email", "`send_email`", '"send_email"', "'send_email'", " SEND-EMAIL ", "send.email", "send email"])
def test_exact_name_in_any_spelling(query: str) -> None:
    assert is_exact_name(query, "send_email")


@pytest.mark.parametrize("query", ["send_emails", "send", "email send", "please send_email"])
def test_not_an_exact_name(query: str) -> None:
    assert not is_exact_name(query, "send_email")


def test_the_resolver_prefers_the_spelling_asked_for_and_honours_the_allowed_docs() -> None:
    names = NameResolver(TOOLS)
    assert names.exact("send_email") == 0
    assert names.exact("`Send-Email`") == 2  # both normalise alike: the one spelled so
    assert names.exact("SEND EMAIL") == 0  # neither spelled so: the first
    assert names.exact("send_email", np.array([False, True, True])) == 2
    assert names.exact("send_email", np.array([False, True, False])) is None
    assert names.exact("nope_tool") is None
    found = exact_match("`read_email`", names)
    assert found is not None and found.name == "read_email"
    assert exact_match("unknown", names) is None


def test_a_clear_winner_is_alone_named_exactly_or_ahead_by_the_margin() -> None:
    assert not is_clear_winner("anything", [], 1.5)
    assert is_clear_winner("anything", [("a", 0.1)], 1.5)
    assert is_clear_winner("a", [("a", 0.5), ("b", 0.5)], 1.5)  # named exactly
    assert is_clear_winner("`A`", [("a", 0.5), ("b", 0.5)], 1.5)
    assert is_clear_winner("x", [("a", 0.9), ("b", 0.6)], 1.5)
    assert not is_clear_winner("x", [("a", 0.8), ("b", 0.6)], 1.5)
