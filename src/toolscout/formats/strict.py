"""OpenAI strict mode (Structured Outputs for function calling): when a schema qualifies.

With ``strict: true`` OpenAI constrains decoding to the schema, but only accepts a subset of
JSON Schema. The rule toolscout applies (conservative, so a ``strict: true`` it emits is
never rejected):

* the root is ``type: object``; every object lists ``properties``, sets
  ``additionalProperties: false`` and lists *every* property in ``required``;
* only these keywords appear: ``type properties required additionalProperties items enum
  const anyOf $ref $defs definitions description title`` plus the constraints OpenAI
  documents as supported (``pattern format minimum maximum exclusiveMinimum
  exclusiveMaximum multipleOf minItems maxItems``);
* at most 10 levels of object nesting and 5000 properties in all.

:func:`strict_refusal` says why a schema does not qualify as is. :func:`openai_strict`
converts one when it can: it closes open objects, makes optional properties required
*and nullable* (so the model passes ``null`` for "not given") and drops annotation-only
keywords (``default``, ``examples``, ``$schema``, vendor ``x-...``). It refuses free-form
objects (``additionalProperties`` true or a schema), ``allOf``/``oneOf``/``not``/conditionals
and the other constraining keywords strict mode rejects (``minLength``, ``uniqueItems``...). A caller that sends a converted schema must drop the
``null`` arguments before validating against the original schema.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["MAX_DEPTH", "MAX_PROPERTIES", "openai_strict", "openai_strict_reason", "strict_refusal"]

MAX_DEPTH = 10
MAX_PROPERTIES = 5000
_STRUCTURE = {"type", "properties", "required", "additionalProperties", "items", "enum", "const",
              "anyOf", "$ref", "$defs", "definitions", "description", "title"}
_CONSTRAINTS = {"pattern", "format", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum",
                "multipleOf", "minItems", "maxItems"}
_ALLOWED = _STRUCTURE | _CONSTRAINTS
# Standard keywords that constrain values but strict mode rejects: converting refuses them.
# Any other keyword (default, examples, $schema, vendor x-...) carries no constraint and is
# dropped by the conversion.
_UNSUPPORTED = {"allOf", "oneOf", "not", "if", "then", "else", "patternProperties",
                "dependentSchemas", "dependentRequired", "dependencies", "propertyNames",
                "unevaluatedProperties", "unevaluatedItems", "prefixItems", "contains",
                "minContains", "maxContains", "uniqueItems", "minLength", "maxLength",
                "minProperties", "maxProperties", "additionalItems", "$dynamicRef", "$recursiveRef"}


class _Refused(Exception):
    pass


def _refusal(schema: Mapping[str, Any], *, convert: bool) -> str | None:
    try:
        _walk(schema, convert=convert, path="#", depth=0, counter=[0], root=True)
    except _Refused as exc:
        return str(exc)
    except RecursionError:
        return "#: the schema nests too deeply"
    return None


def strict_refusal(schema: Mapping[str, Any]) -> str | None:
    """Why ``schema`` cannot be sent with ``strict: true`` unchanged; None when it can."""
    return _refusal(schema, convert=False)


def openai_strict(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """A strict-mode version of ``schema``, or None when it cannot be made strict
    (:func:`openai_strict_reason` says why)."""
    try:
        return _walk(schema, convert=True, path="#", depth=0, counter=[0], root=True)
    except (_Refused, RecursionError):
        return None


def openai_strict_reason(schema: Mapping[str, Any]) -> str | None:
    """Why :func:`openai_strict` returns None for ``schema`` (None when it converts)."""
    return _refusal(schema, convert=True)


def _walk(node: Any, *, convert: bool, path: str, depth: int, counter: list[int], root: bool = False) -> Any:
    if not isinstance(node, Mapping):
        raise _Refused(f"{path}: a schema must be an object")
    if root and node.get("type") != "object":
        raise _Refused("#: the root must be type 'object'")
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _ALLOWED:
            out[key] = value
        elif convert and key not in _UNSUPPORTED:
            continue
        else:
            raise _Refused(f"{path}: keyword '{key}' is not supported in strict mode")
    types = out.get("type")
    is_object = types == "object" or (isinstance(types, list) and "object" in types) or "properties" in out
    if is_object:
        depth += 1
        if depth > MAX_DEPTH:
            raise _Refused(f"{path}: more than {MAX_DEPTH} levels of nested objects")
        props = out.get("properties")
        if not isinstance(props, Mapping):
            if convert and props is None and (root or out.get("additionalProperties") is False):
                props = {}
            else:
                raise _Refused(f"{path}: an object without 'properties' (free-form) cannot be strict")
        extra = out.get("additionalProperties", None if convert else "missing")
        if extra == "missing":
            raise _Refused(f"{path}: additionalProperties must be set to false")
        if extra not in (False, None):
            raise _Refused(f"{path}: additionalProperties must be false (free-form objects cannot be strict)")
        required = list(out.get("required") or [])
        if not convert and set(required) != set(props):
            missing = sorted(set(props) - set(required))
            raise _Refused(f"{path}: every property must be required (optional: {', '.join(missing)})")
        counter[0] += len(props)
        if counter[0] > MAX_PROPERTIES:
            raise _Refused(f"more than {MAX_PROPERTIES} properties in all")
        new_props: dict[str, Any] = {}
        for name, sub in props.items():
            converted = _walk(sub, convert=convert, path=f"{path}/properties/{name}", depth=depth, counter=counter)
            if convert and name not in required:
                converted = _nullable(converted)
            new_props[name] = converted
        out["properties"] = new_props
        out["required"] = list(props)
        out["additionalProperties"] = False
    if "items" in out:
        if not isinstance(out["items"], Mapping):
            raise _Refused(f"{path}/items: tuple-style items are not supported in strict mode")
        out["items"] = _walk(out["items"], convert=convert, path=f"{path}/items", depth=depth, counter=counter)
    if "anyOf" in out:
        if root:
            raise _Refused("#: the root must not be anyOf")
        out["anyOf"] = [
            _walk(s, convert=convert, path=f"{path}/anyOf/{i}", depth=depth, counter=counter)
            for i, s in enumerate(out["anyOf"])
        ]
    for key in ("$defs", "definitions"):
        if key in out:
            out[key] = {
                n: _walk(s, convert=convert, path=f"{path}/{key}/{n}", depth=0, counter=counter)
                for n, s in out[key].items()
            }
    return out


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """Let ``schema`` also accept null (how strict mode spells "optional")."""
    types = schema.get("type")
    if "$ref" in schema or (types is None and "anyOf" not in schema):
        return {"anyOf": [schema, {"type": "null"}]}
    if "anyOf" in schema:
        if not any(s.get("type") == "null" for s in schema["anyOf"]):
            schema = {**schema, "anyOf": [*schema["anyOf"], {"type": "null"}]}
        return schema
    if isinstance(types, str) and types != "null":
        schema = {**schema, "type": [types, "null"]}
    elif isinstance(types, list) and "null" not in types:
        schema = {**schema, "type": [*types, "null"]}
    if "enum" in schema and None not in schema["enum"]:
        schema["enum"] = [*schema["enum"], None]
    return schema
