"""The shipped demo catalog: well-formed, in sync with its specs, and every tool callable."""

from __future__ import annotations

from collections import Counter

import jsonschema
import pytest

from toolscout.demo import demo_catalog, demo_tools
from toolscout.demo._build import (  # reach-in: the shipped catalog must equal its build script's output
    CATALOG_PATH,
    render,
)
from toolscout.demo.real import REAL_HANDLERS, evaluate
from toolscout.demo.simulated import simulated_handler
from toolscout.model import Tool

TOOLS = demo_tools()


def test_catalog_json_matches_the_specs() -> None:
    assert CATALOG_PATH.read_text(encoding="utf-8") == render(), "run python -m toolscout.demo._build"


def test_size_names_and_categories() -> None:
    names = [t.name for t in TOOLS]
    assert len(TOOLS) >= 250
    assert len(set(names)) == len(names)
    assert all(t.category for t in TOOLS)
    assert 20 <= len({t.category for t in TOOLS if t.searchable}) <= 40
    assert max(Counter(t.category for t in TOOLS).values()) <= 25  # no service dominates


@pytest.mark.parametrize("tool", TOOLS, ids=lambda t: t.name)
def test_every_schema_is_valid_and_described(tool: Tool) -> None:
    schema = tool.input_schema
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"
    assert set(schema.get("required", [])) <= set(schema["properties"])
    assert all(p.get("description") for p in schema["properties"].values())
    assert 20 <= len(tool.description) <= 300
    assert tool.annotations is not None and tool.permission is not None


def test_annotations_agree_with_permissions() -> None:
    for t in TOOLS:
        assert t.annotations is not None
        if t.annotations.read_only:
            assert t.permission in {"read", "network"} and not t.annotations.destructive, t.name
        if t.permission == "dangerous":
            assert t.annotations.destructive, t.name


def test_bilingual_hidden_and_platform_restricted_tools_exist() -> None:
    zh = [t for t in TOOLS if "zh-CN" in t.descriptions]
    assert len(zh) >= 5 and all("zh-CN" in t.display for t in zh)
    assert 1 <= sum(not t.searchable for t in TOOLS) <= 10
    assert {p for t in TOOLS for p in t.platforms} >= {"windows", "macos"}


def test_every_tool_has_a_handler() -> None:
    catalog = demo_catalog()
    assert all(catalog.handler(n) is not None for n in catalog.names())
    assert set(REAL_HANDLERS) <= set(catalog.names())


def test_simulated_results_are_marked_and_deterministic() -> None:
    tool = next(t for t in TOOLS if t.name == "slack_send_message")
    run = simulated_handler(tool)
    first = run({"channel": "#eng", "text": "hi"})
    assert first["simulated"] is True
    assert first == run({"channel": "#eng", "text": "hi"})
    assert first["id"] != run({"channel": "#eng", "text": "bye"})["id"]
    listing = simulated_handler(next(t for t in TOOLS if t.name == "github_list_issues"))
    assert len(listing({"repo": "a/b", "limit": 2})["items"]) == 2


@pytest.mark.parametrize(
    ("expression", "value"),
    [("(1250 * 1.07) / 12", 111.45833333333333), ("2 ** 10 - 24", 1000), ("sqrt(16) + pi - pi", 4.0)],
)
def test_math_evaluate(expression: str, value: float) -> None:
    assert evaluate(expression) == pytest.approx(value)


@pytest.mark.parametrize("hostile", ["__import__('os')", "open('x')", "9 ** 9 ** 9", "(9 ** 999) ** 999", "factorial(10**6)"])
def test_math_evaluate_refuses_hostile_input(hostile: str) -> None:
    with pytest.raises(ValueError):
        evaluate(hostile)


def test_real_unit_time_and_text_handlers() -> None:
    convert = REAL_HANDLERS["units_convert"]
    assert convert({"value": 10, "from_unit": "km", "to_unit": "mi"})["result"] == pytest.approx(6.2137119224)
    assert convert({"value": 100, "from_unit": "C", "to_unit": "F"})["result"] == pytest.approx(212)
    with pytest.raises(ValueError, match="cannot convert"):
        convert({"value": 1, "from_unit": "kg", "to_unit": "km"})
    shifted = REAL_HANDLERS["time_convert_timezone"](
        {"datetime": "2025-01-15T09:00", "from_timezone": "Europe/Berlin", "to_timezone": "Asia/Tokyo"}
    )
    assert shifted["to"]["datetime"] == "2025-01-15T17:00:00+09:00"
    assert REAL_HANDLERS["time_date_difference"]({"start": "2025-01-01", "end": "2025-03-01"})["days"] == 59
    assert REAL_HANDLERS["text_slugify"]({"text": "Héllo, Wörld!"})["slug"] == "hello-world"
    assert REAL_HANDLERS["text_base64_decode"]({"data": "aGk="})["text"] == "hi"
    with pytest.raises(ValueError):
        REAL_HANDLERS["text_base64_decode"]({"data": "%%%"})


# -- every tool answers through the gateway ------------------------------------------------
_PATTERNS = {
    r"^[\w.-]+/[\w.-]+$": "octo-org/api",
    r"^i-[0-9a-f]{8,17}$": "i-0abc123def4567890",
    r"^[a-z0-9.-]{3,63}$": "acme-logs",
    r"^\+[1-9]\d{6,14}$": "+14155550123",
    r"^[A-Z][A-Z0-9]+$": "PLAT",
    r"^(\d+[wdhm]\s*)+$": "2h 30m",
    r"^\d{4}-Q[1-4]$": "2025-Q3",
    r"^\d+(\.\d{1,2})?$": "24.99",
    r"^[a-z]{3}$": "usd",
    r"^[A-Z]{3}$": "EUR",
    r"^[0-9]{4,10}$": "123456",
    r"^\d{4}-\d{2}$": "2025-06",
    r"^[A-Z.^-]{1,10}$": "AAPL",
    r"^[a-z0-9_-]{1,80}$": "eng-alerts",
}
_FORMATS = {"date": "2025-01-15", "date-time": "2025-01-15T09:00:00+00:00",
            "email": "ana@example.com", "uri": "https://example.com/x"}
_REAL_ARGS = {
    "math_evaluate": {"expression": "2 * (3 + 4)"},
    "units_convert": {"value": 1, "from_unit": "kg", "to_unit": "lb"},
    "time_convert_timezone": {"datetime": "2025-01-15T09:00", "from_timezone": "UTC", "to_timezone": "Asia/Shanghai"},
    "time_add_duration": {"datetime": "2025-01-15T09:00", "days": 3},
    "text_base64_decode": {"data": "aGVsbG8="},
}


def _sample(schema: dict) -> object:
    """The simplest value that satisfies ``schema`` (enough of JSON Schema for the demo)."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "string":
        if "pattern" in schema:
            return _PATTERNS[schema["pattern"]]
        return _FORMATS.get(schema.get("format", ""), "example")
    if kind == "integer":
        return max(schema.get("minimum", 1), 1)
    if kind == "number":
        return 2.5
    if kind == "boolean":
        return True
    if kind == "array":
        return [_sample(schema.get("items", {"type": "string"}))] * max(1, schema.get("minItems", 1))
    return {k: _sample(v) for k, v in schema.get("properties", {}).items() if k in schema.get("required", [])}


def test_every_handler_answers_a_valid_call() -> None:
    catalog = demo_catalog()
    checker = jsonschema.FormatChecker()
    failures = []
    for tool in catalog:
        args = _REAL_ARGS.get(tool.name) or _sample(tool.input_schema)
        assert jsonschema.Draft202012Validator(tool.input_schema, format_checker=checker).is_valid(args)
        try:
            result = catalog.handler(tool.name)(args)
        except Exception as exc:  # a handler that raises on valid input is the failure here
            failures.append((tool.name, repr(exc)))
            continue
        if tool.name not in REAL_HANDLERS and result.get("simulated") is not True:
            failures.append((tool.name, "simulated result not marked"))
    assert failures == []


def test_platform_restricted_tools_are_denied_elsewhere() -> None:
    from toolscout.gateway import Gateway

    on_linux = Gateway(demo_catalog(), platform="linux")
    denied = on_linux.call("shell_run_powershell", {"command": "Get-Date"})
    assert denied.error is not None and denied.error.code == "unknown_tool"  # not visible here: absent
    assert "shell_run_powershell" not in {r.tool_name for r in on_linux.find_tools("powershell").tool_references}
    on_windows = Gateway(demo_catalog(), platform="windows")
    assert on_windows.call("shell_run_powershell", {"command": "Get-Date"}).ok
