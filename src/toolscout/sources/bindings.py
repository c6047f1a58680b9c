"""What runs a declared tool: a Python function, an HTTP request, or an upstream MCP tool.

A declaration file describes a tool; its entry may also name what runs it (seed 002: the
declaration is the single source of truth for a tool whose code lives elsewhere):

- ``handler: package.module:function``: imported when the source loads (a module that
  does not import, or an attribute that is not callable, is a config error naming the
  tool); called with the arguments as keyword arguments, sync or async;
- ``http: {method, url, headers, body}``: a request to the user's own server. ``{arg}`` in
  the URL is replaced by that argument (URL-quoted); ``${VAR}`` in a header by the
  environment variable (unset: a config error). Without ``body``, the arguments the URL did
  not use go as the query (GET, DELETE) or as the JSON body; with one, a string that is
  exactly ``"{arg}"`` becomes the argument's value (any type) and ``{arg}`` inside a longer
  string is replaced by its text. A JSON response is returned parsed, any other as text;
  HTTP 400 and above are a ``tool_error``;
- ``upstream: server/tool``: the tool of a server in ``mcpServers`` it describes (the
  declaration's own name, description and schema are what the model sees).

A declaration with none of them is *metadata only*: found and shown, never listed as
callable, and refused before any approval is asked (``metadata_only``).
"""

from __future__ import annotations

import importlib
import inspect
import re
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from ..errors import InvalidArguments, ToolFailed
from ..model import Tool
from .declarations import BINDING
from .source_config import expand_env, unset_variable

__all__ = ["BindingProblem", "bind"]

_ARG = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_QUERY_METHODS = ("GET", "DELETE")

Handler = Callable[[dict[str, Any]], Any]
UpstreamHandler = Callable[[str, str], Handler | None]


class BindingProblem(ValueError):
    """A binding that cannot be made: the declaration field to fix, and why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field, self.message = field, message


def bind(
    tool: Tool,
    *,
    python_path: Iterable[Path] = (),
    environ: Mapping[str, str] | None = None,
    upstream: UpstreamHandler | None = None,
    timeout: float | None = 60.0,
) -> Handler | None:
    """The handler a declared tool names (``None``: metadata only); raises
    :class:`BindingProblem` when it cannot be made."""
    binding = tool.meta.get(BINDING) if tool.meta else None
    if not isinstance(binding, Mapping):
        return None
    if "handler" in binding:
        return _function(tool.name, str(binding["handler"]), python_path)
    if "upstream" in binding:
        server, _, own = str(binding["upstream"]).partition("/")
        handler = upstream(server, own) if upstream is not None else None
        if handler is None:
            raise BindingProblem(f"{tool.name}.upstream", f"no enabled server named {server!r} in mcpServers")
        return handler
    return _http(tool.name, binding["http"], dict(environ or {}), timeout)


def _function(name: str, spec: str, python_path: Iterable[Path]) -> Handler:
    for folder in reversed([str(p) for p in python_path]):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    module_name, _, attribute = spec.partition(":")
    field = f"{name}.handler"
    try:
        importlib.invalidate_caches()
        value: Any = importlib.import_module(module_name)
    except Exception as exc:
        raise BindingProblem(field, f"cannot import {module_name}: {type(exc).__name__}: {exc}") from None
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise BindingProblem(field, f"{module_name} has no attribute {attribute!r}")
        value = getattr(value, part)
    if not callable(value):
        raise BindingProblem(field, f"{spec} is {type(value).__name__}, not a function")
    fn = value
    if inspect.iscoroutinefunction(fn):

        async def arun(arguments: dict[str, Any]) -> Any:
            return await fn(**arguments)

        return arun

    def run(arguments: dict[str, Any]) -> Any:
        return fn(**arguments)

    return run


def _http(name: str, template: Mapping[str, Any], environ: dict[str, str], timeout: float | None) -> Handler:
    method = str(template.get("method", "GET"))
    url = str(template["url"])
    try:
        headers = {k: expand_env(v, environ, f"{name}.http.headers.{k}") for k, v in (template.get("headers") or {}).items()}
    except KeyError as exc:
        field, variable = exc.args
        raise BindingProblem(field, unset_variable(variable)) from None
    has_body = "body" in template
    body = template.get("body")
    shown = url.split("?", 1)[0]

    async def run(arguments: dict[str, Any]) -> Any:
        import httpx  # not at the top: httpx pulls in rich, off the start-up path until a call

        used: set[str] = set()
        target = _fill(url, arguments, used, name, url=True)
        rest = {k: v for k, v in arguments.items() if k not in used}
        options: dict[str, Any] = {}
        if has_body:
            options["json"] = _fill_json(body, arguments, name)
        elif method in _QUERY_METHODS:
            options["params"] = {k: v if isinstance(v, str) else _text(v) for k, v in rest.items()}
        else:
            options["json"] = rest
        try:
            async with httpx.AsyncClient(timeout=timeout, headers=headers) as client:
                response = await client.request(method, target, **options)
        except httpx.HTTPError as exc:
            raise ToolFailed(f"{name}: {method} {shown} failed: {type(exc).__name__}: {exc}") from None
        if response.status_code >= 400:
            raise ToolFailed(f"{name}: {method} {shown} answered HTTP {response.status_code}: {response.text[:200]}")
        if "json" in response.headers.get("content-type", ""):
            try:
                return response.json()
            except ValueError:
                pass
        return response.text

    return run


def _fill(text: str, arguments: Mapping[str, Any], used: set[str], name: str, *, url: bool = False) -> str:
    def one(match: re.Match[str]) -> str:
        key = match.group(1)
        if key not in arguments:
            raise InvalidArguments(
                f"{name} needs {key!r} (its request uses it)", errors=[{"pointer": f"/{key}", "message": "required by the request", "expected": "present"}]
            )
        used.add(key)
        value = _text(arguments[key])
        return quote(value, safe="") if url else value

    return _ARG.sub(one, text)


def _fill_json(value: Any, arguments: Mapping[str, Any], name: str) -> Any:
    if isinstance(value, str):
        whole = _ARG.fullmatch(value)
        if whole is not None:
            return arguments.get(whole.group(1))
        return _fill(value, arguments, set(), name)
    if isinstance(value, Mapping):
        return {k: _fill_json(v, arguments, name) for k, v in value.items()}
    if isinstance(value, list):
        return [_fill_json(v, arguments, name) for v in value]
    return value


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else str(value)
