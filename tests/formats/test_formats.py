"""Every format rendered (golden dicts), strict mode, Gemini's subset, the system prompt."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from toolscout.errors import InvalidRequest
from toolscout.formats import (
    FORMATS,
    gemini_schema,
    openai_strict,
    openai_strict_reason,
    register,
    render,
    render_many,
    strict_refusal,
    system_prompt,
)
from toolscout.model import Annotations, Tool

SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "City name"}, "days": {"type": "integer"}},
    "required": ["city"],
}
STRICT_SCHEMA = {
    "type": "object",
    "properties": {"city": {"type": "string"}},
    "required": ["city"],
    "additionalProperties": False,
}


def weather(schema: dict[str, Any] = SCHEMA) -> Tool:
    return Tool(
        "get_weather",
        "Get the forecast.",
        schema,
        output_schema={"type": "object", "properties": {"temp": {"type": "number"}}},
        annotations=Annotations(title="Weather", read_only=True),
    )


def test_openai_chat_golden() -> None:
    assert render(weather(), "openai") == {
        "type": "function",
        "function": {"name": "get_weather", "description": "Get the forecast.", "parameters": SCHEMA},
    }


def test_openai_chat_strict_only_when_compatible() -> None:
    out = render(weather(STRICT_SCHEMA), "openai")
    assert out["function"]["strict"] is True
    assert out["function"]["parameters"] == STRICT_SCHEMA


def test_openai_responses_golden_always_states_strict() -> None:
    assert render(weather(), "openai-responses") == {
        "type": "function",
        "name": "get_weather",
        "description": "Get the forecast.",
        "parameters": SCHEMA,
        "strict": False,
    }
    assert render(weather(STRICT_SCHEMA), "openai-responses")["strict"] is True


def test_anthropic_golden() -> None:
    assert render(weather(), "anthropic") == {
        "name": "get_weather",
        "description": "Get the forecast.",
        "input_schema": SCHEMA,
    }


def test_mcp_golden() -> None:
    assert render(weather(), "mcp") == {
        "name": "get_weather",
        "title": "Weather",
        "description": "Get the forecast.",
        "inputSchema": SCHEMA,
        "outputSchema": {"type": "object", "properties": {"temp": {"type": "number"}}},
        "annotations": {"title": "Weather", "readOnlyHint": True},
    }


def test_generic_golden() -> None:
    assert render(weather(), "generic") == {
        "name": "get_weather",
        "description": "Get the forecast.",
        "inputSchema": SCHEMA,
    }


def test_gemini_golden() -> None:
    assert render(weather(), "gemini") == {
        "name": "get_weather",
        "description": "Get the forecast.",
        "parameters": {
            "type": "OBJECT",
            "properties": {
                "city": {"type": "STRING", "description": "City name"},
                "days": {"type": "INTEGER"},
            },
            "required": ["city"],
        },
    }


def test_gemini_without_parameters_omits_them() -> None:
    assert render(Tool("ping", "Ping."), "gemini") == {"name": "ping", "description": "Ping."}


@pytest.mark.parametrize("fmt", FORMATS)
def test_rendering_never_mutates_the_tool(fmt: str) -> None:
    tool = weather(STRICT_SCHEMA)
    before = tool.to_dict()
    out = render(tool, fmt)
    out.clear()
    assert tool.to_dict() == before


def test_unknown_format_is_a_structured_error_and_register_adds_one() -> None:
    with pytest.raises(InvalidRequest) as info:
        render(weather(), "cobol")
    assert "openai" in info.value.hint
    register("names-only", lambda t: {"n": t.name})
    assert render_many([weather(), Tool("b")], "names-only") == [{"n": "get_weather"}, {"n": "b"}]


# -- strict mode -------------------------------------------------------------------


def test_strict_conversion_makes_optional_properties_required_and_nullable() -> None:
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": "integer", "default": 3},
            "unit": {"enum": ["c", "f"]},
            "where": {"$ref": "#/$defs/Place"},
        },
        "required": ["city"],
        "$defs": {"Place": {"type": "object", "properties": {"lat": {"type": "number"}}}},
    }
    original = copy.deepcopy(schema)
    assert strict_refusal(schema) is not None
    strict = openai_strict(schema)
    assert schema == original
    assert strict == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "days": {"type": ["integer", "null"]},
            "unit": {"anyOf": [{"enum": ["c", "f"]}, {"type": "null"}]},
            "where": {"anyOf": [{"$ref": "#/$defs/Place"}, {"type": "null"}]},
        },
        "required": ["city", "days", "unit", "where"],
        "additionalProperties": False,
        "$defs": {
            "Place": {
                "type": "object",
                "properties": {"lat": {"type": ["number", "null"]}},
                "required": ["lat"],
                "additionalProperties": False,
            }
        },
    }
    assert strict_refusal(strict) is None


@pytest.mark.parametrize(
    ("schema", "words"),
    [
        ({"type": "object", "properties": {"d": {"type": "object", "additionalProperties": True}}}, "free-form"),
        ({"type": "object", "properties": {"d": {"type": "object"}}}, "free-form"),
        ({"type": "object", "properties": {"a": {"allOf": [{"type": "string"}]}}}, "allOf"),
        ({"type": "object", "properties": {"a": {"type": "string", "minLength": 2}}}, "minLength"),
        ({"type": "array", "items": {"type": "string"}}, "root"),
    ],
)
def test_strict_refusal_says_why(schema: dict[str, Any], words: str) -> None:
    assert openai_strict(schema) is None
    reason = openai_strict_reason(schema)
    assert reason is not None and words in reason


def test_strict_refuses_too_deep_nesting() -> None:
    node: dict[str, Any] = {"type": "object", "properties": {}, "additionalProperties": False, "required": []}
    for _ in range(11):
        node = {"type": "object", "properties": {"n": node}, "required": ["n"], "additionalProperties": False}
    assert "levels" in (strict_refusal(node) or "")


# -- gemini subset -----------------------------------------------------------------


def test_gemini_inlines_refs_and_drops_unsupported_keywords() -> None:
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "additionalProperties": False,
        "properties": {
            "to": {"$ref": "#/$defs/Address", "description": "Recipient"},
            "note": {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None},
            "size": {"type": ["integer", "null"], "enum": [1, 2], "examples": [1]},
            "kind": {"const": "parcel"},
            "email": {"type": "string", "format": "email", "pattern": "^.+@.+$"},
        },
        "$defs": {
            "Address": {
                "type": "object",
                "properties": {"street": {"type": "string"}},
                "required": ["street"],
                "additionalProperties": False,
            }
        },
    }
    assert gemini_schema(schema) == {
        "type": "OBJECT",
        "properties": {
            "to": {
                "type": "OBJECT",
                "description": "Recipient",
                "properties": {"street": {"type": "STRING"}},
                "required": ["street"],
            },
            "note": {"type": "STRING", "nullable": True, "default": None},
            "size": {"type": "INTEGER", "nullable": True, "description": "Allowed values: 1, 2."},
            "kind": {"type": "STRING", "enum": ["parcel"]},
            "email": {"type": "STRING", "pattern": "^.+@.+$"},
        },
    }


def test_gemini_recursive_schema_terminates() -> None:
    schema = {
        "type": "object",
        "properties": {"root": {"$ref": "#/$defs/Node"}},
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {
                    "value": {"type": "string"},
                    "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                },
            }
        },
    }
    out = gemini_schema(schema)
    node = out["properties"]["root"]
    assert node["properties"]["value"] == {"type": "STRING"}
    cut = node["properties"]["children"]["items"]
    assert cut["type"] == "OBJECT" and "recursive" in cut["description"]


def test_gemini_merges_all_of_and_reads_one_of() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"allOf": [{"$ref": "#/definitions/A"}, {"properties": {"y": {"type": "number"}}}]},
            "b": {"oneOf": [{"type": "string"}, {"type": "integer"}]},
        },
        "definitions": {"A": {"type": "object", "properties": {"x": {"type": "boolean"}}, "required": ["x"]}},
    }
    out = gemini_schema(schema)["properties"]
    assert out["a"] == {
        "type": "OBJECT",
        "properties": {"x": {"type": "BOOLEAN"}, "y": {"type": "NUMBER"}},
        "required": ["x"],
    }
    assert out["b"] == {"anyOf": [{"type": "STRING"}, {"type": "INTEGER"}]}


# -- system prompt -----------------------------------------------------------------


def test_system_prompt_lists_categories_by_size_and_caps_them() -> None:
    text = system_prompt({"slack": 3, "github": 12}, meta_tool_name="find_tools")
    assert "`find_tools`" in text
    assert text.index("- github (12)") < text.index("- slack (3)")
    many = {f"cat{i:03d}": 1 for i in range(100)}
    capped = system_prompt(many, max_categories=10)
    assert capped.count("\n- cat") == 10
    assert "90 more categories (90 tools)" in capped
    assert "empty" in system_prompt({})


def test_strict_conversion_drops_annotations_but_refuses_constraints() -> None:
    schema = {
        "type": "object",
        "properties": {"n": {"type": "number", "x-original-type": "float", "examples": [1]}},
        "required": ["n"],
    }
    assert strict_refusal(schema) is not None  # unknown keyword: not strict as is
    assert openai_strict(schema) == {
        "type": "object",
        "properties": {"n": {"type": "number"}},
        "required": ["n"],
        "additionalProperties": False,
    }
    tags = {"type": "object", "properties": {"t": {"type": "array", "items": {"type": "string"}, "uniqueItems": True}}}
    assert "uniqueItems" in (openai_strict_reason(tags) or "")


def _nested_tool() -> Tool:
    from pydantic import BaseModel

    from toolscout.sources.functions import function_tool

    class Node(BaseModel):
        name: str
        children: list[Node] = []

    def plant(root: Node, depth: int | None = None, mode: str = "fast") -> None:
        """Plant a tree."""

    return function_tool(plant)[0]


def test_gemini_output_is_accepted_by_the_sdk_types() -> None:
    genai = pytest.importorskip("google.genai.types")
    for tool in (weather(), _nested_tool(), Tool("ping", "Ping.")):
        genai.FunctionDeclaration.model_validate(render(tool, "gemini"))  # extra="forbid"


def test_mcp_output_is_a_valid_mcp_tool() -> None:
    from mcp.types import Tool as McpTool

    for tool in (weather(), _nested_tool()):
        parsed = McpTool.model_validate(render(tool, "mcp"))
        assert parsed.name == tool.name


def test_names_providers_reject_get_a_stable_unique_wire_name() -> None:
    from toolscout.formats import wire_name, wire_names

    long = "get_monthly_top_100_tv_shows_torrents_for_movie_tv_music_search_and_download"
    tool = Tool(long, "x")
    for fmt, key in (("openai", ("function", "name")), ("anthropic", ("name",)), ("gemini", ("name",))):
        out: Any = render(tool, fmt)
        for k in key:
            out = out[k]
        assert out == wire_name(long, fmt) and len(out) <= 64 and out.startswith(long[:40])
    assert render(tool, "mcp")["name"] == long  # MCP and generic keep the name
    assert wire_name("PDF&URLTool", "openai") != wire_name("PDF_URLTool", "openai")
    assert wire_name("a.b", "gemini") == "a.b" and wire_name("a.b", "openai").startswith("a_b_")
    assert wire_name("ok_name", "openai") == "ok_name"
    assert wire_names(["ok", "a.b", long], "openai") == {
        wire_name("a.b", "openai"): "a.b",
        wire_name(long, "openai"): long,
    }


def test_absurdly_deep_schema_renders_without_recursion_error() -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(450):  # deep, yet storable in a Tool
        deep = {"type": "object", "properties": {"x": deep}}
    tool = Tool("deep", "Deep.", deep)
    for fmt in FORMATS:
        assert render(tool, fmt)
    for _ in range(3000):  # beyond any recursive walk
        deep = {"type": "object", "properties": {"x": deep}}
    assert "too deeply" in gemini_schema(deep)["description"]
    assert openai_strict(deep) is None and openai_strict_reason(deep)
    assert strict_refusal(deep)


def _schemas() -> Any:
    from hypothesis import strategies as st

    names = st.sampled_from(["a", "b", "c", "d"])
    leaf = st.one_of(
        st.fixed_dictionaries({"type": st.sampled_from(["string", "integer", "number", "boolean", "null"])},
                              optional={"description": st.text(max_size=5), "format": st.sampled_from(["date-time", "email", "int64"]),
                                        "default": st.integers(), "x-vendor": st.booleans()}),
        st.fixed_dictionaries({"enum": st.lists(st.one_of(st.text(max_size=3), st.integers(), st.none()), min_size=1, max_size=3)}),
        st.fixed_dictionaries({"const": st.text(max_size=3)}),
        st.just({"$ref": "#/$defs/Node"}),
        st.just({}),
    )

    def grow(inner: Any) -> Any:
        objects = st.builds(
            lambda props, req, extra: {"type": "object", "properties": props, "required": [k for k in props if k in req],
                                       **({"additionalProperties": extra} if extra is not None else {})},
            st.dictionaries(names, inner, max_size=3), st.sets(names), st.sampled_from([None, False, True]),
        )
        arrays = st.builds(lambda items: {"type": "array", "items": items}, inner)
        unions = st.builds(lambda parts: {"anyOf": parts}, st.lists(inner, min_size=1, max_size=3))
        typelists = st.builds(lambda t: {"type": [t, "null"]}, st.sampled_from(["string", "integer", "object"]))
        return st.one_of(objects, arrays, unions, typelists)

    body = st.recursive(leaf, grow, max_leaves=8)
    return st.builds(
        lambda props, node: {"type": "object", "properties": props,
                             "$defs": {"Node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/Node"}, "v": node}}}},
        st.dictionaries(names, body, max_size=4), body,
    )


def test_random_schemas_render_everywhere_and_convert_consistently() -> None:
    from hypothesis import given, settings

    try:
        from google.genai import types as genai
    except ImportError:  # the gemini extra is optional
        genai = None

    @settings(max_examples=60, deadline=None)
    @given(_schemas())
    def check(schema: dict[str, Any]) -> None:
        tool = Tool("t", "Random.", schema)
        for fmt in FORMATS:
            assert isinstance(render(tool, fmt), dict)
        if genai is not None:
            genai.FunctionDeclaration.model_validate(render(tool, "gemini"))
        converted = openai_strict(schema)
        if converted is not None:
            assert strict_refusal(converted) is None  # a conversion is always accepted as is
        else:
            assert openai_strict_reason(schema)

    check()
