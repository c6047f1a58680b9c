"""Property-based fuzzing of the ``/v1`` HTTP API, as ``test_mcp_stdio`` does for stdio lines:
whatever bytes a client sends to find, call or a tool's page, the answer is a JSON body
(never an HTTP 500) with either a result or ``{"error": {"code", "message", ...}}``.

In-process (ASGI, no socket), bounded by ``max_examples``: a few seconds in CI.
"""

from __future__ import annotations

import json
import math
from typing import Any
from urllib.parse import quote

from fastapi.testclient import TestClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from toolscout import Catalog, Tool
from toolscout.gateway import Gateway
from toolscout.server.http_api import create_app

SETTINGS = settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])


def _client() -> TestClient:
    cat = Catalog()
    schema = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
    cat.add(Tool("get_weather", "Get the weather forecast for a city.", schema), handler=lambda a: a["city"])
    cat.add(Tool("echo_raw", "Return the arguments as given.", {"type": "object"}), handler=lambda a: a)
    cat.add(Tool("nan_maker", "Return a structured result with NaN.", {"type": "object"}), handler=lambda a: {"x": math.nan})
    return TestClient(create_app(Gateway(cat, call_timeout=None)), raise_server_exceptions=False)


CLIENT = _client()

# Text with every code point, lone surrogates included (hypothesis leaves them out by default).
_text = st.text(st.characters(exclude_categories=()), max_size=30)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**20), max_value=10**20),
    st.floats(allow_nan=False, allow_infinity=False),
    _text,
    st.sampled_from(["get_weather", "echo_raw", "nan_maker", "weather", "\ud800", "select:get_weather", "^get"]),
)
_json = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_text, inner, max_size=3)),
    max_leaves=8,
)
_keys = st.sampled_from(["query", "limit", "search_type", "category", "exclude", "kinds", "format", "name", "arguments", "x"])
_objects = st.dictionaries(st.one_of(_keys, _text), _json, max_size=5)


def _encode(value: Any) -> bytes:
    """JSON text as a client sends it: surrogates as ``\\uXXXX`` escapes (they cannot be UTF-8)."""
    return json.dumps(value, ensure_ascii=True).encode()


_bodies = st.one_of(
    _objects.map(_encode),
    _json.map(_encode),
    st.binary(max_size=40),  # not JSON, not UTF-8
    st.just(b'{"query": "\\ud800"}'),
    st.just(b'{"name": "\\ud800", "arguments": {"\\udfff": "\\ud800"}}'),
)


def _post(path: str, body: bytes) -> Any:
    return CLIENT.post(path, content=body, headers={"content-type": "application/json"})


def _answer(response: Any) -> dict[str, Any]:
    assert response.status_code < 500, (response.status_code, response.text[:300])
    body = response.json()  # always JSON
    assert isinstance(body, dict)
    error = body.get("error")
    if error is not None:
        assert isinstance(error["code"], str) and error["code"] and isinstance(error["message"], str)
    return body


@SETTINGS
@given(st.sampled_from(["/v1/find", "/v1/call"]), _bodies)
def test_find_and_call_answer_any_body_with_json(path: str, body: bytes) -> None:
    _answer(_post(path, body))


@SETTINGS
@given(_text, _text)
def test_a_tools_page_answers_any_name_and_format(name: str, fmt: str) -> None:
    path = quote(name.encode("utf-8", "surrogatepass"), safe="")  # a lone surrogate: bytes that are not UTF-8
    response = CLIENT.get(f"/v1/tools/{path or 'x'}?format={quote(fmt.encode('utf-8', 'surrogatepass'))}")
    _answer(response)


def test_lone_surrogates_are_echoed_not_a_500() -> None:
    """Issue 23.4: the echoed query or name could not be encoded (HTTP 500)."""
    found = _answer(_post("/v1/find", b'{"query": "weather \\ud800"}'))
    assert "error" not in found and found["tool_references"][0]["tool_name"] == "get_weather"
    called = _answer(_post("/v1/call", b'{"name": "\\ud800"}'))
    assert called["tool"] == "\ud800" and called["error"]["code"] == "unknown_tool"
    echoed = _answer(_post("/v1/call", _encode({"name": "echo_raw", "arguments": {"k": "\ud800"}})))
    assert echoed["ok"] is True and echoed["structured"] == {"k": "\ud800"}
    nan = _answer(_post("/v1/call", b'{"name": "nan_maker", "arguments": {}}'))
    assert nan["ok"] is True and nan["structured"] in ({"x": None}, None)
