"""What a :class:`~toolscout.model.Tool` is made of, and how its fields are checked.

The vocabulary (kinds, permission kinds, the deferral policy, MCP annotations, the shared
empty mapping, the two JSON spellings) and the checks ``Tool(...)`` runs on each field.
Kept apart from :mod:`toolscout.model` so the record reads as its layout (slots, shared
profiles, lazily filled texts); every public name here is re-exported there, which is where
callers import them from.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Literal

from .errors import DeclarationError

__all__ = [
    "EMPTY_MAP", "EMPTY_OBJECT_SCHEMA", "KINDS", "PERMISSION_KINDS", "Annotations", "DeferPolicy", "EmptyMap", "Kind",
    "PermissionKind", "canonical_json", "check_annotations", "check_meta", "check_optional_text", "check_schema_text",
    "check_text", "check_text_map", "check_texts", "compact_json", "permission_from_annotations", "shown_value",
]

PermissionKind = Literal["read", "write", "execute", "network", "dangerous"]
PERMISSION_KINDS: tuple[str, ...] = ("read", "write", "execute", "network", "dangerous")
EMPTY_OBJECT_SCHEMA = '{"properties":{},"type":"object"}'
Kind = Literal["tool", "skill", "agent", "resource", "prompt"]
KINDS: tuple[str, ...] = ("tool", "skill", "agent", "resource", "prompt")
"""What a catalog entry is: a tool to call, a skill (instructions to load, Agent Skills
format), an agent (an A2A agent card), or an upstream MCP server's resource (or resource
template) or prompt. All are searched and called the same way (calling a resource reads
it, calling a prompt gets it); only tools are ranked unless a request names other kinds."""


class DeferPolicy(StrEnum):
    """Whether a tool's schema may be withheld until it is found (seed 003)."""

    NEVER = "never"  # always sent in full
    AUTOMATIC = "automatic"  # deferred once the catalog is above the threshold
    ALWAYS = "always"  # deferred whenever search is active


@dataclass(frozen=True, slots=True)
class Annotations:
    """MCP tool annotations (behaviour hints). ``None`` means "not stated"."""

    title: str | None = None
    read_only: bool | None = None
    destructive: bool | None = None
    idempotent: bool | None = None
    open_world: bool | None = None

    @classmethod
    def from_mcp(cls, data: Mapping[str, Any] | None) -> Annotations | None:
        if not data:
            return None

        def flag(key: str) -> bool | None:
            value = data.get(key)
            return value if isinstance(value, bool) else None

        title = data.get("title")
        return cls(
            title=title if isinstance(title, str) else None,
            read_only=flag("readOnlyHint"),
            destructive=flag("destructiveHint"),
            idempotent=flag("idempotentHint"),
            open_world=flag("openWorldHint"),
        )

    def to_mcp(self) -> dict[str, Any]:
        pairs = {
            "title": self.title,
            "readOnlyHint": self.read_only,
            "destructiveHint": self.destructive,
            "idempotentHint": self.idempotent,
            "openWorldHint": self.open_world,
        }
        return {k: v for k, v in pairs.items() if v is not None}


def permission_from_annotations(annotations: Annotations | None) -> PermissionKind | None:
    """The permission kind MCP behaviour hints imply, for tools that declare none.

    Without it an upstream MCP tool has no kind, and ``Policy(permissions={"read"})`` lets
    a destructive tool through. First rule that applies: ``readOnlyHint`` and
    ``destructiveHint`` both true -> dangerous (hints that contradict each other are read
    the unsafe way: an upstream must not opt out of approval by adding ``readOnlyHint``);
    ``readOnlyHint`` true -> read; ``destructiveHint`` true -> dangerous; ``readOnlyHint`` false -> write if
    ``destructiveHint`` is false, else dangerous (MCP's default for a tool that modifies
    is destructive); ``destructiveHint`` false -> write; ``openWorldHint`` true alone ->
    network; otherwise ``None``. ``idempotentHint`` never decides: a retry-safe write is
    still a write. Only stated hints count, so a tool with a title alone stays undeclared.
    """
    if annotations is None:
        return None
    if annotations.read_only and annotations.destructive:
        return "dangerous"
    if annotations.read_only:
        return "read"
    if annotations.destructive:
        return "dangerous"
    if annotations.read_only is False:
        return "write" if annotations.destructive is False else "dangerous"
    if annotations.destructive is False:
        return "write"
    if annotations.open_world:
        return "network"
    return None


def canonical_json(value: Any) -> str:
    """Key-sorted compact JSON: equal values give equal text (for hashes)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def compact_json(value: Any) -> str:
    """Compact JSON that keeps key order: models read parameters in the declared order."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


class EmptyMap(dict):  # type: ignore[type-arg]
    """The one empty mapping shared by every tool without display names, translations or
    meta: three empty dicts per tool were ~190 MB at 1M tools. Read-only, like a Tool."""

    __slots__ = ()

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("a Tool's mappings are read-only; use tool.replace(...)")

    __setitem__ = __delitem__ = __ior__ = setdefault = update = pop = popitem = clear = _refuse  # type: ignore[assignment]


EMPTY_MAP: Mapping[str, Any] = EmptyMap()


# -- checks for Tool(...): a malformed field is a DeclarationError naming it, never a
# TypeError later (in a summary, a version hash, a store write or a wire encoding). The
# common case (plain ASCII str, list and dict values) takes the cheap branches: a catalog
# refresh builds every tool of an upstream.

_SURROGATE_HINT = (
    "A lone UTF-16 surrogate (e.g. a JSON '\\ud800' escape without its pair) is not text; "
    "fix the encoding where this value comes from."
)
_STRICT_JSON = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def shown_value(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def check_text(name: str, value: str, field: str) -> str:
    """``value`` if it can be encoded as UTF-8 (every wire and the store need that)."""
    if not value.isascii():
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise DeclarationError(
                f"tool {name!r}: {field} contains an unpaired surrogate "
                f"U+{ord(value[exc.start]):04X}, which is not text",
                field=field,
                hint=_SURROGATE_HINT,
            ) from None
    return value


def check_optional_text(name: str, field: str, value: Any) -> str | None:
    if value is None or (type(value) is str and value.isascii()):
        return value
    if not isinstance(value, str):
        raise DeclarationError(
            f"tool {name!r}: {field} must be a string, not {type(value).__name__}", field=field
        )
    return check_text(name, value, field)


def check_texts(name: str, field: str, values: Any) -> tuple[str, ...]:
    if type(values) is tuple or type(values) is list:
        out = tuple(values)
    elif isinstance(values, str | bytes):  # would split into characters
        out = None
    else:
        try:
            out = tuple(values)
        except TypeError:
            out = None
    if out is None:
        raise DeclarationError(
            f"tool {name!r}: {field} must be a list of strings, not {type(values).__name__}", field=field
        )
    for value in out:
        if type(value) is not str or not value.isascii():
            if not isinstance(value, str):
                raise DeclarationError(f"tool {name!r}: {field} must be a list of strings", field=field)
            check_text(name, value, field)
    return out


def check_text_map(name: str, field: str, value: Any) -> Mapping[str, str]:
    if not value:
        return EMPTY_MAP
    if type(value) is not dict and not isinstance(value, Mapping):
        raise DeclarationError(f"tool {name!r}: {field} must map strings to strings", field=field)
    for k, v in value.items():
        if type(k) is not str or type(v) is not str or not (k.isascii() and v.isascii()):
            if not isinstance(k, str) or not isinstance(v, str):
                raise DeclarationError(f"tool {name!r}: {field} must map strings to strings", field=field)
            check_text(name, k, field)
            check_text(name, v, field)
    return dict(value)


def check_json_text(name: str, field: str, value: Any) -> str:
    """Compact JSON text of ``value``, refusing what JSON cannot carry (NaN, sets, cycles...)."""
    try:
        text = _STRICT_JSON.encode(value)
    except (TypeError, ValueError, RecursionError) as exc:
        reason = "it nests too deeply" if isinstance(exc, RecursionError) else shown_value(str(exc), 120)
        raise DeclarationError(f"tool {name!r}: {field} is not JSON data: {reason}", field=field) from None
    return check_text(name, text, field)


def check_schema_text(name: str, field: str, schema: Any) -> str | None:
    if not schema:
        return None
    if type(schema) is not dict and not isinstance(schema, Mapping):
        raise DeclarationError(
            f"tool {name!r}: {field} must be a JSON Schema object, not {type(schema).__name__}", field=field
        )
    return check_json_text(name, field, dict(schema))


def check_meta(name: str, meta: Any) -> Mapping[str, Any]:
    if not meta:
        return EMPTY_MAP
    if type(meta) is not dict and not isinstance(meta, Mapping):
        raise DeclarationError(f"tool {name!r}: meta must be a mapping, not {type(meta).__name__}", field="meta")
    out = dict(meta)
    for k, v in out.items():  # flat ASCII strings need no encoding pass
        if type(k) is not str or type(v) is not str or not (k.isascii() and v.isascii()):
            check_json_text(name, "meta", out)
            break
    return out


_NO_ANNOTATIONS = Annotations()


def check_annotations(name: str, value: Any) -> Annotations | None:
    if value is None:
        return None
    if type(value) is not Annotations:
        if isinstance(value, Mapping):
            value = Annotations.from_mcp(value)
            if value is None:
                return None
        elif not isinstance(value, Annotations):
            raise DeclarationError(
                f"tool {name!r}: annotations must be Annotations or an MCP hints mapping, "
                f"not {type(value).__name__}",
                field="annotations",
            )
    for flag in (value.read_only, value.destructive, value.idempotent, value.open_world):
        if flag is not None and flag is not True and flag is not False:
            raise DeclarationError(f"tool {name!r}: annotation hints must be true, false or None", field="annotations")
    if value.title is not None:
        check_optional_text(name, "annotations.title", value.title)
    elif value == _NO_ANNOTATIONS:  # states nothing: the same tool as one without (same version)
        return None
    return value
