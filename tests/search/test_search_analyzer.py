"""The analyzer: identifiers, prose, CJK and hostile characters become index terms."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from toolscout.search.analyzer import analyze, split_identifier


def test_identifiers_split_on_case_digits_and_separators() -> None:
    assert split_identifier("HTTPServer") == ["http", "server"]
    assert split_identifier("getV2Data") == ["get", "v", "2", "data"]
    assert analyze("send_email") == ["send", "email"]
    assert analyze("kebab-case.dotted/slashed") == ["kebab", "case", "dot", "slash"]


def test_camel_case_keeps_joined_compound() -> None:
    terms = analyze("getWeather")
    assert terms[:2] == ["get", "weather"]
    assert "getweath" in terms  # the stemmed compound, so "getweather" in a query matches


def test_stop_words_dropped_and_words_stemmed() -> None:
    assert analyze("I want to send the emails to my boss") == ["send", "email", "boss"]
    assert analyze("searching searches") == ["search", "search"]


def test_cjk_runs_give_characters_and_bigrams() -> None:
    terms = analyze("搜索网页")
    assert {"搜", "索", "网", "页"} <= set(terms)
    assert {"搜索", "索网", "网页"} <= set(terms)
    assert "検索" in analyze("ウェブを検索する")


def test_mixed_scripts_are_each_handled() -> None:
    terms = analyze("web搜索 tool")
    assert "web" in terms and "搜索" in terms and "tool" in terms


def test_control_characters_and_emoji_do_not_crash_or_join_words() -> None:
    assert analyze("hello\x00world\u200b🎉") == ["hello", "world"]
    assert analyze("🎉🔥") == []
    assert analyze("") == []


def test_non_ascii_letters_stay_in_their_word() -> None:
    assert analyze("Café") == ["café"]


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_gives_clean_terms(text: str) -> None:
    terms = analyze(text)
    assert all(isinstance(t, str) and t and not any(c.isspace() for c in t) for t in terms)
