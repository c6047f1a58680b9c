"""A small docstring parser: the summary/body, and per-parameter descriptions.

Understands the three common styles, so a function's docs become its tool docs:

* Google: ``Args:`` (or ``Arguments:``/``Parameters:``) then ``name (type): text``;
* NumPy: ``Parameters`` over a dashed line, then ``name : type`` and indented text;
* Sphinx: ``:param name: text`` (or ``:param type name: text``).

The description is everything before the first section (``Args:``, ``Returns``,
``:param``...), so parameter lists are never sent twice.
"""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

__all__ = ["ParsedDocstring", "parse_docstring"]

_GOOGLE_PARAMS = {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments",
                  "other parameters"}
_GOOGLE_OTHER = {"returns", "return", "yields", "yield", "raises", "raise", "examples", "example",
                 "attributes", "notes", "note", "see also", "references", "warns", "warnings",
                 "todo"}
_SECTION = re.compile(r"^\s*([A-Za-z][A-Za-z ]*?)\s*:\s*$")
_NUMPY_RULE = re.compile(r"^\s*-{3,}\s*$")
_GOOGLE_ITEM = re.compile(r"^\s*\*{0,2}([A-Za-z_][\w]*)\s*(?:\(([^)]*)\))?\s*:\s*(.*)$")
_NUMPY_ITEM = re.compile(r"^([A-Za-z_][\w]*(?:\s*,\s*[A-Za-z_][\w]*)*)\s*(?::\s*(.*))?$")
_SPHINX = re.compile(r"^\s*:(param|parameter|arg|argument|key|keyword)\s+(?:[^:]*\s)?([A-Za-z_]\w*)\s*:\s*(.*)$")
_SPHINX_ANY = re.compile(r"^\s*:[a-zA-Z]+[^:]*:")


@dataclass(slots=True)
class ParsedDocstring:
    description: str = ""
    params: dict[str, str] = field(default_factory=dict)


def parse_docstring(doc: str | None) -> ParsedDocstring:
    if not doc:
        return ParsedDocstring()
    lines = inspect.cleandoc(doc).splitlines()
    out = ParsedDocstring()
    body_end = len(lines)
    i = 0
    while i < len(lines):
        line = lines[i]
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        header = _SECTION.match(line)
        if _NUMPY_RULE.match(nxt) and line.strip():
            body_end = min(body_end, i)
            name = line.strip().lower()
            i = _numpy_section(lines, i + 2, out.params if name in _GOOGLE_PARAMS else None)
            continue
        if header and header.group(1).lower() in _GOOGLE_PARAMS | _GOOGLE_OTHER and not line.startswith(" "):
            body_end = min(body_end, i)
            params = out.params if header.group(1).lower() in _GOOGLE_PARAMS else None
            i = _google_section(lines, i + 1, params)
            continue
        sphinx = _SPHINX.match(line)
        if sphinx or _SPHINX_ANY.match(line):
            body_end = min(body_end, i)
            text = [sphinx.group(3).strip()] if sphinx else []
            i += 1
            while i < len(lines) and lines[i].startswith((" ", "\t")) and not _SPHINX_ANY.match(lines[i]):
                text.append(lines[i].strip())
                i += 1
            if sphinx:
                out.params[sphinx.group(2)] = " ".join(t for t in text if t)
            continue
        i += 1
    out.description = "\n".join(lines[:body_end]).strip()
    return out


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _google_section(lines: list[str], i: int, params: dict[str, str] | None) -> int:
    """Read the indented block after a Google header; return the index after it."""
    base: int | None = None
    current: str | None = None
    while i < len(lines):
        line = lines[i]
        if line.strip() and _indent(line) == 0:
            break
        if line.strip():
            if base is None:
                base = _indent(line)
            item = _GOOGLE_ITEM.match(line) if _indent(line) == base else None
            if item and params is not None:
                current = item.group(1)
                params[current] = item.group(3).strip()
            elif current and params is not None:
                params[current] = f"{params[current]} {line.strip()}".strip()
        i += 1
    return i


def _numpy_section(lines: list[str], i: int, params: dict[str, str] | None) -> int:
    current: list[str] = []
    while i < len(lines):
        line = lines[i]
        if line.strip() and i + 1 < len(lines) and _NUMPY_RULE.match(lines[i + 1]):
            break
        if line.strip() and _indent(line) == 0:
            item = _NUMPY_ITEM.match(line.strip())
            current = [n.strip() for n in item.group(1).split(",")] if item else []
            if params is not None:
                for name in current:
                    params[name] = ""
        elif line.strip() and params is not None:
            for name in current:
                params[name] = f"{params[name]} {line.strip()}".strip()
        i += 1
    return i
