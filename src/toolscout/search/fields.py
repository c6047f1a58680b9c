"""What a tool's text is, field by field: the fields keyword search indexes.

A tool's name (with its upstream name and title), description, parameter names, parameter
text (descriptions, titles, enum values), labels (category, tags, source) and its text in
other languages (``display``/``descriptions``). The BM25F weights of each field live with
the scoring (:mod:`toolscout.search.keyword`); this module only extracts text.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..model import Tool

__all__ = ["FIELDS", "tool_fields"]

FIELDS: tuple[str, ...] = ("name", "description", "param_names", "param_text", "labels", "i18n")
_MAX_ENUM = 20


def _param_text(sub: Any) -> str:
    """A property's description, title and (string) enum values: what it accepts, in words."""
    if not isinstance(sub, dict):
        return ""
    parts = [sub.get(k) for k in ("title", "description")]
    enum = sub.get("enum")
    if isinstance(enum, list):
        parts.extend(v for v in enum[:_MAX_ENUM] if isinstance(v, str))
    return " ".join(p for p in parts if isinstance(p, str))


def _schema_params(schema: Any, depth: int = 0) -> Iterable[tuple[str, str]]:
    """(name, text) of the schema's properties, one nested level deep."""
    if not isinstance(schema, dict):
        return
    props = schema.get("properties")
    if isinstance(props, dict):
        for key, sub in props.items():
            yield str(key), _param_text(sub)
            if depth == 0 and isinstance(sub, dict):
                yield from _schema_params(sub, depth + 1)
                yield from _schema_params(sub.get("items"), depth + 1)


def _params(schema_json: str) -> tuple[str, str]:
    """The parameter names and the parameter text of a schema (its JSON text)."""
    params: list[tuple[str, str]] = []
    if '"properties":{"' in schema_json:  # canonical JSON: skip parsing empty schemas
        try:
            params = list(_schema_params(json.loads(schema_json)))
        except ValueError:
            params = []
    return " ".join(n for n, _ in params), " ".join(d for _, d in params)


def tool_fields(tool: Tool, schemas: dict[str, tuple[str, str]] | None = None) -> dict[str, str]:
    """The text of each indexed field of ``tool``. ``schemas`` memoises the parameter
    fields by schema text (tools often share a schema: it is then parsed once)."""
    schema = tool.schema_json
    if schemas is None:
        names, text = _params(schema)
    else:
        found = schemas.get(schema)
        names, text = found if found is not None else schemas.setdefault(schema, _params(schema))
    title = tool.annotations.title if tool.annotations and tool.annotations.title else ""
    labels = [tool.category or "", *tool.tags, tool.source_id or ""]
    return {
        "name": f"{tool.name} {tool.original_name or ''} {title}",
        "description": tool.description,
        "param_names": names,
        "param_text": text,
        "labels": " ".join(labels),
        "i18n": " ".join([*tool.display.values(), *tool.descriptions.values()]),
    }
