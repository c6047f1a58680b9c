"""Every missing or invalid argument gets its own JSON pointer (issue 24, item 3).

mcp-server-time's ``convert_time`` takes three required strings; a call that gives only an
unknown ``timezone`` once pointed every problem at the first missing one."""

from __future__ import annotations

import asyncio

from toolscout import Catalog, Tool
from toolscout.gateway import Gateway
from toolscout.request import CallRequest

CONVERT = {
    "type": "object",
    "properties": {
        "source_timezone": {"type": "string"},
        "time": {"type": "string"},
        "target_timezone": {"type": "string"},
        "nested": {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}, "required": ["a", "b"]},
    },
    "required": ["source_timezone", "time", "target_timezone"],
}


def _gateway() -> Gateway:
    catalog = Catalog()
    catalog.add(Tool("time_convert_time", "Convert a time between time zones.", CONVERT), handler=lambda a: "ok")
    return Gateway(catalog)


def test_each_missing_property_has_its_own_pointer() -> None:
    result = asyncio.run(_gateway().execute(CallRequest.parse("time_convert_time", {"timezone": "UTC"})))
    assert result.error is not None and result.error.code == "invalid_arguments"
    problems = result.error.details["errors"]
    assert [p["pointer"] for p in problems] == ["/source_timezone", "/time", "/target_timezone"]
    for p in problems:
        assert p["message"] == f"{p['pointer'][1:]!r} is a required property" and p["expected"] == "present"
    assert "/time: 'time' is a required property" in result.error.message


def test_nested_missing_properties_point_inside_the_object() -> None:
    args = {"source_timezone": "UTC", "time": 3, "target_timezone": "UTC", "nested": {}}
    problems = asyncio.run(_gateway().execute(CallRequest.parse("time_convert_time", args))).error.details["errors"]
    assert sorted(p["pointer"] for p in problems) == ["/nested/a", "/nested/b", "/time"]
    assert next(p for p in problems if p["pointer"] == "/time")["expected"] == "string"
