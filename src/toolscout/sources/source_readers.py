"""Reading one configured source into ``(tool, handler)`` pairs: a declaration file, skill
or agent folders, an OpenAPI document, a Python module; and the problem a source that
cannot be read reports (the config field to fix, and why).

Kept apart from :mod:`.configured` (which schedules, converts, screens and applies what
these return) so each kind of source reads in one place, with no state of its own: a
reader gets the source's entry and how to resolve a path against the config's folder.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

from ..catalog_base import BaseCatalog
from ..errors import ConfigError
from ..model import Tool
from ._yaml import load_yaml
from .agents import load_agents
from .bindings import BindingProblem, bind
from .declarations import load_declarations
from .functions import function_tool
from .openapi import tools_from_openapi
from .skills import load_skills
from .source_config import (
    AgentsSource,
    DeclarationSource,
    OpenAPISource,
    PythonSource,
    SkillsSource,
    unset_variable,
)

__all__ = [
    "Pairs", "PathOf", "Read", "SourceProblem", "as_problem", "headers_of", "parse_document", "read_declarations",
    "read_module", "read_openapi", "read_skills", "server_url",
]

Pairs = list[tuple[Tool, Any]]
Read = tuple[Pairs, list[str]]  # (tool, handler) pairs, and entries skipped on the way
PathOf = Callable[[str], Path]
"""A config value as a path: relative ones against the config file's folder."""


class SourceProblem(Exception):
    """A source that cannot be loaded: the config field to fix, and why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field, self.message = field, message


def read_declarations(entry: DeclarationSource, path_of: PathOf, upstream: Any) -> Read:
    """A declaration file's tools, each with what runs it (:mod:`.bindings`)."""
    try:
        tools, skipped = load_declarations(path_of(entry.path), skip_invalid=entry.skip_invalid, lang=entry.lang)
    except ConfigError as exc:
        raise SourceProblem("path", str(exc)) from None
    if not tools and not skipped:
        raise SourceProblem("path", f"{entry.path} holds no tools")
    path = path_of(entry.path)
    folders = [path.parent, *(path_of(p) for p in entry.python_path)]
    pairs: Pairs = []
    for tool in tools:  # what runs each one (bindings.py); none: metadata only
        try:
            handler = bind(tool, python_path=folders, environ=os.environ, upstream=upstream, timeout=entry.timeout)
        except BindingProblem as exc:
            raise SourceProblem(exc.field, f"{entry.path}: {exc.message}") from None
        pairs.append((tool, handler))
    return pairs, [str(e) for e in skipped]

def read_skills(entry: SkillsSource, path_of: PathOf) -> Read:
    """Skill folders or agent cards (:mod:`.skills`, :mod:`.agents`) with their handlers."""
    load = load_agents if isinstance(entry, AgentsSource) else load_skills
    try:
        pairs, skipped = load(path_of(entry.path), skip_invalid=entry.skip_invalid)
    except (ConfigError, OSError) as exc:
        raise SourceProblem("path", str(exc)) from None
    if not pairs and not skipped:
        raise SourceProblem("path", f"{entry.path} holds no {entry.kind}")
    return list(pairs), [str(e) for e in skipped]

def read_openapi(entry: OpenAPISource, doc: Any) -> Pairs:
    """An OpenAPI document's operations as tools, with the source's include/exclude."""
    if not isinstance(doc, Mapping) or "paths" not in doc:
        raise SourceProblem("spec", f"{entry.location()} is not an OpenAPI document (no 'paths')")
    base = entry.base_url or server_url(doc, entry.spec if entry.remote else None)
    if base is None:
        raise SourceProblem("baseUrl", "the spec names no absolute server URL; set 'baseUrl'")
    try:
        pairs = tools_from_openapi(doc, base_url=base, headers=headers_of(entry), timeout=entry.timeout or 60.0)
    except ConfigError as exc:
        raise SourceProblem("spec", str(exc)) from None
    kept: Pairs = []
    for tool, handler in pairs:
        http = tool.meta.get("http") or {}
        if entry.selects(tool.name, str(http.get("method", "")), str(http.get("path", "")), list(tool.tags)):
            kept.append((tool, handler))
    if not kept:
        raise SourceProblem("include", f"no operation of {entry.location()} is left by include/exclude")
    return kept

def read_module(entry: PythonSource, path_of: PathOf) -> Pairs:
    """A Python module's catalog, functions or (tool, handler) pairs."""
    for folder in reversed(entry.python_path or ["."]):  # default: the config file's folder
        path = str(path_of(folder))
        if path not in sys.path:
            sys.path.insert(0, path)
    module_name, _, attribute = entry.module.partition(":")
    try:
        importlib.invalidate_caches()
        value: Any = importlib.import_module(module_name)
    except Exception as exc:
        raise SourceProblem("module", f"cannot import {module_name}: {type(exc).__name__}: {exc}") from None
    for part in attribute.split("."):
        if not hasattr(value, part):
            raise SourceProblem("module", f"{module_name} has no attribute {attribute!r}")
        value = getattr(value, part)
    if isinstance(value, BaseCatalog):
        return [(t, value.handler(t.name)) for t in value]
    items = [value] if callable(value) else value
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
        raise SourceProblem("module", f"{entry.module} is {type(value).__name__}, not a Catalog or a list of functions")
    pairs: Pairs = []
    try:
        for item in items:
            if isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], Tool):
                pairs.append(item)
            elif callable(item):
                pairs.append(function_tool(item))
            else:
                raise SourceProblem("module", f"{entry.module} holds a {type(item).__name__}, not a function")
    except ConfigError as exc:
        raise SourceProblem("module", f"{entry.module}: {exc}") from None
    if not pairs:
        raise SourceProblem("module", f"{entry.module} holds no tools")
    return pairs


def as_problem(exc: Exception) -> SourceProblem:
    """Any failure while loading one source as a :class:`SourceProblem` (a module's own import
    error, a bug in a user's function list): it must not reach the other sources."""
    if isinstance(exc, SourceProblem):
        return exc
    return SourceProblem("(source)", f"{type(exc).__name__}: {str(exc)[:300]}")


def headers_of(entry: OpenAPISource) -> dict[str, str]:
    try:
        return entry.resolved_headers(dict(os.environ))
    except KeyError as exc:
        field_name, variable = exc.args
        raise SourceProblem(field_name, unset_variable(variable)) from None


def parse_document(text: str, where: str, *, json_first: bool) -> Any:
    try:
        if json_first:
            with contextlib.suppress(ValueError):
                return json.loads(text)
        return load_yaml(text)[0]
    except RecursionError:
        raise SourceProblem("spec", f"{where} nests too deeply") from None
    except Exception as exc:  # YAML syntax, bad Unicode
        raise SourceProblem("spec", f"{where} is neither JSON nor YAML: {str(exc)[:200]}") from None


def server_url(doc: Mapping[str, Any], spec_url: str | None) -> str | None:
    """The spec's first ``servers`` URL (relative ones against the spec URL), else the spec
    URL's origin; ``None`` for a file without an absolute one."""
    servers = doc.get("servers")
    url = servers[0].get("url") if isinstance(servers, list) and servers and isinstance(servers[0], Mapping) else None
    if isinstance(url, str) and url.startswith(("http://", "https://")):
        return url
    if spec_url is None:
        return None
    return urljoin(spec_url, url if isinstance(url, str) and url else "/")
