"""Name normalising in bulk (what the resolver builds its tables with) and the resolver's
table of other spellings."""

from __future__ import annotations

import pytest

from toolscout.model import Tool
from toolscout.search.resolve import NameResolver
from toolscout.search.suggest import normalize_name, normalize_names

ODD = [
    ["A-b.C", "x y", "a::b--c", "A  B", "c-.d", "e\x1ff"],
    [" lead", "b"],
    ["a", "trail`"],
    ["a", '"q'],
    ["a\x00b", "c"],
    ["a\x01b"],
    ["Ünï", "ΑΣ", "b"],
    ["x\n"],
    ["send_email", "Send-Email", "send.email"],
    [],
]


@pytest.mark.parametrize("names", ODD)
def test_normalize_names_equals_one_name_at_a_time(names: list[str]) -> None:
    assert normalize_names(names) == [normalize_name(n) for n in names]


def test_resolver_keeps_other_spellings_and_their_collisions() -> None:
    tools = [Tool(n) for n in ["Send-Email", "send.email", "send_email", "Get-X", "a_b", "A-B", "A.B"]]
    resolver = NameResolver(tools)
    assert resolver.docs_named("send email") == [0, 1, 2]
    assert resolver.docs_named("`A b`") == [4, 5, 6]
    assert resolver.docs_named("get x") == [3]
    assert resolver.resolve("get.x") == 3 and resolver.resolve("SEND EMAIL") is None  # three tools: no guess
    assert resolver.resolve("send.email") == 1
