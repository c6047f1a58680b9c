"""Property-based fuzzing of the model-facing entry points: find_tools, call_tool and
use_tool arguments, and tool names, through the gateway and the session. Whatever a model
(or an attacker speaking for one) sends, the answer is data: a result or a structured
error with a known code; nothing raises."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolscout import Catalog, Tool
from toolscout.errors import ToolscoutError
from toolscout.gateway import Gateway
from toolscout.session import Session

CODES = {
    "empty_query", "invalid_regex", "invalid_arguments", "invalid_request", "no_match",
    "unknown_tool", "not_revealed", "ambiguous", "tool_error", "timeout",
    "upstream_unavailable", "denied", "metadata_only",
}  # fmt: skip

_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.builds(lambda sign: sign * 10**5000, st.sampled_from([1, -1])),  # past Python's int-to-text limit
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=40),
)
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)),
    max_leaves=12,
)
_keys = st.sampled_from(
    ["query", "limit", "search_type", "category", "exclude", "max_results", "maxResults", "category_filter",
     "searchType", "name", "arguments", "params", "tool_name", "x"]
)  # fmt: skip
_args = st.one_of(
    st.dictionaries(_keys, _json, max_size=6),
    _json,
    st.text(max_size=60),  # JSON text, broken or not
    st.builds(lambda d: json.dumps(d), st.dictionaries(_keys, _scalars.filter(lambda v: not (type(v) is int and abs(v) > 10**30)), max_size=5)),
    st.just('{"query": "weather", "limit": ' + "9" * 5000 + "}"),  # valid JSON Python will not read
)
_names = st.one_of(
    st.sampled_from(["find_tools", "call_tool", "use_tool", "get_weather", "send_email", "`get_weather`", "GET-WEATHER"]),
    st.text(max_size=80),
    _scalars,
)


def _gateway() -> Gateway:
    cat = Catalog()
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    cat.add(Tool("get_weather", "Get the weather forecast for a city.", schema), handler=lambda a: a["city"])
    cat.add(Tool("send_email", "Send an email.", {"type": "object"}), handler=lambda a: "sent")

    def boom(args: dict[str, Any]) -> None:
        raise RuntimeError("boom")

    cat.add(Tool("explode", "Always fails.", {"type": "object"}), handler=boom)
    for i in range(20):
        cat.add(Tool(f"stock_{i}", f"Look up stock item {i}.", {"type": "object"}), handler=lambda a: "ok")
    return Gateway(cat)


GATEWAY = _gateway()
SETTINGS = settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def _check_error(error: Any) -> None:
    if error is not None:
        assert error.code in CODES, error
        assert error.text()


@SETTINGS
@given(_args)
def test_find_never_raises(arguments: Any) -> None:
    found = GATEWAY.find(arguments)
    _check_error(found.error)
    assert found.ok or not found.tool_references
    json.dumps(found.render("openai").to_dict(), default=str)  # always serialisable


@SETTINGS
@given(_names, _args)
def test_call_never_raises(name: Any, arguments: Any) -> None:
    result = GATEWAY.call(name, arguments)
    _check_error(result.error)
    assert result.ok == (result.error is None)


@SETTINGS
@given(_json, _json)
def test_use_tool_never_raises(query: Any, params: Any) -> None:
    result = GATEWAY.use_tool(query, params)
    _check_error(result.error)


@SETTINGS
@given(st.lists(st.tuples(_names, _args), min_size=1, max_size=5))
def test_a_session_answers_every_call(calls: list[tuple[Any, Any]]) -> None:
    session = Session(GATEWAY, threshold=1, call_tool=True, use_tool=True, max_revealed=3)
    for name, arguments in calls:
        try:
            outcome = session.handle(name, arguments)
        except ToolscoutError as exc:  # pragma: no cover - the property says this never happens
            raise AssertionError(f"raised {exc!r}") from exc
        _check_error(outcome.error)
        assert outcome.text() or outcome.ok
        session.tools("gemini")  # the list stays renderable
    assert len(session.revealed) <= 3
