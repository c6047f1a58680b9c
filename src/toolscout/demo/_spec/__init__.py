"""The demo catalog's source, written as compact Python: one module per group of services.

``python -m toolscout.demo._build`` turns it into ``catalog.json`` (package data); a test
checks that the two agree. Kinds map to annotations and permission kinds in one place
(:data:`KINDS`), so every tool's behaviour hints are consistent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["KINDS", "Service", "a", "b", "e", "i", "n", "o", "s", "t"]

# kind -> (read_only, destructive, idempotent, permission)
KINDS: dict[str, tuple[bool, bool, bool, str]] = {
    "read": (True, False, True, "read"),
    "net": (True, False, True, "network"),
    "write": (False, False, False, "write"),
    "update": (False, False, True, "write"),
    "delete": (False, True, True, "write"),
    "exec": (False, False, False, "execute"),
    "danger": (False, True, False, "dangerous"),
}


def _param(type_: str, desc: str, **kw: Any) -> dict[str, Any]:
    return {"type": type_, "description": desc, **kw}


def s(desc: str, **kw: Any) -> dict[str, Any]:
    """A string parameter."""
    return _param("string", desc, **kw)


def i(desc: str, **kw: Any) -> dict[str, Any]:
    """An integer parameter."""
    return _param("integer", desc, **kw)


def n(desc: str, **kw: Any) -> dict[str, Any]:
    """A number parameter."""
    return _param("number", desc, **kw)


def b(desc: str, **kw: Any) -> dict[str, Any]:
    """A boolean parameter."""
    return _param("boolean", desc, **kw)


def e(desc: str, *values: str, **kw: Any) -> dict[str, Any]:
    """A string parameter restricted to ``values``."""
    return _param("string", desc, enum=list(values), **kw)


def a(desc: str, items: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    """An array parameter (of strings unless ``items`` says otherwise)."""
    return _param("array", desc, items=items or {"type": "string"}, **kw)


def o(desc: str, props: dict[str, Any] | None = None, **kw: Any) -> dict[str, Any]:
    """An object parameter; ``props`` uses the same ``name?`` convention as tools."""
    if props is None:
        return _param("object", desc, additionalProperties={"type": "string"}, **kw)
    return {"description": desc, **object_schema(props), **kw}


def object_schema(params: dict[str, Any]) -> dict[str, Any]:
    """``{"name": schema, "optional?": schema}`` -> a JSON Schema object with ``required``."""
    props = {k.rstrip("?"): v for k, v in params.items()}
    required = [k for k in params if not k.endswith("?")]
    out: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        out["required"] = required
    return out


@dataclass(slots=True)
class Spec:
    """One tool, before the service prefix and defaults are applied."""

    name: str
    description: str
    params: dict[str, Any]
    kind: str = "read"
    tags: tuple[str, ...] = ()
    zh: tuple[str, str] | None = None  # (display, description) in zh-CN
    searchable: bool = True
    platforms: tuple[str, ...] = ()
    defer: str | None = None


def t(
    name: str,
    description: str,
    params: dict[str, Any] | None = None,
    kind: str = "read",
    *,
    tags: tuple[str, ...] = (),
    zh: tuple[str, str] | None = None,
    searchable: bool = True,
    platforms: tuple[str, ...] = (),
    defer: str | None = None,
) -> Spec:
    if kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r} for {name}")
    return Spec(name, description, params or {}, kind, tags, zh, searchable, platforms, defer)


@dataclass(slots=True)
class Service:
    """A group of tools sharing a name prefix, a category and tags."""

    prefix: str
    title: str
    tags: tuple[str, ...]
    tools: list[Spec] = field(default_factory=list)
    open_world: bool = True
    category: str | None = None
