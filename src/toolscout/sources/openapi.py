"""OpenAPI 3 operations as tools: one tool per operation, executed over HTTP with httpx.

Each operation's path, query, header and cookie parameters and its JSON request body are
merged into one object schema, because a model passes one JSON object of arguments:

* body properties join the parameters at the top level (a clash is renamed ``body_<name>``);
  a body that is not an object becomes one ``body`` argument;
* a parameter name used in two places (``id`` in the path and the query) is renamed
  ``<in>_<name>`` for the later one;
* ``#/components/schemas/X`` references become ``#/$defs/X`` (only the ones used are
  copied), and OpenAPI 3.0's ``nullable`` becomes a JSON Schema type union.

The name is the ``operationId`` (else ``<method>_<path>``), reduced to the characters
every provider accepts (``[A-Za-z0-9_-]``, at most 64). GET/HEAD operations are marked
read-only, DELETE destructive, PUT/DELETE idempotent, all open-world.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import yaml

from ..errors import DeclarationError, ToolFailed
from ..model import Annotations, Tool
from .definitions import normalize_openapi_types

__all__ = ["tools_from_openapi"]

Handler = Callable[[dict[str, Any]], Awaitable[Any]]
_METHODS = ("get", "put", "post", "delete", "patch", "head", "options")
_REF = "#/components/schemas/"


def tools_from_openapi(
    spec: Mapping[str, Any] | str | Path,
    *,
    base_url: str,
    headers: Mapping[str, str] | None = None,
    transport: httpx.AsyncBaseTransport | None = None,
    timeout: float = 30.0,
) -> list[tuple[Tool, Handler]]:
    """One ``(Tool, handler)`` per operation of an OpenAPI 3 document (dict or file path)."""
    doc = _load(spec)
    source_id = str((doc.get("info") or {}).get("title") or base_url)
    schemas = ((doc.get("components") or {}).get("schemas")) or {}
    out: list[tuple[Tool, Handler]] = []
    seen: set[str] = set()
    for path, item in (doc.get("paths") or {}).items():
        if not isinstance(item, Mapping):
            continue
        shared = [_deref(p, doc) for p in item.get("parameters") or []]
        for method in _METHODS:
            op = item.get(method)
            if not isinstance(op, Mapping):
                continue
            name = _name(op.get("operationId") or f"{method}_{path}")
            if name in seen:
                raise DeclarationError(f"two operations are named '{name}'", file=source_id, field="operationId")
            seen.add(name)
            own = [_deref(p, doc) for p in op.get("parameters") or []]
            params = {(p.get("in"), p.get("name")): p for p in [*shared, *own] if isinstance(p, Mapping)}
            schema, routes = _arguments(list(params.values()), _body(op, doc), schemas)
            text = "\n\n".join(t for t in (op.get("summary"), op.get("description")) if isinstance(t, str) and t)
            tags = [t for t in op.get("tags") or [] if isinstance(t, str)]
            tool = Tool(
                name,
                text,
                schema,
                source="openapi",
                source_id=source_id,
                origin=f"openapi:{method.upper()} {path}",
                category=tags[0] if tags else source_id,
                tags=tags,
                annotations=Annotations(
                    read_only=method in ("get", "head") or None,
                    destructive=True if method == "delete" else None,
                    idempotent=method in ("get", "head", "put", "delete") or None,
                    open_world=True,
                ),
                meta={"http": {"method": method.upper(), "path": path}},
            )
            request = _Request(method.upper(), path, routes, base_url, dict(headers or {}), transport, timeout)
            out.append((tool, request.send))
    return out


def _load(spec: Mapping[str, Any] | str | Path) -> Mapping[str, Any]:
    if isinstance(spec, Mapping):
        return spec
    path = Path(spec)
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise DeclarationError(f"cannot read the OpenAPI document: {exc}", file=str(path)) from exc
    if not isinstance(data, Mapping) or "paths" not in data:
        raise DeclarationError("not an OpenAPI document (no 'paths')", file=str(path), field="paths")
    return data


def _name(raw: str) -> str:
    name = re.sub(r"[^A-Za-z0-9-]+", "_", raw).strip("_") or "operation"
    return name[:64]


def _deref(node: Any, doc: Mapping[str, Any]) -> Any:
    """Follow a local ``$ref`` (parameters, request bodies) to its target."""
    seen = 0
    while isinstance(node, Mapping) and isinstance(node.get("$ref"), str) and seen < 16:
        target: Any = doc
        for part in node["$ref"].lstrip("#/").split("/"):
            target = target.get(part) if isinstance(target, Mapping) else None
        node, seen = target, seen + 1
    return node


def _body(op: Mapping[str, Any], doc: Mapping[str, Any]) -> tuple[dict[str, Any], bool] | None:
    body = _deref(op.get("requestBody"), doc)
    if not isinstance(body, Mapping):
        return None
    content = body.get("content") or {}
    for mime, media in content.items():
        if "json" in mime and isinstance(media, Mapping):
            return _resolve_top(media.get("schema"), doc), bool(body.get("required"))
    return None


def _resolve_top(schema: Any, doc: Mapping[str, Any]) -> dict[str, Any]:
    """The body schema itself, with a top-level component ``$ref`` followed once."""
    target = _deref(schema, doc) if isinstance(schema, Mapping) and "$ref" in schema else schema
    return dict(target) if isinstance(target, Mapping) else {}


def _arguments(
    params: list[Mapping[str, Any]], body: tuple[dict[str, Any], bool] | None, components: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, tuple[str, str]]]:
    """The merged argument schema, and where each argument goes: ``arg -> (location, name)``."""
    props: dict[str, Any] = {}
    required: list[str] = []
    routes: dict[str, tuple[str, str]] = {}
    for p in params:
        where, pname = p.get("in"), p.get("name")
        if where not in ("path", "query", "header", "cookie") or not isinstance(pname, str):
            continue
        arg = pname if pname not in props else f"{where}_{pname}"
        schema = dict(p.get("schema") or {"type": "string"})
        if isinstance(p.get("description"), str):
            schema.setdefault("description", p["description"])
        props[arg] = schema
        routes[arg] = (where, pname)
        if p.get("required") or where == "path":
            required.append(arg)
    if body is not None:
        schema, body_required = body
        if schema.get("type") == "object" or "properties" in schema:
            for bname, sub in (schema.get("properties") or {}).items():
                arg = bname if bname not in props else f"body_{bname}"
                props[arg] = sub
                routes[arg] = ("body", bname)
                if body_required and bname in (schema.get("required") or []):
                    required.append(arg)
        else:
            props["body"] = schema
            routes["body"] = ("body", "")
            if body_required:
                required.append("body")
    out: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        out["required"] = required
    out = _rewrite_refs(normalize_openapi_types(out))
    defs = _used_components(out, components)
    if defs:
        out["$defs"] = defs
    return out, routes


def _rewrite_refs(node: Any) -> Any:
    if isinstance(node, Mapping):
        return {
            k: (v.replace(_REF, "#/$defs/", 1) if k == "$ref" and isinstance(v, str) else _rewrite_refs(v))
            for k, v in node.items()
        }
    if isinstance(node, list):
        return [_rewrite_refs(v) for v in node]
    return node


def _used_components(schema: Any, components: Mapping[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, Mapping):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/"):
                key = ref[len("#/$defs/"):]
                if key not in found and key in components:
                    found[key] = _rewrite_refs(normalize_openapi_types(components[key]))
                    stack.append(found[key])
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return found


class _Request:
    """Turns validated arguments into one HTTP request and its decoded answer."""

    def __init__(
        self,
        method: str,
        path: str,
        routes: dict[str, tuple[str, str]],
        base_url: str,
        headers: dict[str, str],
        transport: httpx.AsyncBaseTransport | None,
        timeout: float,
    ) -> None:
        self.method, self.path, self.routes = method, path, routes
        self.base_url, self.headers, self.transport, self.timeout = base_url, headers, transport, timeout

    async def send(self, arguments: dict[str, Any]) -> Any:
        path = self.path
        query: dict[str, Any] = {}
        headers = dict(self.headers)
        cookies: dict[str, str] = {}
        body: Any = None
        for arg, value in (arguments or {}).items():
            where, name = self.routes.get(arg, ("", ""))
            if where == "path":
                path = path.replace("{" + name + "}", quote(str(value), safe=""))
            elif where == "query":
                query[name] = value
            elif where == "header":
                headers[name] = str(value)
            elif where == "cookie":
                cookies[name] = str(value)
            elif where == "body" and name:
                body = {**(body or {}), name: value}
            elif where == "body":
                body = value
        async with httpx.AsyncClient(
            base_url=self.base_url, transport=self.transport, timeout=self.timeout, cookies=cookies
        ) as client:
            response = await client.request(
                self.method, path, params=query, headers=headers, json=body if body is not None else None
            )
        if response.status_code >= 400:
            raise ToolFailed(
                f"{self.method} {path} answered HTTP {response.status_code}: {response.text[:500]}",
                status=response.status_code,
            )
        if "json" in response.headers.get("content-type", ""):
            return response.json()
        return response.text
