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
import os
import re
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import yaml

from ..errors import DeclarationError, ToolFailed
from ..model import Annotations, Tool
from ._yaml import load_yaml
from .definitions import normalize_openapi_types

if TYPE_CHECKING:
    import httpx

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
    """One ``(Tool, handler)`` per operation of an OpenAPI 3 document (dict or file path).

    A malformed document raises :class:`DeclarationError` naming the operation and field.
    Only local ``$ref``s (``#/...``) are followed; a remote one is never fetched: in a
    schema it stays as written, as a parameter or request body it is an error.
    """
    doc = _load(spec)
    info = doc.get("info")
    title = info.get("title") if isinstance(info, Mapping) else None
    source_id = title if isinstance(title, str) and title.strip() else base_url
    components = doc.get("components")
    schemas = components.get("schemas") if isinstance(components, Mapping) else None
    paths = doc.get("paths") or {}
    if not isinstance(paths, Mapping):
        raise DeclarationError(f"'paths' must be an object, not {type(paths).__name__}", file=source_id, field="paths")
    out: list[tuple[Tool, Handler]] = []
    seen: set[str] = set()
    for raw_path, item in paths.items():
        path = str(raw_path)
        if not isinstance(item, Mapping):
            continue
        for method in _METHODS:
            op = item.get(method)
            if not isinstance(op, Mapping):
                continue
            where = f"openapi:{method.upper()} {path}"
            try:
                tool, routes = _operation(doc, item, op, method, path, source_id, schemas if isinstance(schemas, Mapping) else {})
            except RecursionError:
                raise DeclarationError("the operation nests too deeply", file=where) from None
            except DeclarationError as exc:  # name the operation (Tool(...) does not know it)
                if exc.file is not None:
                    raise
                reason = exc.message.removesuffix(f" (field '{exc.field}')")
                raise DeclarationError(reason, file=where, field=exc.field, hint=exc.hint or None) from None
            if tool.name in seen:
                raise DeclarationError(f"two operations are named '{tool.name}'", file=source_id, field="operationId")
            seen.add(tool.name)
            request = _Request(method.upper(), path, routes, base_url, dict(headers or {}), transport, timeout)
            out.append((tool, request.send))
    return out


def _operation(
    doc: Mapping[str, Any],
    item: Mapping[str, Any],
    op: Mapping[str, Any],
    method: str,
    path: str,
    source_id: str,
    schemas: Mapping[str, Any],
) -> tuple[Tool, dict[str, tuple[str, str]]]:
    operation_id = op.get("operationId")
    if operation_id is not None and not isinstance(operation_id, str):
        raise DeclarationError(f"operationId must be a string, not {type(operation_id).__name__}", field="operationId")
    name = _name(operation_id or f"{method}_{path}")
    shared = _parameters(item.get("parameters"), doc)
    own = _parameters(op.get("parameters"), doc)
    params = {  # an operation's own parameter overrides a path-level one with the same (in, name)
        (p.get("in"), p.get("name")): p for p in [*shared, *own] if isinstance(p.get("in"), str) and isinstance(p.get("name"), str)
    }
    schema, routes = _arguments(list(params.values()), _body(op, doc), schemas)
    text = "\n\n".join(t for t in (op.get("summary"), op.get("description")) if isinstance(t, str) and t)
    raw_tags = op.get("tags")
    tags = [t for t in raw_tags if isinstance(t, str)] if isinstance(raw_tags, list) else []
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
    return tool, routes


def _load(spec: Mapping[str, Any] | str | Path) -> Mapping[str, Any]:
    if isinstance(spec, Mapping):
        return spec
    if not isinstance(spec, str | os.PathLike):
        raise DeclarationError(f"an OpenAPI document is a mapping or a file path, not {type(spec).__name__}")
    path = Path(spec)
    try:
        text = path.read_text(encoding="utf-8")
        data = json.loads(text) if path.suffix == ".json" else load_yaml(text)[0]
    except (OSError, ValueError, yaml.YAMLError) as exc:
        raise DeclarationError(f"cannot read the OpenAPI document: {exc}", file=str(path)) from exc
    except RecursionError:
        raise DeclarationError("the OpenAPI document nests too deeply", file=str(path)) from None
    if not isinstance(data, Mapping) or "paths" not in data:
        raise DeclarationError("not an OpenAPI document (no 'paths')", file=str(path), field="paths")
    return data


def _name(raw: str) -> str:
    name = re.sub(r"[^A-Za-z0-9-]+", "_", raw).strip("_") or "operation"
    return name[:64]


def _deref(node: Any, doc: Mapping[str, Any], what: str) -> Any:
    """Follow a local ``$ref`` (parameters, request bodies) to its target; anything else
    that is a ``$ref`` (remote, dangling, circular) is a :class:`DeclarationError`."""
    for _ in range(16):
        if not (isinstance(node, Mapping) and "$ref" in node):
            return node
        ref = node["$ref"]
        if not isinstance(ref, str) or not ref.startswith("#"):
            raise DeclarationError(
                f"{what} $ref {ref!r} is not a local reference ('#/...')",
                field="$ref",
                hint="Only references inside the document are followed (nothing is fetched); inline the target.",
            )
        node = _pointer(doc, ref)
        if node is None:
            raise DeclarationError(f"{what} $ref {ref!r} points at nothing", field="$ref")
    raise DeclarationError(f"{what} $ref chain is circular or longer than 16", field="$ref")


def _pointer(doc: Any, ref: str) -> Any:
    target = doc
    for part in ref[1:].split("/")[1:] if ref != "#" else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(target, Mapping):
            target = target.get(part)
        elif isinstance(target, list) and part.isdigit() and int(part) < len(target):
            target = target[int(part)]
        else:
            return None
    return target


def _parameters(raw: Any, doc: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise DeclarationError(f"parameters must be a list, not {type(raw).__name__}", field="parameters")
    out = []
    for p in raw:
        p = _deref(p, doc, "a parameter")
        if not isinstance(p, Mapping):
            raise DeclarationError(f"a parameter must be an object, not {type(p).__name__}", field="parameters")
        out.append(p)
    return out


def _body(op: Mapping[str, Any], doc: Mapping[str, Any]) -> tuple[dict[str, Any], bool] | None:
    body = _deref(op.get("requestBody"), doc, "the request body")
    if not isinstance(body, Mapping):
        return None
    content = body.get("content") or {}
    if not isinstance(content, Mapping):
        raise DeclarationError(f"requestBody.content must be an object, not {type(content).__name__}",
                               field="requestBody")
    for mime, media in content.items():
        if isinstance(mime, str) and "json" in mime and isinstance(media, Mapping):
            return _resolve_top(media.get("schema"), doc), bool(body.get("required"))
    return None


def _resolve_top(schema: Any, doc: Mapping[str, Any]) -> dict[str, Any]:
    """The body schema itself, with a top-level local ``$ref`` followed (a remote one stays
    as written: the tool's schema then says so, and nothing is fetched)."""
    target = schema
    for _ in range(16):
        ref = target.get("$ref") if isinstance(target, Mapping) else None
        if not (isinstance(ref, str) and ref.startswith("#")):
            break
        target = _pointer(doc, ref)
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
        raw = p.get("schema") or {"type": "string"}
        if not isinstance(raw, Mapping):
            raise DeclarationError(f"parameter '{pname}': schema must be an object, not {type(raw).__name__}",
                                   field="parameters")
        schema = dict(raw)
        if isinstance(p.get("description"), str):
            schema.setdefault("description", p["description"])
        props[arg] = schema
        routes[arg] = (where, pname)
        if p.get("required") or where == "path":
            required.append(arg)
    if body is not None:
        schema, body_required = body
        if schema.get("type") == "object" or "properties" in schema:
            properties = schema.get("properties") or {}
            wanted = schema.get("required") or []
            if not isinstance(properties, Mapping) or not isinstance(wanted, list):
                raise DeclarationError("the request body's properties/required are malformed", field="requestBody")
            for raw_name, sub in properties.items():
                bname = str(raw_name)
                arg = bname if bname not in props else f"body_{bname}"
                props[arg] = sub
                routes[arg] = ("body", bname)
                if body_required and bname in wanted:
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
        # Not at the top: httpx pulls in rich, and loading a spec must not put either on
        # the serve path (tests/cli/test_startup.py); the first call pays for it once.
        import httpx

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
