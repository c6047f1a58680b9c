"""Property-based fuzzing of every entry point that reads outside input on the source side.

The rule under test: bad input never crashes the process or loses data. Each entry point
either returns well-formed tools (every field JSON data, encodable as UTF-8, round-tripping
through ``to_dict``/``from_dict``) or raises a :class:`ToolscoutError` subclass with a
message; it never lets a ``KeyError``/``TypeError``/``RecursionError``/``UnicodeError``...
escape. Upstream MCP tool lists never raise at all: bad entries are skipped with a reason.

Runs are derandomized and database-less, so CI sees the same examples every time; see
docs/robustness.md for the counts and what the fuzzing found.
"""

from __future__ import annotations

import copy
import json
import os
import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
import yaml
from hypothesis import HealthCheck, event, example, given, settings
from hypothesis import strategies as st

from _paths import FIXTURES
from toolscout.catalog import Catalog
from toolscout.errors import ConfigError, DeclarationError, ToolscoutError
from toolscout.model import Annotations, Tool
from toolscout.sources.mcp.aggregator import Aggregator
from toolscout.sources.mcp.config import load_config, parse_config
from toolscout.sources.openapi import tools_from_openapi

# CI runs a fixed set of examples (derandomized, no example database). For a long
# exploratory run: TOOLSCOUT_FUZZ_SCALE=20 pytest tests/sources/test_fuzz_sources.py (random, 20x).
SCALE = int(os.environ.get("TOOLSCOUT_FUZZ_SCALE", "1"))
FUZZ = {
    "deadline": None,
    "derandomize": SCALE == 1,
    "database": None,
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example],
}

# -- values ---------------------------------------------------------------------------

SURROGATES = st.sampled_from(["\ud800", "\udbff", "\udc00", "\udfff"])
ODD = st.sampled_from(
    ["\x00", "\x85", "\u2028", "\u2029", "\ufeff", "\u202e", "\U0001f600", "é", "\r", "\t", "\\", '"', "'",
     ":", "#", "&", "*", "!", "{", "}", "[", "]", "-", "|", ">", "%", "@", "`", "~", "\n"]
)
CLEAN_TEXT = st.text(alphabet=st.characters() | ODD, max_size=12)
TEXT = st.one_of(*[CLEAN_TEXT] * 4, st.text(alphabet=st.characters() | ODD | SURROGATES, min_size=1, max_size=12))
FIELD_NAMES = [
    "name", "description", "desc", "display", "category", "source", "tags", "platforms", "permission",
    "defer", "annotations", "meta", "available", "searchable", "required", "input_schema", "parameters",
    "inputSchema", "output_schema", "outputSchema", "type", "function", "properties", "items", "anyOf",
    "enum", "default", "title", "readOnlyHint", "read_only", "nullable", "response", "strict", "_meta",
    "$ref", "$schema", "$defs", "minimum", "maxLength", "pattern", "en", "zh-CN", "all",
]
KEYS = st.sampled_from(FIELD_NAMES) | TEXT


class HugeInt(int):
    """An integer too long for ``str()`` (CPython refuses > 4300 digits), shown safely when
    Hypothesis reports an example."""

    def __repr__(self) -> str:
        return f"HugeInt(<{self.bit_length()} bits>)"


NUMBERS = (
    st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.sampled_from([-(2**63), 2**64, 1e308, float("nan"), float("inf"), -0.0])
    | st.sampled_from([4301, 5000]).map(lambda n: HugeInt(10**n))
)
SCALARS = st.none() | st.booleans() | NUMBERS | TEXT | st.sampled_from(FIELD_NAMES)
JSON_VALUES = st.recursive(
    SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(KEYS, inner, max_size=4), max_leaves=16
)


class DeepList(list):  # type: ignore[type-arg]
    """Nested lists with a short repr (Hypothesis prints examples; a deep repr recurses)."""

    def __repr__(self) -> str:
        return f"_deep_list({self.depth})"


class DeepDict(dict):  # type: ignore[type-arg]
    def __repr__(self) -> str:
        return f"_deep_schema({self.depth})"


def _deep_list(n: int) -> Any:
    value: Any = []
    for _ in range(n - 1):
        value = [value]
    out = DeepList([value])
    out.depth = n  # type: ignore[attr-defined]
    return out


def _deep_schema(n: int) -> Any:
    value: Any = {"type": "string"}
    for _ in range(n - 1):
        value = {"type": "object", "properties": {"x": value}}
    out = DeepDict(type="object", properties={"x": value})
    out.depth = n  # type: ignore[attr-defined]
    return out


def _recursive() -> dict[str, Any]:
    loop: dict[str, Any] = {"type": "object"}
    loop["properties"] = {"self": loop}
    return loop


class _Opaque:
    pass


# What a Python caller (or a YAML !!tag) can hand over that JSON cannot carry; built fresh
# for each example, since mutations edit values in place.
PY_ONLY = st.sampled_from([
    lambda: {1, 2}, lambda: (1, 2), lambda: b"bytes", lambda: bytearray(b"x"), _Opaque,
    lambda: {(1, 2): "tuple key"}, lambda: {1: "int key"}, lambda: {None: 1}, _recursive,
]).map(lambda make: make())
DEEP = st.integers(min_value=900, max_value=2000).map(_deep_list) | st.integers(
    min_value=400, max_value=1500
).map(_deep_schema)
VALUES = st.one_of(*[JSON_VALUES] * 6, PY_ONLY, PY_ONLY, DEEP)  # one_of picks branches evenly


def _mutate(draw: Callable[[Any], Any], node: Any, values: st.SearchStrategy[Any], depth: int = 0) -> Any:
    """Walk down a random path and replace, delete or add something there."""
    if isinstance(node, dict) and node and depth < 12 and draw(st.booleans()):
        key = draw(st.sampled_from(sorted(node, key=repr)))
        node[key] = _mutate(draw, node[key], values, depth + 1)
        return node
    if isinstance(node, list) and node and depth < 12 and draw(st.booleans()):
        i = draw(st.integers(0, len(node) - 1))
        node[i] = _mutate(draw, node[i], values, depth + 1)
        return node
    action = draw(st.sampled_from(["replace", "delete", "add"]))
    if action == "delete" and isinstance(node, dict) and node:
        del node[draw(st.sampled_from(sorted(node, key=repr)))]
        return node
    if action == "add" and isinstance(node, dict):
        node[draw(KEYS)] = draw(values)
        return node
    if action == "add" and isinstance(node, list):
        node.append(draw(values))
        return node
    return draw(values)


@st.composite
def mutated(draw: Callable[[Any], Any], base: Any, values: st.SearchStrategy[Any] = VALUES) -> Any:
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        doc = _mutate(draw, doc, values)
    return doc


NASTY_TEXT = st.sampled_from(
    ["9" * 5000, "NaN", "-Infinity", "[" * 3000, "{" * 3000, "\\ud800", "\\udfff", '"', "'", "&a ", "*a",
     "<<: *a\n", "!!binary aGk=", "!!set {a, b}", "!!python/object:os.system", "!!float", "2024-01-01",
     "2001-12-14t21:59:43.10-05:00", "on", "null", "~", "\x00", "\ufeff", "---\n", "...\n", ": ", "\n- ",
     "{", "}", "[", "]", ",", "\t", "? ", "%YAML 1.1\n", "\n\n", "\\", "\U0001f600", "\udcff"]
)


@st.composite
def text_mutated(draw: Callable[[Any], Any], text: str) -> str:
    """Splice nasty tokens and random text into a valid file's text."""
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        cut = draw(st.integers(0, 8))
        insert = draw(NASTY_TEXT | TEXT)
        text = text[:at] + insert + text[at + cut :]
    return text


# -- checks ---------------------------------------------------------------------------


def assert_well_formed(tool: Tool) -> None:
    """A tool that made it in carries no time bomb: JSON-encodable, UTF-8, round-trips."""
    data = tool.to_dict()
    json.dumps(data, allow_nan=False, ensure_ascii=False).encode("utf-8")
    assert isinstance(tool.version, str) and isinstance(tool.summary(), str)
    assert isinstance(tool.input_schema, dict)
    data.pop("version")
    assert Tool.from_dict(data) == tool


def expect_tools_or_error(load: Callable[[], list[Tool]], error: type[ToolscoutError] = ToolscoutError) -> None:
    try:
        tools = load()
    except error as exc:
        assert isinstance(exc.message, str) and exc.message
        assert isinstance(exc.to_dict(), dict)
        event(f"refused: {type(exc).__name__}")
        return
    for tool in tools:
        assert_well_formed(tool)
    event("loaded: some tools" if tools else "loaded: no tools")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def _write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:  # a lone surrogate becomes invalid UTF-8 on disk: a read error is a fine outcome too
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
    return path


def _json_text(doc: Any, ascii_: bool) -> str | None:
    try:
        return json.dumps(doc, ensure_ascii=ascii_)
    except (TypeError, ValueError, RecursionError):  # not expressible as JSON text at all
        return None


def _load_all_ways(path: Path) -> None:
    expect_tools_or_error(lambda: Catalog().load(path), ConfigError)

    def skipping() -> list[Tool]:
        catalog = Catalog()
        tools = catalog.load(path, skip_invalid=True)
        assert all(isinstance(e, DeclarationError) for e in catalog.last_skipped)
        return tools

    expect_tools_or_error(skipping, ConfigError)


# -- 1. declaration files -------------------------------------------------------------

VALID_ENTRIES: dict[str, Any] = {
    "web_search": {
        "available": True,
        "searchable": True,
        "category": "information",
        "tags": ["web", "search"],
        "display": {"en": "Web Search", "zh-CN": "网页搜索"},
        "desc": {"en": "Search the web.", "zh-CN": "搜索网页"},
        "platforms": "all",
        "required": False,
        "input_schema": {
            "type": "object",
            "properties": {"query": {"type": "string", "description": "What"}, "limit": {"type": "integer", "minimum": 1}},
            "required": ["query"],
        },
        "annotations": {"read_only": True, "title": "Search"},
        "permission": "read",
        "defer": "automatic",
        "meta": {"owner": "team"},
    },
    "write_file": {
        "description": "Write a file.",
        "parameters": {"type": "object", "properties": {"path": {"type": "string"}}},
        "output_schema": {"type": "object"},
        "platforms": ["linux"],
        "defer": "never",
    },
}
VALID_LIST = [{"name": k, **v} for k, v in VALID_ENTRIES.items()]
VALID_DATA_LINES = [
    {"name": "weather_get", "description": "Weather.", "input_schema": {"type": "object"}, "source": "weather"},
    {"name": "stock_quote", "description": "Quote.", "input_schema": {}, "source": "finance", "orig": "x"},
]
DOCS = st.one_of(
    mutated(VALID_ENTRIES),
    mutated(VALID_LIST),
    st.dictionaries(KEYS, VALUES, max_size=4),
    st.lists(VALUES, max_size=4),
    VALUES,
)


@settings(max_examples=200 * SCALE, **FUZZ)
@given(doc=DOCS, ascii_=st.booleans(), suffix=st.sampled_from([".json", ".yaml", ".yaml-dump"]))
@example(doc={"a": {"description": "\ud800"}}, ascii_=True, suffix=".json")
@example(doc={"a": {"input_schema": {"type": "object", "properties": {"x": {"minimum": HugeInt(10**5000)}}}}},
         ascii_=True, suffix=".json")
@example(doc={"a": {"defer": ["never"], "annotations": {"1": True}}}, ascii_=True, suffix=".yaml")
def test_declaration_documents(workdir: Path, doc: Any, ascii_: bool, suffix: str) -> None:
    # JSON text is YAML too; ".yaml-dump" has PyYAML write it (tags for sets, bytes, tuples...).
    text = _yaml_text(doc) if suffix == ".yaml-dump" else _json_text(doc, ascii_)
    text = text or _json_text(doc, True) or _yaml_text(doc) or "null"
    _load_all_ways(_write(workdir / ("doc.json" if suffix == ".json" else "doc.yaml"), text))


def _yaml_text(doc: Any) -> str | None:
    try:
        return yaml.dump(doc, allow_unicode=True)
    except (yaml.YAMLError, RecursionError, TypeError, ValueError):
        return None


@settings(max_examples=100 * SCALE, **FUZZ)
@given(lines=st.lists(mutated(VALID_DATA_LINES[0]) | mutated(VALID_DATA_LINES[1]) | VALUES, max_size=4))
def test_declaration_jsonl_lines(workdir: Path, lines: list[Any]) -> None:
    texts = [t for line in lines if (t := _json_text(line, False)) is not None]
    _load_all_ways(_write(workdir / "lines.jsonl", "\n".join(texts)))


def _fixture_text(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


@settings(max_examples=250 * SCALE, **FUZZ)
@given(
    case=st.sampled_from(["tools_bilingual.yaml", "tools_list.json", "tools_data.jsonl"]).flatmap(
        lambda name: st.tuples(st.just(name), text_mutated(_fixture_text(name)))
    )
)
@example(case=("tools_bilingual.yaml", "a: &x\n  meta: {k: *x}\n"))
@example(case=("tools_bilingual.yaml", "a:\n  input_schema: {type: object, properties: {d: {default: 2020-01-01}}}\n"))
@example(case=("tools_bilingual.yaml", "a: &a [x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]\n"
                                        "c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]\n"
                                        "e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]\nf: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]\n"
                                        "g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]\nh: {meta: {x: *g}}\n"))
@example(case=("tools_list.json", '[{"name": "a", "meta": {"x": ' + "9" * 5000 + "}}]"))
@example(case=("tools_data.jsonl", '{"name": "a", "description": "\\udfff"}'))
def test_declaration_file_text_mutations(workdir: Path, case: tuple[str, str]) -> None:
    name, text = case
    _load_all_ways(_write(workdir / f"mut{Path(name).suffix}", text))


@st.composite
def with_duplicate_keys(draw: Callable[[Any], Any], doc: Any) -> str:
    """JSON text of ``doc`` in which some objects repeat a key (``json`` and YAML keep the
    last one silently; the top-level tool names must be refused)."""

    def dump(node: Any) -> str:
        if isinstance(node, dict) and node:
            items = [(json.dumps(str(k)), dump(v)) for k, v in node.items()]
            if draw(st.booleans()):
                again = items[draw(st.integers(0, len(items) - 1))][0]
                value = draw(st.none() | st.booleans() | st.integers(-9, 9) | TEXT | st.just({}))
                items.insert(draw(st.integers(0, len(items))), (again, json.dumps(value)))
            return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
        if isinstance(node, list):
            return "[" + ", ".join(dump(v) for v in node) + "]"
        return json.dumps(node)

    return dump(doc)


@settings(max_examples=100 * SCALE, **FUZZ)
@given(text=with_duplicate_keys(VALID_ENTRIES) | with_duplicate_keys(VALID_LIST),
       suffix=st.sampled_from([".json", ".yaml"]))
@example(text='{"a": {}, "b": {}, "a": {"description": "again"}}', suffix=".json")
@example(text="a: {}\nb: {}\na: {description: again}\n", suffix=".yaml")
def test_declaration_duplicate_keys(workdir: Path, text: str, suffix: str) -> None:
    _load_all_ways(_write(workdir / f"dup{suffix}", text))


def test_duplicate_tool_names_are_refused(workdir: Path) -> None:
    for suffix, text in ((".json", '{\n"a": {},\n"b": {},\n"a": {}\n}'), (".yaml", "a: {}\nb: {}\na: {}\n")):
        with pytest.raises(DeclarationError, match="duplicate tool name 'a'"):
            Catalog().load(_write(workdir / f"dup-names{suffix}", text))


@settings(max_examples=100 * SCALE, **FUZZ)
@given(blob=st.binary(max_size=400), suffix=st.sampled_from([".json", ".yaml", ".yml", ".jsonl", ".txt", ""]))
def test_declaration_binary_garbage(workdir: Path, blob: bytes, suffix: str) -> None:
    _load_all_ways(_write(workdir / f"blob{suffix}", blob))


def test_yaml_dates_and_plain_keys_stay_text(workdir: Path) -> None:
    path = _write(workdir / "dates.yaml", "a:\n  input_schema:\n    type: object\n    properties:\n"
                  "      on: {type: string, default: 2024-01-01}\n      1: {type: integer}\n")
    (tool,) = Catalog().load(path)
    assert tool.input_schema["properties"] == {"on": {"type": "string", "default": "2024-01-01"},
                                               "1": {"type": "integer"}}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("a: &x\n  meta: {k: *x}\n", "recursive"),
        ("a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
            f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcdef", "bcdefg", strict=True)
        ) + "h: {meta: {x: *g}}\n", "aliases expand"),
    ],
)
def test_yaml_alias_bombs_are_refused_quickly(workdir: Path, text: str, words: str) -> None:
    with pytest.raises(DeclarationError, match=words):
        Catalog().load(_write(workdir / "bomb.yaml", text))


@pytest.mark.parametrize("loader", ["libyaml", "python"])
def test_both_yaml_loaders_read_json_data(loader: str) -> None:
    from toolscout.sources._yaml import (  # reach-in: both loaders, which only the installed libyaml selects
        JsonLoader,
        PyJsonLoader,
        load_yaml,
    )

    cls = JsonLoader if loader == "libyaml" else PyJsonLoader
    assert load_yaml("on: 2024-01-01\n1: [x]\n<<: {m: 1}\n", loader_class=cls)[0] == {
        "on": "2024-01-01", "1": ["x"], "m": 1}
    for text, words in (("a: &x [*x]\n", "recursive"), ("[" * 5000, "nest"),
                        ("a: &a [x,x,x,x,x,x,x,x,x,x]\n" + "".join(
                            f"{c}: &{c} [{', '.join(['*' + p] * 10)}]\n" for p, c in zip("abcde", "bcdef", strict=True)
                        ), "aliases expand")):
        with pytest.raises(yaml.YAMLError, match=words):
            load_yaml(text, loader_class=cls)


# -- 2. definitions in host API dialects ----------------------------------------------

VALID_DEFINITIONS: list[Any] = [
    {"type": "function", "function": {"name": "oa", "description": "Chat.", "strict": True,
                                      "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}},
    {"type": "function", "name": "resp", "description": "Responses.", "parameters": {"type": "object"}},
    {"name": "anth", "description": "Anthropic.", "input_schema": {"type": "object", "properties": {}}},
    {"name": "mcp", "title": "MCP", "inputSchema": {"type": "object"}, "outputSchema": {"type": "object"},
     "annotations": {"readOnlyHint": True}, "_meta": {"k": "v"}},
    {"name": "gem", "description": "Gemini.", "parameters": {"type": "OBJECT", "properties": {
        "n": {"type": "INTEGER", "nullable": True}, "e": {"type": "STRING", "format": "enum", "enum": ["a"]}},
        "propertyOrdering": ["n", "e"]}, "response": {"type": "STRING"}},
    {"name": "data", "description": "Data.", "input_schema": {"type": "object"}, "source": "cat", "tags": ["t"]},
]


@settings(max_examples=300 * SCALE, **FUZZ)
@given(definitions=st.one_of(
    mutated(VALID_DEFINITIONS),
    st.lists(st.sampled_from(VALID_DEFINITIONS).flatmap(mutated), max_size=3),
    st.lists(st.dictionaries(KEYS, VALUES, max_size=5), max_size=3),
    VALUES,
))
@example(definitions=VALID_DEFINITIONS)
@example(definitions=None)
@example(definitions={"name": "one"})
@example(definitions=[{"name": "g", "parameters": {"type": "object", "properties": {"x": {"anyOf": 5, "nullable": True}}}}])
@example(definitions=[{"name": "t", "parameters": {"type": [{}]}}])
def test_definitions(definitions: Any) -> None:
    expect_tools_or_error(lambda: Catalog().add_definitions(definitions), ConfigError)


# -- 3. OpenAPI documents -------------------------------------------------------------

PETSTORE = yaml.safe_load(_fixture_text("petstore.yaml"))
REFS = st.sampled_from([
    {"$ref": "#/components/schemas/NewPet"},
    {"$ref": "#/components/schemas/Missing"},
    {"$ref": "#/paths"},
    {"$ref": "#"},
    {"$ref": ""},
    {"$ref": 5},
    {"$ref": "https://schemas.example.invalid/pet.json"},
    {"$ref": "http://127.0.0.1:9/x.yaml#/Pet"},
    {"$ref": "file:///etc/passwd"},
    {"$ref": "other.yaml#/components/schemas/Pet"},
    {"$ref": "#/components/schemas/Loop"},
]).map(dict)  # a fresh dict each time: mutations edit in place
OPENAPI_VALUES = st.one_of(VALUES, REFS, REFS)


def _with_loops(spec: Any) -> Any:
    if isinstance(spec, dict) and isinstance(spec.get("components"), dict):
        schemas = spec["components"].get("schemas")
        if isinstance(schemas, dict):
            schemas["Loop"] = {"$ref": "#/components/schemas/Loop"}
            schemas["A"] = {"type": "object", "properties": {"b": {"$ref": "#/components/schemas/B"}}}
            schemas["B"] = {"type": "object", "properties": {"a": {"$ref": "#/components/schemas/A"}}}
    return spec


class _NoNetwork(AssertionError):
    pass


def _refuse(*args: Any, **kwargs: Any) -> Any:
    raise _NoNetwork(f"network access attempted: {args!r}")


def _offline() -> Any:
    """Any connection attempt fails the test (a remote ``$ref`` must never be fetched)."""
    return mock.patch.object(socket.socket, "connect", _refuse), mock.patch.object(socket, "getaddrinfo", _refuse)


@settings(max_examples=300 * SCALE, **FUZZ)
@given(spec=st.one_of(
    mutated(PETSTORE, OPENAPI_VALUES).map(_with_loops),
    mutated(PETSTORE, OPENAPI_VALUES),
    st.dictionaries(st.sampled_from(["openapi", "info", "paths", "components"]) | KEYS, OPENAPI_VALUES, max_size=4),
    VALUES,
))
@example(spec={"info": [1], "paths": {"/a": {"get": {"operationId": 5, "tags": 5, "parameters": 5}}}})
@example(spec={"paths": {"/a": {"post": {"requestBody": {"content": {5: {}, "application/json": {
    "schema": {"type": "object", "properties": [1], "required": 5}}}}}}}})
@example(spec=PETSTORE)
@example(spec=None)
def test_openapi_specs(spec: Any) -> None:
    no_connect, no_resolve = _offline()
    with no_connect, no_resolve:
        expect_tools_or_error(lambda: [t for t, _ in tools_from_openapi(spec, base_url="https://api.example.test")],
                              DeclarationError)


@settings(max_examples=100 * SCALE, **FUZZ)
@given(text=text_mutated(_fixture_text("petstore.yaml")) | text_mutated(json.dumps(PETSTORE)) | st.binary(max_size=200),
       suffix=st.sampled_from([".yaml", ".json"]))
def test_openapi_files(workdir: Path, text: str | bytes, suffix: str) -> None:
    path = _write(workdir / f"spec{suffix}", text)
    no_connect, no_resolve = _offline()
    with no_connect, no_resolve:
        expect_tools_or_error(lambda: [t for t, _ in tools_from_openapi(path, base_url="https://api.example.test")],
                              DeclarationError)


def test_openapi_remote_refs_are_never_fetched() -> None:
    body = {"content": {"application/json": {"schema": {"$ref": "https://schemas.example.invalid/pet.json"}}}}
    spec = {"paths": {"/pets": {"post": {"operationId": "add", "requestBody": body}}}}
    no_connect, no_resolve = _offline()
    with no_connect, no_resolve:
        ((tool, _),) = tools_from_openapi(spec, base_url="https://api.example.test")
        assert tool.input_schema["properties"]["body"] == {"$ref": "https://schemas.example.invalid/pet.json"}
        param = {"$ref": "https://schemas.example.invalid/params.json#/limit"}
        with pytest.raises(DeclarationError, match="not a local reference"):
            tools_from_openapi({"paths": {"/pets": {"get": {"parameters": [param]}}}}, base_url="https://x.test")


# -- 4. the gateway config (servers.json) ---------------------------------------------

VALID_CONFIG: dict[str, Any] = {
    "mcpServers": {
        "fs": {"command": "npx", "args": ["-y", "server-fs"], "env": {"TOKEN": "secret-value-1"}, "prefix": "fs",
               "allow": ["read_*"], "deny": ["*delete*"], "alwaysLoad": ["read_file"], "timeout": 10,
               "defer": "never", "cwd": "/tmp"},
        "web": {"url": "https://user:pass-word@example.test/mcp?key=abcdefgh", "type": "http",
                "headers": {"Authorization": "Bearer abcdefghijk"}, "enabled": False, "connectTimeout": 5},
    },
    "maxRevealed": 32,
    "cache": "cache.db",
}


def _use_config(make: Callable[[], Any]) -> None:
    try:
        config = make()
    except ConfigError as exc:
        assert isinstance(exc.message, str) and exc.message
        event("refused")
        return
    event("loaded")
    for name, server in config.servers.items():
        assert isinstance(server.config_hash(), str)
        json.dumps(server.public()).encode("utf-8")
        server.redact(f"{name} failed")
        config.prefix_for(name)
        assert server.transport in ("stdio", "http")
    config.enabled()


@settings(max_examples=300 * SCALE, **FUZZ)
@given(data=st.one_of(
    mutated(VALID_CONFIG),
    st.dictionaries(st.sampled_from(["mcpServers", "servers", "maxRevealed", "cache"]) | KEYS, VALUES, max_size=4),
    VALUES,
))
@example(data=VALID_CONFIG)
@example(data={"mcpServers": {"a": {"command": "x", "extra": _deep_list(3000)}}})
@example(data={"mcpServers": {"a": {"command": "x", "extra": _recursive()}}})
@example(data={"mcpServers": {"a": {"command": "x\ud800", "env": {"K": "\udc00"}}}})
def test_gateway_config_data(data: Any) -> None:
    before = _json_text(data, True)
    _use_config(lambda: parse_config(data))
    assert _json_text(data, True) == before  # the caller's mapping is left as it was


@settings(max_examples=150 * SCALE, **FUZZ)
@given(text=st.one_of(
    text_mutated(json.dumps(VALID_CONFIG, indent=2)),
    st.binary(max_size=200),
    st.sampled_from([b"\xff\xfe{}", b"[" * 100_000, b'{"maxRevealed": ' + b"9" * 5000 + b"}", b"\xef\xbb\xbf{}"]),
))
def test_gateway_config_files(workdir: Path, text: str | bytes) -> None:
    path = _write(workdir / "servers.json", text)
    _use_config(lambda: load_config(path))


@settings(max_examples=100 * SCALE, **FUZZ)
@given(text=with_duplicate_keys(VALID_CONFIG))
def test_gateway_config_duplicate_keys(workdir: Path, text: str) -> None:
    _use_config(lambda: load_config(_write(workdir / "dup-servers.json", text)))


# -- 5. upstream tools/list entries ---------------------------------------------------

GOOD_RAW = {"name": "echo", "description": "Echo.", "inputSchema": {"type": "object", "properties": {
    "text": {"type": "string"}}, "required": ["text"]}, "outputSchema": {"type": "object"},
    "annotations": {"readOnlyHint": True, "title": "Echo"}, "title": "Echo"}
RAW_VALUES = st.one_of(VALUES, st.text(min_size=2000, max_size=5000), SURROGATES)


def _aggregator() -> Aggregator:
    config = parse_config({"mcpServers": {"up": {"command": "never-started", "prefix": "p",
                                                  "alwaysLoad": ["ec*"], "deny": ["hidden"]}}})
    return Aggregator(config, Catalog())


@settings(max_examples=200 * SCALE, **FUZZ)
@given(raws=st.lists(st.one_of(mutated(GOOD_RAW, RAW_VALUES), st.dictionaries(KEYS, RAW_VALUES, max_size=5),
                               RAW_VALUES), max_size=5),
       trusted=st.booleans())
@example(raws=[GOOD_RAW], trusted=False)
@example(raws=[{"name": "deep", "inputSchema": _deep_schema(1500)}], trusted=False)
@example(raws=[{"name": "loop", "inputSchema": _recursive()}], trusted=True)
@example(raws=[{"name": "sur", "description": "\ud800", "inputSchema": {"type": "object"}}], trusted=False)
def test_upstream_tool_lists(raws: list[Any], trusted: bool) -> None:
    agg = _aggregator()
    keeper = {**GOOD_RAW, "name": "zz_keeper"}
    good, skipped = agg._convert("up", [*raws, keeper], trusted=trusted)
    assert len(good) + len(skipped) == len(raws) + 1
    assert all(isinstance(reason, str) and reason for reason in skipped)
    assert "p_zz_keeper" in [tool.name for tool, _ in good]  # one bad entry costs nothing else
    for tool, _ in good:
        assert_well_formed(tool)
    event(f"kept {len(good) - 1} of {len(raws)}")
    kept = agg._install("up", [*raws, keeper], trusted=trusted)
    assert keeper in kept and agg.catalog.get("p_zz_keeper") is not None


# -- 6. Tool(...) and Tool.from_dict --------------------------------------------------

def _or_anything(plausible: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly a value of the right type (odd contents allowed), sometimes anything."""
    return st.one_of(plausible, plausible, plausible, VALUES)


SCHEMAS = st.dictionaries(KEYS, JSON_VALUES, max_size=4)
TEXT_MAPS = st.dictionaries(TEXT, TEXT, max_size=3)
TOOL_KWARGS = st.fixed_dictionaries({}, optional={
    "description": _or_anything(TEXT), "input_schema": _or_anything(SCHEMAS),
    "output_schema": _or_anything(SCHEMAS), "source": _or_anything(TEXT), "source_id": _or_anything(TEXT),
    "original_name": _or_anything(TEXT), "origin": _or_anything(TEXT), "category": _or_anything(TEXT),
    "tags": _or_anything(st.lists(TEXT, max_size=3)),
    "annotations": _or_anything(st.builds(Annotations, title=TEXT | st.none(), read_only=st.booleans() | st.none())
                                | st.dictionaries(KEYS, SCALARS, max_size=3)),
    "permission": _or_anything(st.sampled_from(["read", "write", "dangerous"])), "searchable": st.booleans(),
    "available": st.booleans(), "platforms": _or_anything(st.lists(TEXT, max_size=3)),
    "defer": _or_anything(st.sampled_from(["never", "automatic", "always"])), "display": _or_anything(TEXT_MAPS),
    "descriptions": _or_anything(TEXT_MAPS), "meta": _or_anything(st.dictionaries(KEYS, JSON_VALUES, max_size=3)),
})


@settings(max_examples=250 * SCALE, **FUZZ)
@given(name=_or_anything(TEXT), kwargs=TOOL_KWARGS)
def test_tool_construction(name: Any, kwargs: dict[str, Any]) -> None:
    expect_tools_or_error(lambda: [Tool(name, **kwargs)], DeclarationError)


VALID_RECORD = Tool(
    "rec", "A record.", {"type": "object", "properties": {"a": {"type": "string"}}}, output_schema={"type": "object"},
    source="file", source_id="f.yaml", original_name="orig", category="c", tags=["t"],
    annotations=Annotations(read_only=True, title="T"), permission="read", platforms=["linux"], defer="never",
    display={"en": "Rec"}, descriptions={"en": "A record."}, meta={"k": [1, 2]},
).to_dict()


@settings(max_examples=300 * SCALE, **FUZZ)
@given(data=mutated(VALID_RECORD) | st.dictionaries(KEYS, VALUES, max_size=6) | VALUES)
@example(data=VALID_RECORD)
@example(data={})
@example(data={"name": "a", "annotations": "x"})
def test_tool_from_dict(data: Any) -> None:
    expect_tools_or_error(lambda: [Tool.from_dict(data)], DeclarationError)
