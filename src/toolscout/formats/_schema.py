"""JSON Schema helpers shared by the formats: walking, ``$ref`` resolution, keyword stripping.

Formats never mutate a tool: every helper here works on a fresh copy of the schema
(``Tool.input_schema`` already returns one) and returns new dicts.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["SUBSCHEMA_KEYS", "SUBSCHEMA_LIST_KEYS", "SUBSCHEMA_MAP_KEYS", "local_defs", "resolve_ref"]

# Keywords whose value is a schema, a list of schemas, or a name -> schema mapping.
SUBSCHEMA_KEYS = ("items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else")
SUBSCHEMA_LIST_KEYS = ("anyOf", "oneOf", "allOf", "prefixItems")
SUBSCHEMA_MAP_KEYS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")


def local_defs(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Every definition a local ``$ref`` may point at (``$defs`` and draft-07 ``definitions``)."""
    out: dict[str, Any] = {}
    for key in ("definitions", "$defs"):
        defs = schema.get(key)
        if isinstance(defs, Mapping):
            out.update({f"#/{key}/{name}": value for name, value in defs.items()})
    return out


def resolve_ref(ref: str, root: Mapping[str, Any], defs: Mapping[str, Any]) -> Any | None:
    """Resolve a local JSON pointer (``#/$defs/X`` or any ``#/a/b``); None when it is not local."""
    if ref in defs:
        return defs[ref]
    if not ref.startswith("#"):
        return None
    node: Any = root
    for part in ref[1:].split("/")[1:] if ref != "#" else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, Mapping) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return None
    return node


def map_subschemas(schema: Mapping[str, Any], fn: Callable[[Any], Any]) -> dict[str, Any]:
    """Copy ``schema`` with ``fn`` applied to each direct subschema."""
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in SUBSCHEMA_KEYS and isinstance(value, Mapping):
            out[key] = fn(value)
        elif key in SUBSCHEMA_LIST_KEYS and isinstance(value, list):
            out[key] = [fn(v) if isinstance(v, Mapping) else v for v in value]
        elif key in SUBSCHEMA_MAP_KEYS and isinstance(value, Mapping):
            out[key] = {k: fn(v) if isinstance(v, Mapping) else v for k, v in value.items()}
        elif key == "items" and isinstance(value, list):
            out[key] = [fn(v) if isinstance(v, Mapping) else v for v in value]
        else:
            out[key] = value
    return out
