"""Read an evaluation set: ``DIR/tools.jsonl`` and ``DIR/queries.jsonl``.

The format is the one of the public benchmark data toolscout is measured on: a tool line has
``name``, ``description``, ``input_schema``, ``source`` (its server) and, where the data has
it, ``server_description``; a query line has ``id``,
``query``, ``relevant`` (tool names), optional ``relevant_groups`` (lists of equivalent
tools that count as one hit) and ``split``. Extra fields are ignored. A malformed line
raises :class:`~toolscout.errors.DeclarationError` naming the file, line and field.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DeclarationError
from ..model import Tool

__all__ = ["EvalQuery", "load_queries", "load_tools", "load_usage_log"]


@dataclass(frozen=True, slots=True)
class EvalQuery:
    id: str
    query: str
    relevant: tuple[str, ...]
    groups: tuple[frozenset[str], ...] = field(default=())
    split: str | None = None

    def relevant_groups(self) -> tuple[frozenset[str], ...]:
        """Each group counts once; without explicit groups every relevant name is a group."""
        return self.groups or tuple(frozenset([n]) for n in dict.fromkeys(self.relevant))


def _lines(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    if not path.is_file():
        raise DeclarationError("file not found", file=str(path))
    with path.open(encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                obj = json.loads(raw)
            except json.JSONDecodeError as exc:
                raise DeclarationError(f"invalid JSON: {exc.msg}", file=str(path), line=lineno) from None
            if not isinstance(obj, dict):
                raise DeclarationError("expected a JSON object", file=str(path), line=lineno)
            yield lineno, obj


def _str(obj: dict[str, Any], key: str, path: Path, line: int, *, required: bool = True) -> str:
    value = obj.get(key)
    if value is None and not required:
        return ""
    if isinstance(value, int | float) and not isinstance(value, bool) and key == "id":
        return str(value)
    if not isinstance(value, str) or (required and not value.strip()):
        raise DeclarationError("must be a non-empty string", file=str(path), line=line, field=key)
    return value


def _tool(obj: dict[str, Any], path: Path, line: int) -> Tool:
    """One data line as a Tool, built directly rather than through the strict definitions
    loader: public benchmark data carries older-draft schemas (``exclusiveMinimum: true``)
    that loader rejects, and search quality does not depend on schema validity."""
    name = _str(obj, "name", path, line)
    description = _str(obj, "description", path, line, required=False)
    schema = obj.get("input_schema") or None
    if schema is not None and not isinstance(schema, dict):
        raise DeclarationError("must be a JSON object", file=str(path), line=line, field="input_schema")
    source = obj.get("source")
    category = source if isinstance(source, str) and source else None
    about = obj.get("server_description")  # the server's own words, where the data has them
    meta = {"server_description": about} if isinstance(about, str) and about.strip() else None
    return Tool(name, description, schema, source="dataset", category=category, meta=meta)


def load_tools(path: str | Path) -> list[Tool]:
    """Tools of a ``tools.jsonl`` file; a duplicate name is an error naming both lines."""
    p = Path(path)
    tools: list[Tool] = []
    seen: dict[str, int] = {}
    for line, obj in _lines(p):
        tool = _tool(obj, p, line)
        if tool.name in seen:
            raise DeclarationError(
                f"duplicate tool name '{tool.name}' (first on line {seen[tool.name]})",
                file=str(p), line=line, field="name",
            )
        seen[tool.name] = line
        tools.append(tool)
    return tools


def _names(value: Any, path: Path, line: int, key: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DeclarationError("must be a list of tool names", file=str(path), line=line, field=key)
    return tuple(value)


def load_queries(path: str | Path) -> list[EvalQuery]:
    p = Path(path)
    out: list[EvalQuery] = []
    for line, obj in _lines(p):
        relevant = _names(obj.get("relevant"), p, line, "relevant")
        groups_raw = obj.get("relevant_groups")
        groups: tuple[frozenset[str], ...] = ()
        if groups_raw is not None:
            if not isinstance(groups_raw, list):
                raise DeclarationError("must be a list of lists", file=str(p), line=line, field="relevant_groups")
            groups = tuple(frozenset(_names(g, p, line, "relevant_groups")) for g in groups_raw)
        split = obj.get("split")
        out.append(
            EvalQuery(
                id=_str(obj, "id", p, line),
                query=_str(obj, "query", p, line, required=False),
                relevant=relevant,
                groups=tuple(g for g in groups if g),
                split=split if isinstance(split, str) else None,
            )
        )
    return out


def load_usage_log(path: str | Path) -> list[dict[str, Any]]:
    """A usage log for ``eval --learn``: ``{"query", "called": [names], "session"?}`` per
    line (a fixed contract, see docs/evaluation.md)."""
    p = Path(path)
    out: list[dict[str, Any]] = []
    for line, obj in _lines(p):
        query = _str(obj, "query", p, line)
        called = _names(obj.get("called"), p, line, "called")
        session = obj.get("session")
        if session is not None and not isinstance(session, str | int):
            raise DeclarationError("must be a string", file=str(p), line=line, field="session")
        out.append({"query": query, "called": list(called), "session": None if session is None else str(session)})
    return out
