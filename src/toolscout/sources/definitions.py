"""Tool definitions users already have, in any common dialect, as :class:`Tool` records.

The dialect is detected per entry, from its shape:

==========================  ===============================================================
OpenAI Chat Completions     ``{"type": "function", "function": {name, description, parameters}}``
OpenAI Responses            ``{"type": "function", "name", "description", "parameters"}``
Anthropic                   ``{"name", "description", "input_schema"}``
toolscout data (JSONL)      ``{"name", "description", "input_schema", "source"}``
MCP ``Tool`` / generic      ``{"name", "title"?, "description", "inputSchema", "outputSchema"?,
                            "annotations"?}``
Gemini declaration          ``{"name", "description", "parameters"}`` (upper-case OpenAPI
                            types and ``nullable`` are normalised to JSON Schema)
==========================  ===============================================================

A malformed entry raises :class:`~toolscout.errors.DeclarationError` naming the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import DeclarationError
from ..model import Annotations, Tool
from ._schemacheck import schema_problem

__all__ = [
    "definitions_from_mcp_tools",
    "detect_dialect",
    "normalize_openapi_types",
    "tool_from_definition",
    "tools_from_definitions",
]

_KNOWN = {"name", "description", "parameters", "input_schema", "inputSchema", "outputSchema",
          "annotations", "title", "type", "function", "strict", "source", "category", "tags",
          "_meta", "response"}


def detect_dialect(d: Mapping[str, Any]) -> str:
    """Name the dialect of one definition (``openai``, ``openai-responses``, ``anthropic``,
    ``data``, ``mcp``, ``gemini``), or ``unknown``."""
    if d.get("type") == "function" and isinstance(d.get("function"), Mapping):
        return "openai"
    if d.get("type") == "function":
        return "openai-responses"
    if "input_schema" in d:
        return "data" if "source" in d else "anthropic"
    if "inputSchema" in d:
        return "mcp"
    if "parameters" in d:
        return "gemini"
    return "unknown" if "name" not in d else "bare"


def tools_from_definitions(definitions: Iterable[Mapping[str, Any]], *, source: str = "definitions") -> list[Tool]:
    """Tools from a list of definitions (``origin`` = ``source[i]``); refuses what is not a list."""
    if isinstance(definitions, Mapping):
        raise DeclarationError(
            f"{source}: expected a list of tool definitions, got one definition (an object)",
            hint="Wrap it in a list: add_definitions([definition]).",
        )
    if isinstance(definitions, str | bytes) or not isinstance(definitions, Iterable):
        raise DeclarationError(f"{source}: expected a list of tool definitions, not {type(definitions).__name__}")
    return [tool_from_definition(d, source=source, origin=f"{source}[{i}]") for i, d in enumerate(definitions)]


def tool_from_definition(d: Mapping[str, Any], *, source: str = "definitions", origin: str | None = None) -> Tool:
    """Build a :class:`Tool` from one definition dict in any supported dialect."""
    where = origin or source
    try:
        return _definition_tool(d, source, origin, where)
    except RecursionError:
        raise DeclarationError(f"{where}: the definition nests too deeply") from None


def _definition_tool(d: Mapping[str, Any], source: str, origin: str | None, where: str) -> Tool:
    if not isinstance(d, Mapping):
        raise DeclarationError(f"{where}: a tool definition must be an object, not {type(d).__name__}")
    for key in ("function_declarations", "functionDeclarations"):
        if key in d:
            raise DeclarationError(
                f"{where}: a Gemini Tool holds several declarations",
                field=key,
                hint=f"Pass the list itself: add_definitions(tool[{key!r}]).",
            )
    dialect = detect_dialect(d)
    body: Mapping[str, Any] = d["function"] if dialect == "openai" else d
    name = body.get("name")
    if not isinstance(name, str) or not name.strip():
        raise DeclarationError(f"{where}: the definition has no name", field="name")
    description = body.get("description", "")
    if description is None:
        description = ""
    if not isinstance(description, str):
        raise DeclarationError(f"{where}: '{name}' description must be a string", field="description")
    key = {"anthropic": "input_schema", "data": "input_schema", "mcp": "inputSchema"}.get(dialect, "parameters")
    schema = body.get(key) or {}
    if dialect == "gemini":
        schema = normalize_openapi_types(schema)
    problem = schema_problem(schema)
    if problem:
        raise DeclarationError(f"{where}: '{name}' {key} {problem}", field=key)
    output = d.get("outputSchema")
    if dialect == "gemini" and isinstance(d.get("response"), Mapping):
        output = normalize_openapi_types(d["response"])
    if output is not None:
        problem = schema_problem(output, require_object=False)
        if problem:
            raise DeclarationError(f"{where}: '{name}' output schema {problem}", field="outputSchema")
    annotations = d.get("annotations")
    if annotations is not None and not isinstance(annotations, Mapping):
        raise DeclarationError(f"{where}: '{name}' annotations must be an object", field="annotations")
    ann = Annotations.from_mcp(annotations)
    title = d.get("title")
    if isinstance(title, str) and title and (ann is None or ann.title is None):
        ann = Annotations(**{**_fields(ann), "title": title})
    category = d.get("category") or d.get("source")
    tags = d.get("tags") or ()
    if not isinstance(tags, list | tuple) or not all(isinstance(t, str) for t in tags):
        raise DeclarationError(f"{where}: '{name}' tags must be a list of strings", field="tags")
    meta = {k: v for k, v in d.items() if k not in _KNOWN}
    if "inputExamples" in meta and "input_examples" not in meta:  # the camelCase spelling
        meta["input_examples"] = meta.pop("inputExamples")
    examples = meta.get("input_examples")
    if examples is not None and not (isinstance(examples, list) and all(isinstance(e, Mapping) for e in examples)):
        raise DeclarationError(f"{where}: '{name}' input_examples must be a list of objects", field="input_examples")
    if isinstance(d.get("_meta"), Mapping):
        meta["_meta"] = dict(d["_meta"])
    if body.get("strict") is True:
        meta["strict"] = True
    try:
        return Tool(
            name,
            description,
            schema or None,
            output_schema=output or None,
            source=source,
            origin=origin,
            category=category if isinstance(category, str) else None,
            tags=tags,
            annotations=ann,
            meta=meta,
        )
    except DeclarationError as exc:  # a value Tool refuses: not JSON data, a lone surrogate...
        field = {"input_schema": key, "output_schema": "outputSchema"}.get(exc.field or "", exc.field)
        reason = exc.message.removesuffix(f" (field '{exc.field}')")
        raise DeclarationError(f"{where}: {reason}", field=field, hint=exc.hint or None) from None


def definitions_from_mcp_tools(tools: Iterable[Any], *, source: str = "mcp", source_id: str | None = None) -> list[Tool]:
    """Tools from MCP ``Tool`` objects (pydantic models from the ``mcp`` SDK) or their dicts."""
    out = []
    for i, t in enumerate(tools):
        d = t.model_dump(by_alias=True, exclude_none=True) if hasattr(t, "model_dump") else t
        tool = tool_from_definition(d, source=source, origin=f"{source_id or source}[{i}]")
        out.append(tool.replace(source_id=source_id) if source_id else tool)
    return out


def _fields(ann: Annotations | None) -> dict[str, Any]:
    if ann is None:
        return {}
    return {"title": ann.title, "read_only": ann.read_only, "destructive": ann.destructive,
            "idempotent": ann.idempotent, "open_world": ann.open_world}


def normalize_openapi_types(schema: Any) -> Any:
    """Gemini/OpenAPI-flavoured schema -> JSON Schema: lower-case types, ``nullable`` ->
    ``["T", "null"]``, Gemini-only keys (``propertyOrdering``, ``format: enum``) dropped."""
    if isinstance(schema, list):
        return [normalize_openapi_types(s) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "propertyOrdering" or (key == "format" and value == "enum"):
            continue
        if key == "type" and isinstance(value, str):
            lowered = value.lower()
            if lowered != "type_unspecified":
                out["type"] = lowered
        elif key in ("properties", "$defs", "definitions") and isinstance(value, Mapping):
            out[key] = {k: normalize_openapi_types(v) for k, v in value.items()}
        elif key in ("items", "anyOf", "oneOf", "allOf", "additionalProperties", "not"):
            out[key] = normalize_openapi_types(value)
        elif key == "nullable":
            continue
        else:
            out[key] = value
    if schema.get("nullable") is True:
        if isinstance(out.get("type"), str):
            out["type"] = [out["type"], "null"]
        elif isinstance(out.get("anyOf"), list):
            out["anyOf"] = [*out["anyOf"], {"type": "null"}]
    return out
