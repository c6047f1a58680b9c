"""Tool definitions in every dialect are detected and read into the same Tool."""

from __future__ import annotations

from typing import Any

import pytest

from toolscout.catalog import Catalog
from toolscout.errors import DeclarationError
from toolscout.sources.definitions import (
    definitions_from_mcp_tools,
    detect_dialect,
    tool_from_definition,
)

PARAMS = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}

DIALECTS: list[tuple[str, dict[str, Any]]] = [
    ("openai", {"type": "function", "function": {"name": "weather", "description": "Weather.", "parameters": PARAMS}}),
    ("openai-responses", {"type": "function", "name": "weather", "description": "Weather.", "parameters": PARAMS}),
    ("anthropic", {"name": "weather", "description": "Weather.", "input_schema": PARAMS}),
    ("data", {"name": "weather", "description": "Weather.", "input_schema": PARAMS, "source": "meteo"}),
    ("mcp", {"name": "weather", "description": "Weather.", "inputSchema": PARAMS}),
    (
        "gemini",
        {
            "name": "weather",
            "description": "Weather.",
            "parameters": {"type": "OBJECT", "properties": {"city": {"type": "STRING"}}, "required": ["city"]},
        },
    ),
]


@pytest.mark.parametrize(("dialect", "definition"), DIALECTS, ids=[d for d, _ in DIALECTS])
def test_every_dialect_is_detected_and_read(dialect: str, definition: dict[str, Any]) -> None:
    assert detect_dialect(definition) == dialect
    tool = tool_from_definition(definition)
    assert (tool.name, tool.description) == ("weather", "Weather.")
    assert tool.input_schema == PARAMS


def test_data_shape_source_becomes_category_and_extras_meta() -> None:
    tool = tool_from_definition({"name": "a", "input_schema": {}, "source": "svc", "orig_name": "A"})
    assert tool.category == "svc" and tool.meta == {"orig_name": "A"}
    assert tool.input_schema == {"type": "object", "properties": {}}


def test_mcp_title_annotations_output_schema() -> None:
    tool = tool_from_definition(
        {
            "name": "delete_file",
            "title": "Delete a file",
            "description": "Delete.",
            "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}},
            "outputSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
            "annotations": {"destructiveHint": True},
        }
    )
    assert tool.annotations is not None
    assert (tool.annotations.title, tool.annotations.destructive) == ("Delete a file", True)
    assert tool.output_schema == {"type": "object", "properties": {"ok": {"type": "boolean"}}}


def test_gemini_nullable_and_uppercase_types_normalised() -> None:
    tool = tool_from_definition(
        {
            "name": "g",
            "parameters": {
                "type": "OBJECT",
                "properties": {
                    "tags": {"type": "ARRAY", "items": {"type": "STRING"}},
                    "note": {"type": "STRING", "nullable": True, "format": "enum", "enum": ["a"]},
                },
                "propertyOrdering": ["tags", "note"],
            },
        }
    )
    assert tool.input_schema == {
        "type": "object",
        "properties": {
            "tags": {"type": "array", "items": {"type": "string"}},
            "note": {"type": ["string", "null"], "enum": ["a"]},
        },
    }


def test_openai_strict_flag_is_remembered() -> None:
    d = {"type": "function", "function": {"name": "s", "parameters": PARAMS, "strict": True}}
    assert tool_from_definition(d).meta == {"strict": True}


@pytest.mark.parametrize(
    ("definition", "field"),
    [
        ({"description": "no name", "input_schema": {}}, "name"),
        ({"type": "function", "function": {"description": "x"}}, "name"),
        ({"name": "a", "input_schema": {"type": "object", "properties": {"x": {"type": "text"}}}}, "input_schema"),
        ({"name": "a", "inputSchema": {"type": "array"}}, "inputSchema"),
        ({"name": "a", "parameters": "not a schema"}, "parameters"),
        ({"name": "a", "description": 3}, "description"),
        ({"name": "a", "tags": "x"}, "tags"),
        ({"name": "a", "inputSchema": {}, "annotations": ["x"]}, "annotations"),
        ({"function_declarations": [{"name": "a"}]}, "function_declarations"),
    ],
)
def test_malformed_definitions_name_the_field(definition: dict[str, Any], field: str) -> None:
    with pytest.raises(DeclarationError) as info:
        tool_from_definition(definition, origin="defs[0]")
    assert info.value.field == field
    assert "defs[0]" in info.value.message


def test_not_a_mapping() -> None:
    with pytest.raises(DeclarationError):
        tool_from_definition(["x"])  # type: ignore[arg-type]


def test_from_mcp_sdk_tool_objects() -> None:
    from mcp.types import Tool as McpTool

    tools = definitions_from_mcp_tools(
        [McpTool(name="ping", description="Ping.", inputSchema={"type": "object", "properties": {}})],
        source_id="srv",
    )
    assert tools[0].name == "ping" and tools[0].source == "mcp" and tools[0].source_id == "srv"


def test_catalog_add_definitions_mixed_dialects_with_prefix() -> None:
    cat = Catalog()
    cat.add_definitions([DIALECTS[0][1], {"name": "other", "inputSchema": PARAMS}], prefix="ext")
    assert sorted(cat.names()) == ["ext_other", "ext_weather"]
    assert cat.get("ext_weather").call_name == "weather"  # type: ignore[union-attr]


def test_absurdly_deep_schema_is_a_declaration_error() -> None:
    deep: dict[str, Any] = {}
    for _ in range(5000):
        deep = {"type": "object", "properties": {"x": deep}}
    with pytest.raises(DeclarationError, match="deep"):
        tool_from_definition({"name": "deep", "inputSchema": deep})
