"""Rug-pull detection: each tool's content pinned the first time it is seen, then compared.

A server can show a clean tool until it is approved and change it afterwards (the "rug
pull"). ``Tool.version`` hashes everything a model reads (name, description, schemas,
annotations), so a changed version means changed instructions. The pin keeps the pinned
texts too, so a finding can say *what* changed, not just that something did.

Pins live in a store namespace (``security.pins``, one entry per tool name) when a store is
given, so they survive restarts; otherwise in memory for the life of the process.
"""

from __future__ import annotations

import difflib
import json
import time
from collections.abc import Iterable
from typing import Any, Protocol

from ..model import Tool, canonical_json
from .findings import Finding

__all__ = ["NAMESPACE", "Pins"]

NAMESPACE = "security.pins"


class _Blobs(Protocol):
    """The part of :class:`toolscout.storage.Store` pins need."""

    def put(self, ns: str, key: str, value: bytes | str, meta: dict[str, Any] | None = None) -> None: ...
    def get(self, ns: str, key: str) -> Any: ...


def _record(tool: Tool) -> dict[str, Any]:
    return {
        "version": tool.version,
        "description": tool.description,
        "input_schema": tool.input_schema,
        "output_schema": tool.output_schema,
        "annotations": tool.annotations.to_mcp() if tool.annotations else None,
    }


class Pins:
    """First-seen (or approved) versions of tools, keyed by tool name."""

    def __init__(self, store: _Blobs | None = None, namespace: str = NAMESPACE) -> None:
        self.store = store
        self.namespace = namespace
        self._memory: dict[str, dict[str, Any] | Tool] = {}  # a tool itself when nothing is stored

    def get(self, key: str) -> dict[str, Any] | None:
        """The pinned record of ``key`` (version and texts), or ``None``."""
        if key in self._memory:
            pinned = self._memory[key]
            return _record(pinned) if isinstance(pinned, Tool) else pinned
        if self.store is None:
            return None
        entry = self.store.get(self.namespace, key)
        if entry is None:
            return None
        try:
            value = entry.value if isinstance(entry.value, str) else entry.value.decode()
            record = json.loads(value)
        except (ValueError, UnicodeDecodeError):
            return None
        if isinstance(record, dict):
            self._memory[key] = record
            return record
        return None

    def approve(self, tools: Iterable[tuple[str, Tool]]) -> int:
        """Pin each ``(key, tool)`` at its current content (first sight, or a person's
        approval after a change); returns how many were pinned."""
        if self.store is None:  # a Tool is immutable: pin the object; records only on a change
            pinned = dict(tools)
            self._memory.update(pinned)
            return len(pinned)
        items = []
        for key, tool in tools:
            record = _record(tool)
            self._memory[key] = record
            meta = {"version": tool.version, "pinned_at": time.time()}
            items.append((key, json.dumps(record, ensure_ascii=False), meta))
        put_many = getattr(self.store, "put_many", None)
        if put_many is not None:
            put_many(self.namespace, items)  # one transaction for a whole list
        else:
            for key, value, meta in items:
                self.store.put(self.namespace, key, value, meta)
        return len(items)

    def check(self, items: Iterable[tuple[str, Tool]], *, pin_new: bool = True) -> dict[str, Finding]:
        """A ``rug_pull`` finding for every ``(key, tool)`` whose content differs from its
        pin; tools never seen before are pinned (with ``pin_new``) and pass."""
        found: dict[str, Finding] = {}
        new: list[tuple[str, Tool]] = []
        for key, tool in items:
            pinned = self._memory.get(key)
            if isinstance(pinned, Tool):
                if pinned.version != tool.version:
                    found[key] = _describe(_record(pinned), tool)
                continue
            record = self.get(key)
            if record is None:
                new.append((key, tool))
            elif record.get("version") != tool.version:
                found[key] = _describe(record, tool)
        if pin_new and new:
            self.approve(new)
        return found


def _describe(record: dict[str, Any], tool: Tool) -> Finding:
    """The first thing that changed, as a finding naming its field."""
    before = record.get("description") or ""
    if before != tool.description:
        return Finding.of("rug_pull", "description", _text_change(before, tool.description))
    for part, now in (("input_schema", tool.input_schema), ("output_schema", tool.output_schema)):
        was = record.get(part)
        if canonical_json(was) != canonical_json(now):
            path, evidence = _json_change(was, now, part)
            return Finding.of("rug_pull", path, evidence)
    annotations = tool.annotations.to_mcp() if tool.annotations else None
    if canonical_json(record.get("annotations")) != canonical_json(annotations):
        return Finding.of("rug_pull", "annotations", f"was {canonical_json(record.get('annotations'))}, now {canonical_json(annotations)}")
    return Finding.of("rug_pull", "name", f"content hash was {record.get('version')}, now {tool.version}")


def _text_change(before: str, after: str) -> str:
    matcher = difflib.SequenceMatcher(None, before, after, autojunk=False)
    for op, i1, i2, j1, j2 in matcher.get_opcodes():
        if op == "insert" or (op == "replace" and j2 - j1 >= i2 - i1):
            return f"added: {after[j1:j2].strip()}"
        if op == "replace":
            return f"was: {before[i1:i2].strip()}; now: {after[j1:j2].strip()}"
        if op == "delete":
            return f"removed: {before[i1:i2].strip()}"
    return "changed"


def _flatten(node: Any, path: str, out: dict[str, str]) -> dict[str, str]:
    if isinstance(node, dict) and node:
        for key, value in node.items():
            _flatten(value, f"{path}.{key}", out)
    elif isinstance(node, list) and node and not all(isinstance(v, str | int | float | bool) for v in node):
        for i, value in enumerate(node):
            _flatten(value, f"{path}[{i}]", out)
    else:
        out[path] = canonical_json(node)
    return out


def _json_change(was: Any, now: Any, root: str) -> tuple[str, str]:
    old, new = _flatten(was, root, {}), _flatten(now, root, {})
    for path, value in new.items():
        if path not in old:
            top = _new_ancestor(path, old, root)
            parts = [f"{k[len(top) + 1:]}={v}" if k != top else v for k, v in new.items() if k == top or k.startswith(top + ".")]
            return top, f"added: {', '.join(parts)}"
        if old[path] != value:
            return path, f"was {old[path]}, now {value}"
    for path, value in old.items():
        if path not in new:
            return path, f"removed: {value}"
    return root, "changed"


def _new_ancestor(path: str, old: dict[str, str], root: str) -> str:
    """The shortest prefix of ``path`` that the old schema did not have (a new property)."""
    parts = path[len(root) + 1 :].split(".")
    for i in range(1, len(parts) + 1):
        prefix = ".".join([root, *parts[:i]])
        if not any(k == prefix or k.startswith(prefix + ".") for k in old):
            return prefix
    return path
