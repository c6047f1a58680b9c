"""Declaration files: shapes, languages, and line-accurate errors for malformed entries."""

from __future__ import annotations

from pathlib import Path

import pytest

from _paths import FIXTURES
from toolscout.catalog import Catalog
from toolscout.errors import DeclarationError
from toolscout.model import DeferPolicy
from toolscout.sources.declarations import load_declarations

FIX = FIXTURES


def test_yaml_bilingual_entry_keeps_every_language() -> None:
    tools, skipped = load_declarations(FIX / "tools_bilingual.yaml")
    assert skipped == []
    web = {t.name: t for t in tools}["web_search"]
    assert web.description == "Search the web and return results"
    assert web.descriptions["zh-CN"] == "搜索网页并返回结果"
    assert web.display == {"en": "Web Search", "zh-CN": "网页搜索"}
    assert web.category == "information"
    assert web.tags == ("web", "search", "internet")
    assert web.platforms == ()  # "all"
    assert web.input_schema["required"] == ["query"]
    assert web.source == "file"
    assert web.origin == f"{FIX / 'tools_bilingual.yaml'}:2"


def test_yaml_lang_option_picks_the_description() -> None:
    tools, _ = load_declarations(FIX / "tools_bilingual.yaml", lang="zh-CN")
    assert tools[0].description == "搜索网页并返回结果"


def test_yaml_toolscout_fields() -> None:
    tools = {t.name: t for t in load_declarations(FIX / "tools_bilingual.yaml")[0]}
    write = tools["write_file"]
    assert write.permission == "write"
    assert write.defer is DeferPolicy.NEVER
    assert write.platforms == ("linux", "macos")
    assert write.annotations is not None and write.annotations.destructive is True
    assert write.annotations.title == "Write file"
    assert tools["internal_gc"].searchable is False
    assert tools["web_search"].input_schema["type"] == "object"


def test_json_list_of_entries_with_language_fallback() -> None:
    tools, _ = load_declarations(FIX / "tools_list.json", lang="fr")
    issue = tools[0]
    assert issue.name == "create_issue"
    assert issue.description == "Create an issue in a tracker"  # fr missing -> en
    assert issue.descriptions["ja"] == "課題を作成する"
    assert tools[1].input_schema == {"type": "object", "properties": {}}
    assert tools[1].origin.endswith("tools_list.json:12")


def test_jsonl_data_shape() -> None:
    tools, _ = load_declarations(FIX / "tools_data.jsonl")
    weather, stock = tools
    assert weather.category == "weather"
    assert weather.meta == {"orig_name": "getWeather"}
    assert weather.origin.endswith("tools_data.jsonl:1")
    assert stock.input_schema == {"type": "object", "properties": {}}


@pytest.mark.parametrize(
    ("fixture", "line", "field", "words"),
    [
        ("bad_missing_name.yaml", 3, "name", "no name"),
        ("bad_schema.yaml", 5, "input_schema", "integr"),
        ("bad_duplicate.yaml", 5, "name", "duplicate tool name 'send_mail'"),
        ("bad_types.yaml", 5, "tags", "list of strings"),
        ("bad_schema.json", 5, "input_schema", "object"),
        ("bad_lines.jsonl", 2, "name", "no name"),
        ("bad_syntax.yaml", 5, None, "invalid YAML"),
    ],
)
def test_malformed_file_names_file_line_and_field(fixture: str, line: int, field: str | None, words: str) -> None:
    with pytest.raises(DeclarationError) as info:
        load_declarations(FIX / fixture)
    err = info.value
    assert err.file == str(FIX / fixture)
    assert err.field == field
    assert words in err.message
    assert f"{fixture}:{err.line}" in err.message
    assert err.line == line


def test_wrong_types_each_rejected_with_its_field() -> None:
    _, skipped = load_declarations(FIX / "bad_types.yaml", skip_invalid=True)
    assert [(e.field, e.line) for e in skipped] == [("tags", 5), ("available", 7), ("permission", 9)]


def test_default_loads_nothing_from_a_bad_file() -> None:
    cat = Catalog()
    with pytest.raises(DeclarationError):
        cat.load(FIX / "bad_schema.yaml")
    assert len(cat) == 0


def test_skip_invalid_loads_the_rest() -> None:
    tools, skipped = load_declarations(FIX / "bad_schema.yaml", skip_invalid=True)
    assert [t.name for t in tools] == ["good_one", "third_one"]
    assert len(skipped) == 1 and skipped[0].field == "input_schema"


def test_skip_invalid_jsonl_skips_bad_lines() -> None:
    tools, skipped = load_declarations(FIX / "bad_lines.jsonl", skip_invalid=True)
    assert [t.name for t in tools] == ["one", "five"]
    assert [(e.line, e.field) for e in skipped] == [(2, "name"), (3, None), (4, "input_schema")]
    assert all(e.file == str(FIX / "bad_lines.jsonl") for e in skipped)


def test_duplicate_in_list_shape(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    path.write_text('[\n {"name": "a"},\n {"name": "b"},\n {"name": "a"}\n]\n')
    with pytest.raises(DeclarationError) as info:
        load_declarations(path)
    assert info.value.line == 4 and "first declared on line 2" in info.value.message
    tools, skipped = load_declarations(path, skip_invalid=True)
    assert [t.name for t in tools] == ["a", "b"] and skipped[0].line == 4


def test_unsupported_extension_and_missing_file(tmp_path: Path) -> None:
    (tmp_path / "tools.toml").write_text("x = 1")
    with pytest.raises(DeclarationError, match="unsupported"):
        load_declarations(tmp_path / "tools.toml")
    with pytest.raises(DeclarationError, match="cannot read"):
        load_declarations(tmp_path / "absent.yaml")


def test_unknown_defer_and_bad_annotations(tmp_path: Path) -> None:
    path = tmp_path / "t.yaml"
    path.write_text("a:\n  defer: sometimes\n")
    with pytest.raises(DeclarationError) as info:
        load_declarations(path)
    assert info.value.field == "defer" and info.value.line == 2
    path.write_text("a:\n  annotations: {readOnlyHint: maybe}\n")
    with pytest.raises(DeclarationError) as info:
        load_declarations(path)
    assert info.value.field == "annotations"


def test_draft4_booleans_and_vendor_keywords_are_accepted(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    schema = '{"type": "object", "properties": {"n": {"type": "number", "minimum": 0, "exclusiveMinimum": true, "x-original-type": "float"}}}'
    path.write_text('{"name": "n", "input_schema": ' + schema + "}\n")
    tools, _ = load_declarations(path)
    assert tools[0].input_schema["properties"]["n"]["exclusiveMinimum"] is True


def test_catalog_load_with_prefix_namespaces_names() -> None:
    cat = Catalog()
    cat.load(FIX / "tools_data.jsonl")
    cat.load(FIX / "tools_data.jsonl", prefix="mirror")
    tool = cat.get("mirror_weather_get")
    assert tool is not None and tool.call_name == "weather_get"


def test_absurdly_deep_nesting_is_a_declaration_error(tmp_path: Path) -> None:
    deep = '{"type": "object", "properties": {"x": ' * 5000 + "{}" + "}}" * 5000
    path = tmp_path / "deep.jsonl"
    path.write_text('{"name": "deep", "input_schema": ' + deep + '}\n{"name": "fine"}\n')
    with pytest.raises(DeclarationError) as info:
        load_declarations(path)
    assert info.value.line == 1
    tools, skipped = load_declarations(path, skip_invalid=True)
    assert [t.name for t in tools] == ["fine"] and len(skipped) == 1
    path = tmp_path / "deep.json"
    path.write_text('{"deep": {"input_schema": ' + deep + "}}\n")
    with pytest.raises(DeclarationError, match="deep"):
        load_declarations(path)


def test_json_list_with_scalar_entries_keeps_line_numbers(tmp_path: Path) -> None:
    path = tmp_path / "mixed.json"
    path.write_text('[\n  "oops",\n  42,\n  {"name": "ok"},\n  {\n    "name": "bad",\n    "tags": "x"\n  }\n]\n')
    tools, skipped = load_declarations(path, skip_invalid=True)
    assert [t.name for t in tools] == ["ok"]
    assert [(e.line, e.field) for e in skipped] == [(2, None), (3, None), (7, "tags")]


def test_json_positions_match_the_serialised_lines() -> None:
    import json

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from toolscout.sources._positions import (
        json_positions,  # reach-in: the position scanner fuzzed on its own
    )

    names = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=8)
    values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                          lambda inner: st.lists(inner, max_size=3) | st.dictionaries(names, inner, max_size=3),
                          max_leaves=6)
    entries = st.dictionaries(names, st.dictionaries(names, values, max_size=3), max_size=5)

    @settings(max_examples=60, deadline=None)
    @given(entries)
    def check(data: dict) -> None:
        text = json.dumps(data, indent=2, ensure_ascii=False)
        pos = json_positions(text)
        assert pos.keys == list(data)
        lines = text.split("\n")
        for key, line, fields in zip(pos.keys, pos.entries, pos.fields, strict=True):
            assert lines[line - 1].startswith("  " + json.dumps(key, ensure_ascii=False) + ":")
            assert set(fields) == set(data[key])

    check()


def test_jsonl_lines_split_on_newline_only(tmp_path: Path) -> None:
    path = tmp_path / "u.jsonl"
    path.write_text('{"name": "a", "description": "x\u2028y\x85z"}\n{"name": "b"}\n', encoding="utf-8")
    tools, _ = load_declarations(path)
    assert [t.name for t in tools] == ["a", "b"] and tools[1].origin.endswith(":2")
