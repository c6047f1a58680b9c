"""Checking a declared input/output schema: a valid JSON Schema describing an object.

``jsonschema``'s meta-schema validation costs about 2 ms per schema (draft 2020-12), i.e.
half a minute for a 13k-tool file, so the keywords tool schemas actually use are checked
here directly (shape and type of each keyword's value, with the JSON pointer of the
problem); unknown keywords are annotations and ignored, as JSON Schema says. A schema that
declares ``$schema`` or uses a rarer standard keyword (``dependentRequired``...) also goes
through ``jsonschema``'s own
``check_schema``, for its declared ``$schema`` or, failing that, any of drafts 2020-12,
7 and 4 (real catalogs still carry draft-4 booleans such as ``exclusiveMinimum: true``).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

__all__ = ["schema_problem"]

_TYPES = {"string", "integer", "number", "boolean", "array", "object", "null"}
_SCHEMA = ("items", "additionalProperties", "additionalItems", "not", "contains", "propertyNames",
           "if", "then", "else", "unevaluatedProperties", "unevaluatedItems")
_SCHEMA_MAP = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
_SCHEMA_LIST = ("anyOf", "allOf", "oneOf", "prefixItems")
_COUNTS = ("minLength", "maxLength", "minItems", "maxItems", "minProperties", "maxProperties",
           "minContains", "maxContains")
_NUMBERS = ("minimum", "maximum")
_STRINGS = ("description", "title", "$ref", "$id", "$schema", "$comment", "format", "pattern",
            "$anchor", "$dynamicRef", "$dynamicAnchor", "contentMediaType", "contentEncoding")
_BOOLS = ("uniqueItems", "deprecated", "readOnly", "writeOnly", "nullable")
_FREE = ("default", "const", "example", "examples", "enum", "required", "type", "multipleOf",
         "exclusiveMinimum", "exclusiveMaximum")
# Standard keywords not checked here: their presence sends the schema to jsonschema.
_DEFERRED = frozenset(("dependencies", "dependentRequired", "contentSchema", "$vocabulary",
                       "$recursiveRef", "$recursiveAnchor"))
_KNOWN = frozenset((*_SCHEMA, *_SCHEMA_MAP, *_SCHEMA_LIST, *_COUNTS, *_NUMBERS, *_STRINGS, *_BOOLS, *_FREE))
_DRAFTS = ("https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#",
           "http://json-schema.org/draft-04/schema#")


class _Bad(Exception):
    pass


def schema_problem(schema: Any, *, require_object: bool = True) -> str | None:
    """Why ``schema`` is not acceptable as a tool schema; None when it is.

    ``{}`` means "no parameters" and is accepted (callers normalise it).
    """
    if not isinstance(schema, Mapping):
        return f"must be a JSON Schema object, not {type(schema).__name__}"
    if not schema:
        return None
    unknown: list[bool] = []
    try:
        _check(schema, "", unknown)
    except _Bad as exc:
        return f"is not a valid JSON Schema: {exc}"
    except RecursionError:
        return "nests too deeply"
    if unknown or "$schema" in schema:
        try:
            problem = _full_check(schema)
        except RecursionError:
            return "nests too deeply"
        if problem:
            return f"is not a valid JSON Schema: {problem}"
    if require_object and schema.get("type", "object" if "properties" in schema else None) != "object":
        return "must describe an object (\"type\": \"object\") at the top"
    return None


def _number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool)


def _check(node: Any, path: str, unknown: list[bool]) -> None:
    if isinstance(node, bool):
        return
    if not isinstance(node, Mapping):
        raise _Bad(f"a schema must be an object or a boolean (at {path or '/'})")
    for key, v in node.items():
        at = f"{path}/{key}"
        if key not in _KNOWN:  # other keywords are annotations (x-..., vendor keys): ignored
            if key in _DEFERRED:
                unknown.append(True)
        elif key == "type":
            names = v if isinstance(v, list) else [v]
            bad = [t for t in names if not isinstance(t, str) or t not in _TYPES]
            if bad or not names or (isinstance(v, list) and len(set(map(str, v))) != len(v)):
                raise _Bad(f"{bad[0] if bad else v!r} is not a valid type (at {at})")
        elif key in _SCHEMA:
            if key in ("items", "additionalItems") and isinstance(v, list):
                for i, s in enumerate(v):
                    _check(s, f"{at}/{i}", unknown)
            else:
                _check(v, at, unknown)
        elif key in _SCHEMA_MAP:
            if not isinstance(v, Mapping):
                raise _Bad(f"{key} must be an object (at {at})")
            for k, s in v.items():
                _check(s, f"{at}/{k}", unknown)
        elif key in _SCHEMA_LIST:
            if not isinstance(v, list) or not v:
                raise _Bad(f"{key} must be a non-empty array (at {at})")
            for i, s in enumerate(v):
                _check(s, f"{at}/{i}", unknown)
        elif key in _COUNTS:
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise _Bad(f"{key} must be a non-negative integer (at {at})")
        elif key in _NUMBERS:
            if not _number(v):
                raise _Bad(f"{key} must be a number (at {at})")
        elif key in ("exclusiveMinimum", "exclusiveMaximum"):
            if not (_number(v) or isinstance(v, bool)):  # a boolean is draft 4
                raise _Bad(f"{key} must be a number (at {at})")
        elif key == "multipleOf":
            if not _number(v) or v <= 0:
                raise _Bad(f"multipleOf must be a positive number (at {at})")
        elif key in _STRINGS:
            if not isinstance(v, str):
                raise _Bad(f"{key} must be a string (at {at})")
        elif key in _BOOLS:
            if not isinstance(v, bool):
                raise _Bad(f"{key} must be true or false (at {at})")
        elif key == "required":
            if isinstance(v, bool):  # draft 3 style, inside a property
                continue
            if not isinstance(v, list) or not all(isinstance(r, str) for r in v):
                raise _Bad(f"required must be an array of strings (at {at})")
        elif key == "enum" and not isinstance(v, list):
            raise _Bad(f"enum must be an array (at {at})")
        elif key in ("examples",) and not isinstance(v, list):
            raise _Bad(f"examples must be an array (at {at})")


@lru_cache(maxsize=8)
def _meta_validator(uri: str) -> Any:
    # Not at the top: jsonschema (~40 modules) is for the rare schema the checks above
    # defer, and the serve path must not load it (tests/cli/test_startup.py).
    from jsonschema import validators

    cls = validators.validator_for({"$schema": uri})
    return cls(cls.META_SCHEMA)


def _full_check(schema: Mapping[str, Any]) -> str | None:
    declared = schema.get("$schema")
    uris = (declared,) if isinstance(declared, str) and declared else _DRAFTS
    first: str | None = None
    from jsonschema import exceptions  # see _meta_validator

    for uri in uris:
        error = exceptions.best_match(_meta_validator(uri).iter_errors(schema))
        if error is None:
            return None
        where = "/".join(str(p) for p in error.absolute_path)
        first = first or error.message + (f" (at /{where})" if where else "")
    return first
