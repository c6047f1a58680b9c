import pytest

from toolscout import Annotations, CallResult, DeferPolicy, Tool
from toolscout.errors import DeclarationError, ToolFailed, ToolscoutError

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


def test_version_changes_exactly_when_what_the_model_sees_changes():
    a = Tool("get_weather", "Weather now.", SCHEMA, category="weather")
    same = Tool("get_weather", "Weather now.", dict(reversed(list(SCHEMA.items()))), category="other")
    assert a.version == same.version  # key order and non-rendered fields do not matter
    assert a.replace(description="Weather forecast.").version != a.version
    assert a.replace(input_schema={"type": "object"}).version != a.version
    ann = a.replace(annotations=Annotations(read_only=True))
    assert ann.version != a.version


def test_tool_is_immutable_and_schema_copies_are_independent():
    t = Tool("x", "d", SCHEMA)
    with pytest.raises(AttributeError):
        t.name = "y"  # type: ignore[misc]
    schema = t.input_schema
    schema["properties"]["evil"] = {}
    assert "evil" not in t.input_schema


def test_round_trip_keeps_every_field():
    t = Tool(
        "a_tool",
        "Does a. Then b.",
        SCHEMA,
        output_schema={"type": "object"},
        source="file",
        source_id="f.yaml",
        original_name="tool",
        category="cat",
        tags=["x", "y"],
        annotations=Annotations(title="A", read_only=True, destructive=False),
        permission="read",
        searchable=False,
        available=False,
        platforms=["linux"],
        defer="never",
        display={"zh-CN": "工具"},
        descriptions={"zh-CN": "做点事"},
        meta={"k": 1},
    )
    back = Tool.from_dict(t.to_dict())
    assert back == t
    assert back.defer is DeferPolicy.NEVER
    assert back.call_name == "tool"
    assert t.summary() == "Does a."


@pytest.mark.parametrize("bad", ["", "   ", None, 3])
def test_bad_names_are_refused(bad):
    with pytest.raises(DeclarationError) as err:
        Tool(bad)  # type: ignore[arg-type]
    assert err.value.field == "name"


def test_unknown_permission_is_refused():
    with pytest.raises(DeclarationError):
        Tool("x", permission="root")  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"description": 5}, "description"),
        ({"input_schema": [1]}, "input_schema"),
        ({"input_schema": {"x": {1, 2}}}, "input_schema"),
        ({"input_schema": {"minimum": float("nan")}}, "input_schema"),
        ({"output_schema": {"default": 10**5000}}, "output_schema"),
        ({"tags": "web"}, "tags"),
        ({"tags": 5}, "tags"),
        ({"platforms": [1]}, "platforms"),
        ({"display": [1]}, "display"),
        ({"meta": [1]}, "meta"),
        ({"meta": {"when": object()}}, "meta"),
        ({"defer": ["x"]}, "defer"),
        ({"annotations": "read-only"}, "annotations"),
        ({"category": ["a"]}, "category"),
        ({"description": "bad \ud800 text"}, "description"),
        ({"input_schema": {"properties": {"\udc00": {}}}}, "input_schema"),
    ],
)
def test_malformed_fields_are_declaration_errors_naming_the_field(kwargs, field):
    with pytest.raises(DeclarationError) as err:
        Tool("x", **kwargs)
    assert err.value.field == field and "tool 'x'" in err.value.message


def test_a_lone_surrogate_in_the_name_is_refused_with_a_hint():
    with pytest.raises(DeclarationError) as err:
        Tool("a\ud800")
    assert "U+D800" in err.value.message and "surrogate" in err.value.hint


def test_from_dict_refuses_malformed_records():
    for bad in ({}, [1], {"name": "a", "annotations": [1]}):
        with pytest.raises(DeclarationError):
            Tool.from_dict(bad)  # type: ignore[arg-type]
    assert Tool.from_dict({"name": "a", "annotations": {"readOnlyHint": True}}).annotations == Annotations(read_only=True)


def test_annotations_map_to_and_from_mcp_hints():
    ann = Annotations.from_mcp({"readOnlyHint": True, "openWorldHint": "yes", "title": 5})
    assert ann == Annotations(read_only=True)
    assert ann.to_mcp() == {"readOnlyHint": True}
    assert Annotations.from_mcp({}) is None


def test_call_result_failure_carries_structured_error():
    r = CallResult.failure("t", ToolFailed("boom"))
    assert not r.ok and r.error is not None and r.error.code == "tool_error"
    assert "boom" in r.text()
    assert r.to_dict()["error"]["hint"]
    with pytest.raises(ToolscoutError):
        r.raise_for_error()


def test_replace_shares_unchanged_schemas_and_renders_the_same():
    t = Tool("get_weather", "Weather now.", SCHEMA, output_schema={"type": "object"}, category="weather", tags=["a"])
    copy = t.replace(name="get_weather__r1", description="Other words.")
    assert copy.schema_json is t.schema_json  # shared as it is, never re-encoded
    assert copy.input_schema == t.input_schema == SCHEMA
    assert copy.output_schema == {"type": "object"}
    assert copy.to_dict() | {"name": "get_weather", "description": "Weather now.", "version": t.version} == t.to_dict()
    changed = t.replace(input_schema={"type": "object", "properties": {"q": {"type": "string"}}})
    assert changed.input_schema["properties"] == {"q": {"type": "string"}}
    with pytest.raises(DeclarationError):
        t.replace(tags="not a list")  # replaced fields are still checked


def test_shared_fields_are_held_once_and_read_as_before():
    a = Tool("a", "x", category="c", tags=["t"], permission="read", platforms=["linux"])
    b = Tool("b", "y", category="c", tags=["t"], permission="read", platforms=["linux"])
    assert a._profile is b._profile  # one shared profile for equal source, labels and flags
    assert (b.category, b.tags, b.permission, b.platforms, b.source, b.origin) == ("c", ("t",), "read", ("linux",), "python", "python")
    other = Tool("a", "x", category="d", tags=["t"], permission="read", platforms=["linux"])
    assert a != other and a == Tool.from_dict(a.to_dict())
    meta = Tool("m", meta={"k": [1]}, display={"fr": "M"})
    assert meta.meta == {"k": [1]} and meta.display == {"fr": "M"}
    with pytest.raises(AttributeError):
        a.category = "e"  # type: ignore[misc]
