"""Declaration files: tools described in YAML, JSON or JSONL.

Shapes accepted (see docs/sources.md):

* YAML/JSON, seed-002 ``tools.yaml``: a mapping ``name -> entry`` (or a list of entries
  with ``name``), where an entry may hold ``available``, ``searchable``, ``category``,
  ``tags``, ``display``/``desc`` per language, ``platforms`` (``all`` or a list),
  ``required``, and toolscout's ``input_schema`` (or ``parameters``/``inputSchema``),
  ``output_schema``, ``annotations``, ``permission``, ``defer``, ``kind``, ``meta``;
* JSONL, the evaluation-data shape: one ``{"name", "description", "input_schema",
  "source"}`` per line (``source`` becomes the category, unknown fields go to ``meta``).

Every problem is a :class:`~toolscout.errors.DeclarationError` with the file, the real
line and the field. By default the first one raises and nothing from the file loads;
with ``skip_invalid=True`` bad entries are skipped and returned. A file that cannot be
parsed at all (YAML/JSON syntax) always raises.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from ..errors import DeclarationError
from ..model import KINDS, PERMISSION_KINDS, Annotations, DeferPolicy, Tool
from ._positions import EntryPositions, json_positions, yaml_positions
from ._schemacheck import schema_problem
from ._yaml import load_yaml

__all__ = ["load_declarations"]

_BOOL_FIELDS = ("available", "searchable", "required")
_SCHEMA_KEYS = ("input_schema", "parameters", "inputSchema")
_OUTPUT_KEYS = ("output_schema", "outputSchema")
_BINDINGS = ("handler", "http", "upstream")
"""What runs a declared tool (at most one; none: the tool is metadata only). Kept in
``Tool.meta`` under :data:`BINDING` and bound by :mod:`toolscout.sources.bindings`."""
BINDING = "binding"
_KNOWN = {"name", "description", "desc", "display", "category", "source", "tags", "platforms",
          "permission", "defer", "kind", "annotations", "meta", *(_BOOL_FIELDS), *(_SCHEMA_KEYS), *(_OUTPUT_KEYS),
          *_BINDINGS}
_HANDLER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
_UPSTREAM = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}/[A-Za-z0-9_.\-/]{1,128}$")
_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
_HTTP_KEYS = {"method", "url", "headers", "body"}
_SNAKE_HINTS = {"read_only": "readOnlyHint", "destructive": "destructiveHint",
                "idempotent": "idempotentHint", "open_world": "openWorldHint"}


class _EntryError(Exception):
    def __init__(self, message: str, field: str | None = None, hint: str | None = None) -> None:
        super().__init__(message)
        self.field, self.hint = field, hint


def load_declarations(
    path: Path, *, skip_invalid: bool = False, lang: str | None = None
) -> tuple[list[Tool], list[DeclarationError]]:
    """Parse one declaration file into tools (and, with ``skip_invalid``, the skipped errors)."""
    file = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise DeclarationError(f"cannot read the file: {exc}", file=file) from exc
    try:
        return _load(text, file, Path(path).suffix.lower(), skip_invalid, lang)
    except RecursionError:
        raise DeclarationError("the file nests too deeply to be a tool declaration", file=file) from None


def _load(
    text: str, file: str, suffix: str, skip_invalid: bool, lang: str | None
) -> tuple[list[Tool], list[DeclarationError]]:
    if suffix == ".jsonl":
        items = _jsonl_items(text, file)
    elif suffix in (".yaml", ".yml"):
        items = _document_items(text, file, yaml_=True)
    elif suffix == ".json":
        items = _document_items(text, file, yaml_=False)
    else:
        raise DeclarationError(
            f"unsupported declaration file type '{suffix or '(none)'}'",
            file=file,
            hint="Use .yaml, .yml, .json or .jsonl.",
        )
    tools: list[Tool] = []
    skipped: list[DeclarationError] = []
    seen: dict[str, int] = {}
    for item in items:
        if isinstance(item, DeclarationError):
            if not skip_invalid:
                raise item
            skipped.append(item)
            continue
        key, entry, line, fields = item
        try:
            tool = _entry_tool(key, entry, lang=lang, source_id=file, origin=f"{file}:{line}")
            if tool.name in seen:
                raise _EntryError(
                    f"duplicate tool name '{tool.name}' (first declared on line {seen[tool.name]})", "name"
                )
        except _EntryError as exc:
            err = DeclarationError(
                str(exc), file=file, line=fields.get(exc.field or "", line), field=exc.field, hint=exc.hint
            )
            if not skip_invalid:
                raise err from None
            skipped.append(err)
            continue
        seen[tool.name] = line
        tools.append(tool)
    return tools, skipped


_Item = tuple[str | None, Any, int, dict[str, int]]


def _jsonl_items(text: str, file: str) -> list[_Item | DeclarationError]:
    out: list[_Item | DeclarationError] = []
    for lineno, raw in enumerate(text.split("\n"), 1):
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except json.JSONDecodeError as exc:
            out.append(DeclarationError(f"invalid JSON: {exc.msg} (column {exc.colno})", file=file, line=lineno))
            continue
        except ValueError as exc:  # e.g. an integer of more than 4300 digits
            out.append(DeclarationError(f"invalid JSON: {exc}", file=file, line=lineno))
            continue
        except RecursionError:
            out.append(DeclarationError("the line nests too deeply", file=file, line=lineno))
            continue
        out.append((None, entry, lineno, {}))
    return out


def _document_items(text: str, file: str, *, yaml_: bool) -> list[_Item]:
    try:
        if yaml_:
            data, root = load_yaml(text)
            positions = yaml_positions(root=root) if root is not None else EntryPositions()
        else:
            data = json.loads(text)
            positions = json_positions(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise DeclarationError(f"invalid YAML: {problem}", file=file, line=mark.line + 1 if mark else None) from None
    except json.JSONDecodeError as exc:
        raise DeclarationError(f"invalid JSON: {exc.msg}", file=file, line=exc.lineno) from None
    except ValueError as exc:  # an integer of more than 4300 digits, a bad !!timestamp...
        kind = "YAML" if yaml_ else "JSON"
        raise DeclarationError(f"invalid {kind}: {exc}", file=file) from None
    if data is None:
        return []
    if isinstance(data, Mapping):
        return _mapping_items(data, positions, file)
    if isinstance(data, list):
        return [
            (None, entry, _at(positions.entries, i, 1), _at(positions.fields, i, {}))
            for i, entry in enumerate(data)
        ]
    raise DeclarationError("the file must hold a mapping of tools or a list of tools", file=file, line=1)


def _mapping_items(data: Mapping[str, Any], positions: EntryPositions, file: str) -> list[_Item]:
    # yaml/json keep only the last of duplicate keys: find duplicates from the positions.
    first: dict[str, int] = {}
    for key, line in zip(positions.keys, positions.entries, strict=False):
        if key in first:
            raise DeclarationError(
                f"duplicate tool name '{key}' (first declared on line {first[key]})",
                file=file, line=line, field="name",
            )
        first[key] = line
    index = {k: i for i, k in enumerate(positions.keys)}
    items: list[_Item] = []
    for key, entry in data.items():
        i = index.get(str(key), -1)
        items.append((str(key), entry, _at(positions.entries, i, 1), _at(positions.fields, i, {})))
    return items


def _at(seq: list[Any], i: int, default: Any) -> Any:
    return seq[i] if 0 <= i < len(seq) else default


def _entry_tool(
    key: str | None, entry: Any, *, lang: str | None = None, source_id: str | None = None, origin: str | None = None
) -> Tool:
    """One declaration entry (seed-002 or data shape) -> :class:`Tool`; raises :class:`_EntryError`."""
    if entry is None and key:
        entry = {}
    if not isinstance(entry, Mapping):
        what = f"entry '{key}'" if key is not None else "an entry"
        raise _EntryError(f"{what} must be a mapping, not {type(entry).__name__}", key)
    name = key if key is not None else entry.get("name")
    if name is None:
        raise _EntryError("the entry has no name", "name")
    if not isinstance(name, str) or not name.strip():
        raise _EntryError(f"name must be a non-empty string, not {name!r}", "name")
    for f in _BOOL_FIELDS:
        if f in entry and not isinstance(entry[f], bool):
            raise _EntryError(f"'{name}': {f} must be true or false, not {entry[f]!r}", f)
    descriptions = _languages(entry, "desc", name) or _languages(entry, "description", name)
    display = _languages(entry, "display", name)
    category = entry.get("category", entry.get("source"))
    if category is not None and not isinstance(category, str):
        raise _EntryError(f"'{name}': category must be a string", "category" if "category" in entry else "source")
    tags = entry.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        raise _EntryError(f"'{name}': tags must be a list of strings", "tags")
    platforms = entry.get("platforms", "all")
    if platforms == "all" or platforms is None:
        platforms = []
    elif isinstance(platforms, str):
        platforms = [platforms]
    if not isinstance(platforms, list) or not all(isinstance(p, str) for p in platforms):
        raise _EntryError(f"'{name}': platforms must be 'all' or a list of strings", "platforms")
    permission = entry.get("permission")
    if permission is not None and permission not in PERMISSION_KINDS:
        raise _EntryError(f"'{name}': permission must be one of {', '.join(PERMISSION_KINDS)}", "permission")
    kind = entry.get("kind", "tool")
    if kind not in KINDS:
        raise _EntryError(f"'{name}': kind must be one of {', '.join(KINDS)}", "kind")
    defer = entry.get("defer")
    if defer is None:
        defer = DeferPolicy.NEVER if entry.get("required") is True else DeferPolicy.AUTOMATIC
    elif not isinstance(defer, str) or defer not in {p.value for p in DeferPolicy}:
        raise _EntryError(f"'{name}': defer must be one of never, automatic, always", "defer")
    schema, schema_key = _schema(entry, _SCHEMA_KEYS, name, require_object=True)
    output, output_key = _schema(entry, _OUTPUT_KEYS, name, require_object=False)
    meta = entry.get("meta", {})
    if not isinstance(meta, Mapping):
        raise _EntryError(f"'{name}': meta must be a mapping", "meta")
    meta = {**{k: v for k, v in entry.items() if k not in _KNOWN}, **meta}
    if "required" in entry:
        meta["required"] = entry["required"]
    binding = _binding(entry, name)
    if binding is not None:
        meta[BINDING] = binding
    chosen = _choose(descriptions, lang)
    annotations = _annotations(entry, name)
    try:
        return Tool(
            name,
            chosen,
            schema or None,
            output_schema=output or None,
            source="file",
            source_id=source_id,
            origin=origin,
            category=category,
            tags=tags,
            annotations=annotations,
            permission=permission,
            searchable=entry.get("searchable", True),
            available=entry.get("available", True),
            platforms=platforms,
            defer=defer,
            display=display,
            descriptions=descriptions if len(descriptions) > 1 or "" not in descriptions else {},
            meta=meta,
            kind=kind,
        )
    except DeclarationError as exc:  # a value Tool refuses: not JSON data, a lone surrogate...
        text_key = "desc" if "desc" in entry else "description"
        field = {"input_schema": schema_key, "output_schema": output_key, "annotations.title": "annotations",
                 "description": text_key, "descriptions": text_key}.get(exc.field or "", exc.field)
        raise _EntryError(exc.message.removesuffix(f" (field '{exc.field}')"), field, exc.hint or None) from None


def _languages(entry: Mapping[str, Any], key: str, name: str) -> dict[str, str]:
    value = entry.get(key)
    if value is None:
        return {}
    if isinstance(value, str):
        return {"": value}
    if isinstance(value, Mapping) and all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
        return dict(value)
    raise _EntryError(f"'{name}': {key} must be a string or a mapping of language -> string", key)


def _choose(texts: Mapping[str, str], lang: str | None) -> str:
    for key in (lang, "", "en"):
        if key is not None and key in texts:
            return texts[key]
    return next(iter(texts.values()), "")


def _schema(entry: Mapping[str, Any], keys: tuple[str, ...], name: str, *, require_object: bool) -> tuple[Any, str | None]:
    present = [k for k in keys if k in entry]
    if not present:
        return None, None
    key = present[0]
    problem = schema_problem(entry[key], require_object=require_object)
    if problem:
        raise _EntryError(f"'{name}': {key} {problem}", key)
    return entry[key], key


def _annotations(entry: Mapping[str, Any], name: str) -> Annotations | None:
    data = entry.get("annotations")
    if data is None:
        return None
    if not isinstance(data, Mapping):
        raise _EntryError(f"'{name}': annotations must be a mapping", "annotations")
    mcp = {_SNAKE_HINTS.get(k, k): v for k, v in data.items()}
    bad = [k for k, v in mcp.items() if isinstance(k, str) and k.endswith("Hint") and not isinstance(v, bool)]
    if bad:
        raise _EntryError(f"'{name}': annotation {bad[0]} must be true or false", "annotations")
    return Annotations.from_mcp(mcp)


def _binding(entry: Mapping[str, Any], name: str) -> dict[str, Any] | None:
    """The entry's ``handler``, ``http`` or ``upstream``, its shape checked (what it names is
    checked when the source loads: the module imported, the server looked up)."""
    given = [k for k in _BINDINGS if k in entry]
    if not given:
        return None
    if len(given) > 1:
        raise _EntryError(f"'{name}': give one of handler, http or upstream, not {' and '.join(given)}", given[1])
    key = given[0]
    value = entry[key]
    if key == "handler":
        if not isinstance(value, str) or not _HANDLER.match(value):
            raise _EntryError(f"'{name}': handler must be 'package.module:function'", key)
        return {"handler": value}
    if key == "upstream":
        if not isinstance(value, str) or not _UPSTREAM.match(value):
            raise _EntryError(f"'{name}': upstream must be 'server/tool' (a server in mcpServers, its own tool name)", key)
        return {"upstream": value}
    if not isinstance(value, Mapping) or not isinstance(value.get("url"), str):
        raise _EntryError(f"'{name}': http must be a mapping with a 'url'", key)
    unknown = sorted(set(value) - _HTTP_KEYS)
    if unknown:
        raise _EntryError(f"'{name}': http has no field {unknown[0]!r} (method, url, headers, body)", key)
    if not value["url"].startswith(("http://", "https://")):
        raise _EntryError(f"'{name}': http.url must start with http:// or https://", key)
    method = value.get("method", "GET")
    if not isinstance(method, str) or method.upper() not in _METHODS:
        raise _EntryError(f"'{name}': http.method must be one of {', '.join(_METHODS)}", key)
    headers = value.get("headers", {})
    if not isinstance(headers, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in headers.items()):
        raise _EntryError(f"'{name}': http.headers must map names to strings", key)
    out: dict[str, Any] = {"http": {"method": method.upper(), "url": value["url"], "headers": dict(headers)}}
    if "body" in value:
        out["http"]["body"] = value["body"]
    return out
