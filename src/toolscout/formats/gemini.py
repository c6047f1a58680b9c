"""Gemini function declarations: JSON Schema narrowed to Gemini's OpenAPI 3.0 subset.

Gemini's ``Schema`` knows only ``type format title description nullable enum items
properties required minItems maxItems minProperties maxProperties minLength maxLength
pattern example anyOf propertyOrdering default minimum maximum``. The conversion:

* ``$ref`` is inlined from ``$defs``/``definitions``; a recursive reference is cut at its
  second appearance on the path (replaced by a described ``OBJECT``), so it cannot loop;
* types are upper-case OpenAPI names; ``["T", "null"]`` and ``anyOf [T, null]`` become
  ``T`` with ``nullable: true``; ``oneOf`` is read as ``anyOf``; ``allOf`` is merged;
* ``const`` becomes a one-value ``enum``; enums stay only on strings (other enums are
  written into the description);
* ``format`` is kept only where Gemini accepts it (``date-time``/``enum`` on strings,
  ``int32``/``int64``, ``float``/``double``); every other keyword is dropped.

A tool without parameters is declared without ``parameters`` (Gemini rejects an object
with no properties). Names Gemini would reject are sent as their wire name
(:mod:`toolscout.naming`), and so are property names outside
``[A-Za-z_][A-Za-z0-9_]{0,63}`` (``X-Request-Id`` -> ``X_Request_Id_<hash>``, also in
``required`` and ``propertyOrdering``, at every depth). :func:`gemini_arguments` maps the
arguments of a call back to the schema's own names, walking the schema the same way.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..model import Tool
from ..naming import param_names, wire_name
from ._schema import local_defs, resolve_ref

__all__ = ["gemini_arguments", "gemini_pointer", "gemini_schema", "render_gemini"]

_KEEP = {"title", "description", "minItems", "maxItems", "minProperties", "maxProperties",
         "minLength", "maxLength", "pattern", "example", "default", "minimum", "maximum",
         "propertyOrdering"}
_FORMATS = {"STRING": {"date-time", "enum"}, "INTEGER": {"int32", "int64"}, "NUMBER": {"float", "double"}}
_TYPES = {"string": "STRING", "integer": "INTEGER", "number": "NUMBER", "boolean": "BOOLEAN",
          "array": "ARRAY", "object": "OBJECT", "null": "NULL"}


def render_gemini(tool: Tool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": wire_name(tool.name, "gemini"), "description": tool.description}
    params = gemini_schema(tool.input_schema)
    if params.get("properties"):
        out["parameters"] = params
    return out


def gemini_schema(schema: Mapping[str, Any]) -> dict[str, Any]:
    """Convert one JSON Schema (with its own ``$defs``) to Gemini's subset."""
    try:
        return _Converter(schema).convert(schema, ())
    except RecursionError:
        return {"type": "OBJECT", "description": "(schema nested too deeply to convert)"}


def gemini_arguments(schema: Mapping[str, Any], arguments: Any) -> Any:
    """``arguments`` a model sent for the declaration of ``schema``, with every renamed
    property name mapped back to the schema's own (unknown keys are left for validation
    to report)."""
    try:
        return _Converter(schema).restore(arguments, schema, ())
    except RecursionError:
        return arguments


def gemini_pointer(schema: Mapping[str, Any], pointer: str) -> str:
    """A JSON pointer into a call's arguments (the schema's names), with each property
    named as the Gemini declaration of ``schema`` names it (so an error points at the
    names the model used)."""
    try:
        return _Converter(schema).pointer(pointer)
    except RecursionError:
        return pointer


class _Converter:
    def __init__(self, root: Mapping[str, Any]) -> None:
        self.root = root
        self.defs = local_defs(root)

    def convert(self, node: Any, stack: tuple[str, ...]) -> dict[str, Any]:
        if not isinstance(node, Mapping):
            return {}
        node = dict(node)
        ref = node.pop("$ref", None)
        if isinstance(ref, str):
            name = ref.rsplit("/", 1)[-1]
            target = resolve_ref(ref, self.root, self.defs)
            if ref in stack or target is None:
                why = "recursive" if ref in stack else "unresolved"
                note = f"({why} reference to {name})"
                desc = " ".join(p for p in (node.get("description"), note) if p)
                return {"type": "OBJECT", "description": desc}
            merged = {**target, **{k: v for k, v in node.items() if k in ("description", "title", "default")}}
            return self.convert(merged, (*stack, ref))
        if "allOf" in node:
            node = self._merge_all_of(node, stack)
        out: dict[str, Any] = {}
        nullable = False
        variants = node.get("anyOf", node.get("oneOf"))
        if isinstance(variants, list):
            real = [v for v in variants if not (isinstance(v, Mapping) and v.get("type") == "null")]
            nullable = len(real) < len(variants)
            converted = [self.convert(v, stack) for v in real]
            if len(converted) == 1:
                out.update({k: v for k, v in converted[0].items() if k not in out})
            elif converted:
                out["anyOf"] = converted
        types = node.get("type")
        if isinstance(types, list):
            nullable = nullable or "null" in types
            real_types = [t for t in types if t != "null"]
            if len(real_types) == 1:
                types = real_types[0]
            elif real_types:
                out["anyOf"] = [self.convert({**node, "type": t}, stack) for t in real_types]
                types = None
            else:
                types = None
        if isinstance(types, str) and types in _TYPES and types != "null":
            out["type"] = _TYPES[types]
        elif "properties" in node and "type" not in out:
            out["type"] = "OBJECT"
        for key in _KEEP:
            if key in node:
                out[key] = node[key]
        self._enum(node, out)
        fmt = node.get("format")
        if isinstance(fmt, str) and fmt in _FORMATS.get(out.get("type", ""), ()):
            out["format"] = fmt
        props = node.get("properties")
        if isinstance(props, Mapping):
            names = param_names(map(str, props), "gemini")
            out["properties"] = {names[str(k)]: self.convert(v, stack) for k, v in props.items()}
            required = [names[r] for r in node.get("required") or [] if isinstance(r, str) and r in names]
            if required:
                out["required"] = required
            order = out.get("propertyOrdering")
            if isinstance(order, list):
                out["propertyOrdering"] = [names.get(n, n) if isinstance(n, str) else n for n in order]
        items = node.get("items")
        if isinstance(items, Mapping):
            out["items"] = self.convert(items, stack)
        elif out.get("type") == "ARRAY":
            out["items"] = {"type": "STRING"} if items is None else self.convert(items[0] if items else {}, stack)
        if nullable:
            out["nullable"] = True
        return out

    def _resolve(self, node: Any, stack: tuple[str, ...]) -> tuple[dict[str, Any] | None, tuple[str, ...]]:
        """``node`` with its ``$ref`` followed and ``allOf`` merged, as :meth:`convert`
        reads it; None where the converter declared an opaque object instead."""
        if not isinstance(node, Mapping):
            return None, stack
        node = dict(node)
        ref = node.pop("$ref", None)
        if isinstance(ref, str):
            target = resolve_ref(ref, self.root, self.defs)
            if ref in stack or target is None:
                return None, stack
            merged = {**target, **{k: v for k, v in node.items() if k in ("description", "title", "default")}}
            return self._resolve(merged, (*stack, ref))
        if "allOf" in node:
            node = self._merge_all_of(node, stack)
        return node, stack

    def restore(self, value: Any, node: Any, stack: tuple[str, ...]) -> Any:
        """``value`` (sent for the converted ``node``) with property names mapped back."""
        node, stack = self._resolve(node, stack)
        if node is None:
            return value
        variants = node.get("anyOf", node.get("oneOf"))
        variants = [v for v in variants if isinstance(v, Mapping)] if isinstance(variants, list) else []
        if isinstance(value, dict):
            props = node.get("properties")
            if isinstance(props, Mapping) and props:
                back = {sent: name for name, sent in param_names(map(str, props), "gemini").items()}
                out = {}
                for key, item in value.items():
                    name = back.get(key, key)
                    out[name] = self.restore(item, props.get(name), stack)
                return out
            if variants:
                return self.restore(value, max(variants, key=lambda v: self._fit(value, v, stack)), stack)
            return value
        if isinstance(value, list):
            items = node.get("items")
            if isinstance(items, list):
                items = items[0] if items else None
            if isinstance(items, Mapping):
                return [self.restore(item, items, stack) for item in value]
            for variant in variants:
                resolved, _ = self._resolve(variant, stack)
                if resolved is not None and ("items" in resolved or resolved.get("type") == "array"):
                    return self.restore(value, variant, stack)
        return value

    def pointer(self, pointer: str) -> str:
        node: Any = self.root
        stack: tuple[str, ...] = ()
        out = []
        for raw in pointer.split("/")[1:]:
            part = raw.replace("~1", "/").replace("~0", "~")
            node, stack = self._resolve(node, stack)
            props = node.get("properties") if node is not None else None
            if node is not None and not (isinstance(props, Mapping) and part in props):
                variants = [v for v in node.get("anyOf", node.get("oneOf")) or [] if isinstance(v, Mapping)]
                for variant in variants:  # the variant that declares this property, if any
                    resolved, _ = self._resolve(variant, stack)
                    if resolved is not None and isinstance(resolved.get("properties"), Mapping) and part in resolved["properties"]:
                        node, props = resolved, resolved["properties"]
                        break
            if isinstance(props, Mapping) and part in props:
                out.append(param_names(map(str, props), "gemini")[part])
                node = props[part]
            else:
                out.append(part)
                items = node.get("items") if node is not None and part.isdigit() else None
                node = (items[0] if items else None) if isinstance(items, list) else items
        return "".join("/" + p.replace("~", "~0").replace("/", "~1") for p in out)

    def _fit(self, value: dict[str, Any], variant: Any, stack: tuple[str, ...]) -> int:
        """How many of ``value``'s keys ``variant`` declares (under the names it sends)."""
        node, _ = self._resolve(variant, stack)
        props = node.get("properties") if node is not None else None
        if not isinstance(props, Mapping):
            return 0
        sent = set(param_names(map(str, props), "gemini").values())
        return sum(1 for key in value if key in sent)

    def _enum(self, node: Mapping[str, Any], out: dict[str, Any]) -> None:
        values = node.get("enum")
        if "const" in node:
            values = [node["const"]]
        if not isinstance(values, list):
            return
        real = [v for v in values if v is not None]
        if None in values:
            out["nullable"] = True
        if real and all(isinstance(v, str) for v in real):
            out["enum"] = real
            out.setdefault("type", "STRING")
        elif real:
            allowed = ", ".join(str(v) for v in real)
            out["description"] = " ".join(p for p in (out.get("description"), f"Allowed values: {allowed}.") if p)

    def _merge_all_of(self, node: dict[str, Any], stack: tuple[str, ...]) -> dict[str, Any]:
        parts = []
        for part in node.pop("allOf"):
            ref = part.get("$ref") if isinstance(part, Mapping) else None
            if isinstance(ref, str) and ref not in stack:
                part = resolve_ref(ref, self.root, self.defs)
            if isinstance(part, Mapping) and "$ref" not in part:
                parts.append(part)
        merged: dict[str, Any] = {}
        props: dict[str, Any] = {}
        required: list[str] = []
        for part in [*parts, node]:
            props.update(part.get("properties") or {})
            required += [r for r in part.get("required") or [] if r not in required]
            merged.update({k: v for k, v in part.items() if k not in ("properties", "required")})
        if props:
            merged["properties"] = props
        if required:
            merged["required"] = required
        return merged
