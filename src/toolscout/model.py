"""The one record every source produces: :class:`Tool`, and the result types around it.

``Tool`` is immutable and slotted: a catalog of 100k tools must stay small in memory, so
the input schema is kept as compact JSON text and parsed on access (only the few tools a
search returns are ever rendered).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, NamedTuple

from ._tool_fields import EMPTY_MAP as EMPTY_MAP
from ._tool_fields import EMPTY_OBJECT_SCHEMA as EMPTY_OBJECT_SCHEMA
from ._tool_fields import KINDS as KINDS
from ._tool_fields import PERMISSION_KINDS as PERMISSION_KINDS
from ._tool_fields import Annotations as Annotations
from ._tool_fields import DeferPolicy as DeferPolicy
from ._tool_fields import Kind as Kind
from ._tool_fields import PermissionKind as PermissionKind
from ._tool_fields import canonical_json as canonical_json
from ._tool_fields import (
    check_annotations,
    check_meta,
    check_optional_text,
    check_schema_text,
    check_text,
    check_text_map,
    check_texts,
    shown_value,
)
from ._tool_fields import compact_json as compact_json
from ._tool_fields import permission_from_annotations as permission_from_annotations
from .errors import DeclarationError, ErrorInfo, ToolscoutError

__all__ = [
    "KINDS",
    "Annotations",
    "CallResult",
    "DeferPolicy",
    "Kind",
    "PermissionKind",
    "Tool",
]


class _Profile(NamedTuple):
    """A tool's fields that many tools share (where it comes from, labels, flags, policy).

    One frozen tuple per distinct value, shared by every tool holding it: 1M tools of a few
    sources and categories hold a few thousand profiles, not a million copies of 15 fields
    (a slot per field was ~130 B per tool). Fields a tool rarely shares (its name, original
    name, description, schemas) stay on the tool itself."""

    source: str
    source_id: str | None
    origin: str
    category: str | None
    tags: tuple[str, ...]
    annotations: Annotations | None
    permission: PermissionKind | None
    searchable: bool
    available: bool
    platforms: tuple[str, ...]
    defer: DeferPolicy
    display: Mapping[str, str]
    descriptions: Mapping[str, str]
    meta: Mapping[str, Any]
    kind: Kind


PROFILE_FIELDS: tuple[str, ...] = _Profile._fields
_PROFILES: dict[tuple[Any, ...], _Profile] = {}
_PROFILES_MAX = 1 << 16
"""Distinct shared profiles kept for reuse; past it the table starts over (sharing is a
saving, never needed for correctness, and a long-lived process must not grow without end)."""


def shared_profile(*values: Any) -> _Profile:
    """The one :class:`_Profile` with these values (fields in :data:`PROFILE_FIELDS` order).

    Profiles holding a non-empty mapping (display names, translations, meta: mutable, not
    hashable) are never shared."""
    if values[11] is not EMPTY_MAP or values[12] is not EMPTY_MAP or values[13] is not EMPTY_MAP:
        return _Profile(*values)
    key = values[:11] + values[14:]
    found = _PROFILES.get(key)
    if found is None:
        if len(_PROFILES) >= _PROFILES_MAX:
            _PROFILES.clear()
        found = _PROFILES[key] = _Profile(*values)
    return found


def profiles_of(tools: Sequence[Tool]) -> tuple[list[int], list[_Profile]]:
    """Each tool's shared fields as a position in a list of the distinct profiles (in order
    of first use), so a pass over a large catalog's flags or labels (an index's masks)
    runs once per profile, not once per tool."""
    profiles = list(map(attrgetter("_profile"), tools))
    ids = list(map(id, profiles))
    distinct = dict(zip(ids, profiles, strict=True))  # first use order (dicts keep it)
    position = dict(zip(distinct, range(len(distinct)), strict=True))
    return list(map(position.__getitem__, ids)), list(distinct.values())


class Tool:
    """A tool as toolscout knows it, whatever its source.

    ``name`` is unique within a catalog. ``original_name`` is the name the source itself
    uses (an upstream MCP server's own name) when a prefix namespaced it. ``version`` is a
    content hash of everything a model sees, usable as an ETag: it changes exactly when the
    rendered schema would.

    Memory: a tool holds its own name, description, schema texts and original name; the
    other fields live in a shared :class:`_Profile` (read through properties of the same
    names), so a large catalog pays for them once per distinct value.
    """

    __slots__ = (
        "_output_json",
        "_profile",
        "_schema_json",
        "_version",
        "description",
        "name",
        "original_name",
    )

    name: str
    description: str
    original_name: str | None
    _profile: _Profile

    def __init__(
        self,
        name: str,
        description: str = "",
        input_schema: Mapping[str, Any] | None = None,
        *,
        output_schema: Mapping[str, Any] | None = None,
        source: str = "python",
        source_id: str | None = None,
        original_name: str | None = None,
        origin: str | None = None,
        category: str | None = None,
        tags: Iterable[str] = (),
        annotations: Annotations | Mapping[str, Any] | None = None,
        permission: PermissionKind | None = None,
        searchable: bool = True,
        available: bool = True,
        platforms: Iterable[str] = (),
        defer: DeferPolicy | str = DeferPolicy.AUTOMATIC,
        display: Mapping[str, str] | None = None,
        descriptions: Mapping[str, str] | None = None,
        meta: Mapping[str, Any] | None = None,
        kind: Kind | str = "tool",
        input_examples: Iterable[Mapping[str, Any]] | None = None,
    ) -> None:
        if input_examples is not None:  # kept in meta: most tools have none, and meta is shared
            meta = {**(meta or {}), "input_examples": [dict(e) for e in input_examples]}
        if not isinstance(name, str) or not name.strip():
            raise DeclarationError(
                f"a tool needs a non-empty string name, not {shown_value(name)}", field="name"
            )
        check_text(name, name, "name")
        if permission is not None and permission not in PERMISSION_KINDS:
            raise DeclarationError(
                f"tool {name!r}: permission must be one of {', '.join(PERMISSION_KINDS)}, not {shown_value(permission)}",
                field="permission",
            )
        if kind not in KINDS:
            raise DeclarationError(
                f"tool {name!r}: kind must be one of {', '.join(KINDS)}, not {shown_value(kind)}", field="kind"
            )
        try:
            defer = DeferPolicy(defer)
        except (TypeError, ValueError):
            raise DeclarationError(
                f"tool {name!r}: defer must be one of never, automatic, always, not {shown_value(defer)}",
                field="defer",
            ) from None
        s = object.__setattr__
        s(self, "name", name)
        s(self, "description", check_optional_text(name, "description", description) or "")
        s(self, "_schema_json", check_schema_text(name, "input_schema", input_schema) or EMPTY_OBJECT_SCHEMA)
        s(self, "_output_json", check_schema_text(name, "output_schema", output_schema))
        s(self, "original_name", check_optional_text(name, "original_name", original_name))
        source = check_optional_text(name, "source", source) or "python"
        source_id = check_optional_text(name, "source_id", source_id)
        profile = shared_profile(
            source,
            source_id,
            check_optional_text(name, "origin", origin) or (f"{source}:{source_id}" if source_id else source),
            check_optional_text(name, "category", category) or None,
            check_texts(name, "tags", tags),
            check_annotations(name, annotations),
            permission,
            bool(searchable),
            bool(available),
            check_texts(name, "platforms", platforms),
            defer,
            check_text_map(name, "display", display),
            check_text_map(name, "descriptions", descriptions),
            check_meta(name, meta),
            kind,
        )
        s(self, "_profile", profile)
        s(self, "_version", None)

    # The shared fields, read from the profile (C-level getters: as cheap as a slot).
    source: str = property(attrgetter("_profile.source"))  # type: ignore[assignment]
    source_id: str | None = property(attrgetter("_profile.source_id"))  # type: ignore[assignment]
    origin: str = property(attrgetter("_profile.origin"))  # type: ignore[assignment]
    category: str | None = property(attrgetter("_profile.category"))  # type: ignore[assignment]
    tags: tuple[str, ...] = property(attrgetter("_profile.tags"))  # type: ignore[assignment]
    annotations: Annotations | None = property(attrgetter("_profile.annotations"))  # type: ignore[assignment]
    permission: PermissionKind | None = property(attrgetter("_profile.permission"))  # type: ignore[assignment]
    searchable: bool = property(attrgetter("_profile.searchable"))  # type: ignore[assignment]
    available: bool = property(attrgetter("_profile.available"))  # type: ignore[assignment]
    platforms: tuple[str, ...] = property(attrgetter("_profile.platforms"))  # type: ignore[assignment]
    defer: DeferPolicy = property(attrgetter("_profile.defer"))  # type: ignore[assignment]
    display: Mapping[str, str] = property(attrgetter("_profile.display"))  # type: ignore[assignment]
    descriptions: Mapping[str, str] = property(attrgetter("_profile.descriptions"))  # type: ignore[assignment]
    meta: Mapping[str, Any] = property(attrgetter("_profile.meta"))  # type: ignore[assignment]
    kind: Kind = property(attrgetter("_profile.kind"))  # type: ignore[assignment]

    def __setattr__(self, key: str, value: Any) -> None:
        raise AttributeError("Tool is immutable; use tool.replace(...)")

    @property
    def input_schema(self) -> dict[str, Any]:
        """A fresh copy of the JSON Schema for the arguments (callers may mutate it)."""
        return json.loads(self._schema_json)

    @property
    def output_schema(self) -> dict[str, Any] | None:
        return json.loads(self._output_json) if self._output_json else None

    @property
    def schema_json(self) -> str:
        """The input schema as compact JSON text, in declared key order (cheap; no parsing)."""
        return self._schema_json

    @property
    def effective_permission(self) -> PermissionKind | None:
        """The declared ``permission``, else the kind its MCP hints imply
        (:func:`permission_from_annotations`); what policies and approvals go by."""
        if self.permission is not None:
            return self.permission
        return permission_from_annotations(self.annotations)

    @property
    def call_name(self) -> str:
        """The name the tool's own source knows it by."""
        return self.original_name or self.name

    @property
    def version(self) -> str:
        if self._version is None:
            payload = "\x1f".join(
                (
                    self.name,
                    self.description,
                    canonical_json(json.loads(self._schema_json)),
                    canonical_json(json.loads(self._output_json)) if self._output_json else "",
                    canonical_json(self.annotations.to_mcp()) if self.annotations else "",
                    # Examples are rendered where a format takes them; absent, the hash is as before.
                    *((canonical_json(list(self.input_examples)),) if self.input_examples else ()),
                    # A skill or agent is announced as such in find results; a tool's hash is
                    # unchanged from before kinds existed (stored versions and snapshots stay valid).
                    *(() if self.kind == "tool" else (self.kind,)),
                )
            )
            object.__setattr__(self, "_version", hashlib.sha256(payload.encode()).hexdigest()[:16])
        return self._version  # type: ignore[return-value]

    @property
    def input_examples(self) -> tuple[dict[str, Any], ...]:
        """Example arguments (pydantic-ai's and Anthropic's ``input_examples``): shown to
        models whose format takes them, which helps them fill nested or unusual schemas.
        Only objects count; anything else a source sent is ignored."""
        found = self.meta.get("input_examples") if self.meta else None
        if not isinstance(found, list):
            return ()
        return tuple(e for e in found if isinstance(e, dict))

    def summary(self, width: int = 160) -> str:
        """First sentence of the description, for one-line listings."""
        text = " ".join(self.description.split())
        for stop in (". ", "\n"):
            cut = text.find(stop)
            if 0 < cut < width:
                return text[: cut + 1].rstrip()
        return text if len(text) <= width else text[: width - 1].rstrip() + "…"

    def to_dict(self) -> dict[str, Any]:
        """Every field, JSON-ready (used by the store and ``toolscout show``)."""
        out = self._fields(with_schemas=True)
        out["version"] = self.version
        return out

    def _fields(self, *, with_schemas: bool) -> dict[str, Any]:
        """:meth:`to_dict` without the version, and without parsing the schemas unless asked."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema if with_schemas else None,
            "output_schema": self.output_schema if with_schemas else None,
            "source": self.source,
            "source_id": self.source_id,
            "original_name": self.original_name,
            "origin": self.origin,
            "category": self.category,
            "tags": list(self.tags),
            "annotations": self.annotations.to_mcp() if self.annotations else None,
            "permission": self.permission,
            "searchable": self.searchable,
            "available": self.available,
            "platforms": list(self.platforms),
            "defer": self.defer.value,
            "display": dict(self.display),
            "descriptions": dict(self.descriptions),
            "meta": dict(self.meta),
            "kind": self.kind,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Tool:
        """Inverse of :meth:`to_dict`; a malformed record raises :class:`DeclarationError`
        (declaration files go through sources, which also check the schemas)."""
        if not isinstance(data, Mapping):
            raise DeclarationError(f"a tool record must be a mapping, not {type(data).__name__}")
        if "name" not in data:
            raise DeclarationError("a tool record needs a 'name'", field="name")
        return cls(
            data["name"],
            data.get("description") or "",
            data.get("input_schema") or None,
            output_schema=data.get("output_schema") or None,
            source=data.get("source") or "python",
            source_id=data.get("source_id"),
            original_name=data.get("original_name"),
            origin=data.get("origin"),
            category=data.get("category"),
            tags=data.get("tags") or (),
            annotations=data.get("annotations"),
            permission=data.get("permission"),
            searchable=data.get("searchable", True),
            available=data.get("available", True),
            platforms=data.get("platforms") or (),
            defer=data.get("defer") or DeferPolicy.AUTOMATIC,
            display=data.get("display"),
            descriptions=data.get("descriptions"),
            meta=data.get("meta"),
            kind=data.get("kind") or "tool",
        )

    def replace(self, **changes: Any) -> Tool:
        """A copy with ``changes`` (fields as :meth:`to_dict` names them), checked as a new
        tool would be. Schemas not changed are shared as they are, without a parse and a
        re-encoding (1M renamed copies of 13k tools hold 13k schema texts, not 1M)."""
        data = self._fields(with_schemas=False)
        if changes.get("annotations") is not None and isinstance(changes["annotations"], Annotations):
            changes["annotations"] = changes["annotations"].to_mcp()
        data.update(changes)
        tool = Tool.from_dict(data)
        if "input_schema" not in changes:
            object.__setattr__(tool, "_schema_json", self._schema_json)
        if "output_schema" not in changes:
            object.__setattr__(tool, "_output_json", self._output_json)
        return tool

    def _key(self) -> tuple[Any, ...]:
        return _key_of(self)  # type: ignore[no-any-return]

    def __eq__(self, other: object) -> bool:
        # Field by field, without parsing schemas: catalog refreshes compare every tool.
        return isinstance(other, Tool) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash((self.name, self.version))

    def __repr__(self) -> str:
        return f"Tool(name={self.name!r}, source={self.source!r}, version={self.version!r})"


_key_of = attrgetter(*(slot for slot in Tool.__slots__ if slot != "_version"))
"""A tool's fields for ``==``: Tool's own slots (a subclass's ``__slots__`` would name its own)."""

DEFERRED_SLOTS: tuple[str, ...] = ("description", "_schema_json", "_output_json")
"""The slots a :class:`DeferredTool` fills on first access."""
_SLOT = {slot: Tool.__dict__[slot] for slot in Tool.__slots__}


class DeferredTool(Tool):
    """A :class:`Tool` whose description and schema texts are read on first access.

    A store holds a catalog as columns; reopening one makes a tool per row, and the index a
    restart restores reads only names, versions, original names and shared fields. Decoding
    1M descriptions nobody reads was most of a 1M-tool reload, so a store's tools leave
    :data:`DEFERRED_SLOTS` unset and keep ``_texts``: an object whose ``fill()`` sets those
    slots, for this tool and the others of its block (see ``toolscout.storage._columns``), and drops
    their ``_texts``. The first read of any of them fills them all, once (``fill``
    serialises threads). Everything else is a Tool's: the same fields, equality, hash,
    version and ``replace`` (which makes a plain Tool); reading a field never fails for
    being deferred."""

    __slots__ = ("_texts",)

    def __getattr__(self, attr: str) -> Any:
        # Called only when normal lookup fails: an unset slot, or a name no Tool has.
        if attr not in DEFERRED_SLOTS:
            raise AttributeError(f"'{type(self).__name__}' object has no attribute '{attr}'")
        try:
            texts = _TEXTS.__get__(self, DeferredTool)
        except AttributeError:
            texts = None  # filled meanwhile by another thread (it sets the slots first)
        if texts is not None:
            texts.fill()
        return _SLOT[attr].__get__(self, Tool)


_TEXTS = DeferredTool.__dict__["_texts"]


def filled(tool: Tool) -> bool:
    """Whether ``tool`` holds its texts (always, unless it is a :class:`DeferredTool` not
    read yet)."""
    try:
        _SLOT["description"].__get__(tool, Tool)
    except AttributeError:
        return False
    return True


@dataclass(slots=True)
class CallResult:
    """What executing a tool produced, success or failure, never an exception.

    ``content`` uses MCP content blocks (``{"type": "text", "text": ...}``) so results from
    Python functions and from upstream servers look the same; ``value`` keeps the Python
    return value for library callers.
    """

    tool: str
    ok: bool
    content: list[dict[str, Any]] = field(default_factory=list)
    structured: Any = None
    value: Any = None
    error: ErrorInfo | None = None
    duration_ms: float = 0.0
    findings: tuple[dict[str, str], ...] = ()
    """Poisoning findings on the result's text, when the gateway screens results
    (docs/security.md); empty otherwise."""

    @property
    def is_error(self) -> bool:
        return not self.ok

    @classmethod
    def failure(cls, tool: str, error: ToolscoutError, *, duration_ms: float = 0.0) -> CallResult:
        info = error.info()
        return cls(
            tool=tool,
            ok=False,
            content=[{"type": "text", "text": info.text()}],
            error=info,
            duration_ms=duration_ms,
        )

    def text(self) -> str:
        return "\n".join(b.get("text", "") for b in self.content if b.get("type") == "text")

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"tool": self.tool, "ok": self.ok, "content": self.content}
        if self.structured is not None:
            out["structured"] = self.structured
        if self.error is not None:
            out["error"] = self.error.to_dict()
        if self.findings:
            out["findings"] = [dict(f) for f in self.findings]
        return out

    def raise_for_error(self) -> CallResult:
        if self.error is not None:
            raise ToolscoutError(self.error.message, hint=self.error.hint, code=self.error.code)
        return self
