"""Line numbers for declaration entries, so errors point at the real place in the file.

YAML uses the node marks from ``yaml.compose``; JSON uses a small scanner that tracks
strings and nesting depth (``json`` itself keeps no positions).
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import dataclass, field

import yaml

__all__ = ["EntryPositions", "json_positions", "yaml_positions"]


@dataclass(slots=True)
class EntryPositions:
    """Where each top-level entry starts, and where its fields are (1-based lines).

    ``keys`` lists the top-level mapping keys in file order, duplicates included.
    """

    entries: list[int] = field(default_factory=list)
    fields: list[dict[str, int]] = field(default_factory=list)
    keys: list[str] = field(default_factory=list)


def yaml_positions(text: str | None = None, *, root: yaml.Node | None = None) -> EntryPositions:
    """From the text, or from its already composed node tree (``root``)."""
    if text is not None:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    out = EntryPositions()
    if isinstance(root, yaml.MappingNode):
        pairs = [(k, v) for k, v in root.value]
        for key, value in pairs:
            out.keys.append(str(key.value))
            out.entries.append(key.start_mark.line + 1)
            out.fields.append(_yaml_fields(value))
    elif isinstance(root, yaml.SequenceNode):
        for item in root.value:
            out.entries.append(item.start_mark.line + 1)
            out.fields.append(_yaml_fields(item))
    return out


def _yaml_fields(node: yaml.Node) -> dict[str, int]:
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {str(k.value): k.start_mark.line + 1 for k, _ in node.value}


def json_positions(text: str) -> EntryPositions:
    """Scan JSON text once: lines of top-level keys/elements and of their own keys."""
    out = EntryPositions()
    depth = 0
    line = 1
    top: str | None = None
    i, n = 0, len(text)
    last_string: str | None = None
    last_string_line = 0
    element_due = False  # a top-level array element starts at the next token
    while i < n:
        ch = text[i]
        if element_due and not ch.isspace() and ch not in "{[]":
            out.entries.append(line)  # a scalar element: still an entry, for error lines
            out.fields.append({})
        if not ch.isspace():
            element_due = False
        if ch == "\n":
            line += 1
        elif ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            last_string, last_string_line = text[i + 1 : j], line
            if "\\" in last_string:  # decode escapes so keys compare with the parsed data
                with contextlib.suppress(ValueError):
                    last_string = json.loads(text[i : j + 1])
            line += text.count("\n", i, j)
            i = j
        elif ch == ":" and last_string is not None:
            if depth == 1 and top == "{":
                out.keys.append(last_string)
                out.entries.append(last_string_line)
                out.fields.append({})
            elif depth == 2 and out.fields:
                out.fields[-1].setdefault(last_string, last_string_line)
            last_string = None
        elif ch in "{[":
            if depth == 0:
                top = ch
                element_due = ch == "["
            elif depth == 1 and top == "[":
                out.entries.append(line)
                out.fields.append({})
            depth += 1
            last_string = None
        elif ch in "}]":
            depth -= 1
            last_string = None
        elif ch == ",":
            last_string = None
            element_due = depth == 1 and top == "["
        i += 1
    return out
