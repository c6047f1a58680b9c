"""``$ref`` resolution inside one JSON Schema, for formats that must inline references."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["local_defs", "resolve_ref"]


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
