"""The RFC 0001 semantics: ``find_tools``, ``call`` and ``use_tool`` over a catalog.

This is the only place that executes tools. Nothing a model sends can raise out of here:
every failure comes back as data carrying an :class:`~toolscout.errors.ErrorInfo`
(``code``, ``message``, ``hint``), and the process carries on.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
import time
import unicodedata
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import formats
from ._sync import run_sync
from .catalog import Catalog
from .errors import (
    Ambiguous,
    EmptyQuery,
    ErrorInfo,
    InvalidArguments,
    InvalidRequest,
    NoMatch,
    PolicyDenied,
    ToolFailed,
    ToolscoutError,
    ToolTimeout,
    UnknownTool,
    UpstreamUnavailable,
)
from .model import CallResult, DeferPolicy, Tool
from .policy import Policy
from .search.index import ScoredTool, ToolIndex

if TYPE_CHECKING:
    from .embed import Embedder
    from .search.hybrid import HybridSearch
    from .store import Store

__all__ = ["FindResult", "Gateway", "ToolReference"]

MAX_QUERY_CHARS = 1000
"""Longer queries are cut at a word boundary (with a warning): nobody describes one
capability in more words, and BM25 cost grows with query terms."""

SEARCH_TYPES = ("auto", "keyword", "regex", "semantic", "hybrid")

USE_TOOL_MARGIN = 1.5
"""``use_tool`` runs the top match only if its score is at least this many times the
runner-up's (or it is an exact name): a clear winner, not a coin toss."""


@dataclass(frozen=True, slots=True)
class ToolReference:
    tool_name: str
    relevance_score: float
    summary: str
    version: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool_name": self.tool_name,
            "relevance_score": self.relevance_score,
            "summary": self.summary,
            "version": self.version,
        }


@dataclass(slots=True)
class FindResult:
    """The seed-001 response shape plus the full schemas of what was found."""

    query: str
    search_type: str
    tools: list[dict[str, Any]] = field(default_factory=list)
    tool_references: list[ToolReference] = field(default_factory=list)
    total_matches: int = 0
    execution_time_ms: float = 0.0
    warnings: list[str] = field(default_factory=list)
    error: ErrorInfo | None = None
    found: list[Tool] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def search_metadata(self) -> dict[str, Any]:
        meta: dict[str, Any] = {
            "search_type": self.search_type,
            "query": self.query,
            "execution_time_ms": round(self.execution_time_ms, 3),
        }
        if self.warnings:
            meta["warnings"] = list(self.warnings)
        return meta

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "tools": self.tools,
            "tool_references": [r.to_dict() for r in self.tool_references],
            "total_matches": self.total_matches,
            "search_metadata": self.search_metadata,
        }
        if self.error is not None:
            out["error"] = self.error.to_dict()
        return out

    def text(self) -> str:
        """A compact, readable rendering for a model or a terminal."""
        if self.error is not None:
            lines = [f"{self.error.code}: {self.error.message}"]
            if self.error.hint:
                lines.append(self.error.hint)
            for key in ("suggestions", "categories"):
                value = self.error.details.get(key)
                if value:
                    shown = value if isinstance(value, list) else [f"{k} ({v})" for k, v in value.items()]
                    lines.append(f"{key}: " + ", ".join(map(str, shown[:20])))
            return "\n".join(lines)
        head = f"{len(self.tool_references)} of {self.total_matches} matching tools for {self.query!r}:"
        rows = [f"- {r.tool_name} ({r.relevance_score:.2f}): {r.summary}" for r in self.tool_references]
        return "\n".join([head, *rows])


def current_platform() -> str:
    if sys.platform.startswith("win"):
        return "windows"
    if sys.platform == "darwin":
        return "macos"
    return "linux"


def clean_text(text: str) -> str:
    """Drop control and format characters (keep letters, marks, emoji, any script)."""
    if text.isprintable():
        return text
    return "".join(" " if unicodedata.category(c)[0] == "C" else c for c in text)


def _is_async(fn: Any) -> bool:
    call = type(fn).__call__ if not inspect.isroutine(fn) else None
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(call)


def _as_call_result(name: str, value: Any, duration_ms: float) -> CallResult:
    if isinstance(value, CallResult):
        value.duration_ms = value.duration_ms or duration_ms
        return value
    if hasattr(value, "model_dump"):
        value = value.model_dump(mode="json")
    if isinstance(value, str):
        text = value
    else:
        try:
            text = json.dumps(value, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            text = repr(value)
    structured = value if isinstance(value, dict) else None
    return CallResult(
        tool=name,
        ok=True,
        content=[{"type": "text", "text": text}],
        structured=structured,
        value=value,
        duration_ms=duration_ms,
    )


def _pointer(path: Collection[Any]) -> str:
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path) if path else "/"


class Gateway:
    """Search, validate and execute over one catalog.

    ``max_limit`` caps how many tools one search returns (default 20): every returned
    schema costs tokens and, with progressive disclosure, stays revealed. ``embeddings``
    turns on the ``semantic`` and ``hybrid`` modes (``auto`` then means hybrid); vectors are
    cached in ``vector_store`` (default: the catalog's own store) so restarts re-embed
    nothing. It is opt-in because embedding a new catalog takes time (about 65 tools/s).
    """

    def __init__(
        self,
        catalog: Catalog,
        *,
        index: ToolIndex | None = None,
        policy: Policy | None = None,
        max_limit: int = 20,
        default_limit: int = 5,
        call_timeout: float | None = 60.0,
        platform: str | None = None,
        embeddings: bool | str | Embedder | None = None,
        vector_store: Store | None = None,
    ) -> None:
        self.catalog = catalog
        self.index = index or ToolIndex(catalog, snapshots=catalog.store)
        self.hybrid = self._enable_embeddings(embeddings, vector_store or catalog.store)
        self.policy = policy
        self.max_limit = max_limit
        self.default_limit = default_limit
        self.call_timeout = call_timeout
        self.platform = platform or current_platform()
        self._validators: OrderedDict[tuple[str, str], Any] = OrderedDict()
        self._wire_map: tuple[int, dict[str, str]] = (-1, {})
        self._combined: dict[Callable[[Tool], bool], Callable[[Tool], bool]] = {}
        # One bound method for the policy so the index can cache its mask.
        self._permits: Callable[[Tool], bool] | None = policy.permits if policy else None

    def _enable_embeddings(
        self, embeddings: bool | str | Embedder | None, store: Store | None
    ) -> HybridSearch | None:
        """``None``/``False``: keyword only. ``"auto"``: hybrid when the ``embed`` extra is
        installed. ``True``, a model spec or an :class:`Embedder`: hybrid, or raise
        :class:`~toolscout.errors.MissingExtra` / ``EmbeddingUnavailable`` now, at setup."""
        if embeddings is None or embeddings is False:
            return None
        from .search.hybrid import enable_hybrid, enable_hybrid_if_available

        if embeddings == "auto":
            return enable_hybrid_if_available(self.index, store=store)
        spec = "default" if embeddings is True else embeddings
        return enable_hybrid(self.index, spec, store=store)

    # -- find -------------------------------------------------------------------
    def find_tools(
        self,
        query: str,
        limit: int | None = None,
        *,
        search_type: str = "auto",
        category: str | None = None,
        format: str = "generic",
        allow: Callable[[Tool], bool] | None = None,
        exclude: Collection[str] = (),
    ) -> FindResult:
        started = time.perf_counter()
        mode = str(search_type or "auto").lower()
        result = FindResult(query=query if isinstance(query, str) else repr(query), search_type=mode)
        try:
            text = self._check_query(query, result)
            n = self._check_limit(limit)
            if mode not in SEARCH_TYPES:
                raise InvalidRequest(
                    f"unknown search_type {search_type!r}", hint=f"Use one of: {', '.join(SEARCH_TYPES)}."
                )
            formats.renderer(format)  # an unknown format is an InvalidRequest
            if category is not None and not isinstance(category, str):
                raise InvalidRequest("category must be a string")
            if mode in ("semantic", "hybrid") and mode not in self.index.modes():
                result.warnings.append(
                    f"{mode} search is not enabled (it needs the 'embed' extra and embeddings "
                    "turned on); used keyword search"
                )
                mode = "keyword"
            outcome = self.index.search(
                text,
                limit=n,
                mode=mode,
                category=category or None,
                allow=self._combine(allow),
                exclude=exclude,
                platform=self.platform,
            )
            result.search_type = outcome.mode
            result.warnings.extend(outcome.warnings)
            result.total_matches = outcome.total_matches
            if not outcome.hits:
                raise self._no_match(text, category)
            self._fill(result, outcome.hits, format)
        except ToolscoutError as exc:
            result.error = exc.info()
        result.execution_time_ms = (time.perf_counter() - started) * 1000
        return result

    def _check_query(self, query: Any, result: FindResult) -> str:
        if not isinstance(query, str):
            raise InvalidRequest("query must be a string", hint="Pass a short description as text.")
        text = clean_text(query).strip()
        if not text:
            raise EmptyQuery(
                "find_tools needs a query; the full catalog is never listed.",
                categories=self.catalog.categories(),
            )
        if len(text) > MAX_QUERY_CHARS:
            cut = text.rfind(" ", 0, MAX_QUERY_CHARS)
            text = text[: cut if cut > MAX_QUERY_CHARS // 2 else MAX_QUERY_CHARS]
            result.warnings.append(f"query truncated to {len(text)} characters")
        result.query = text
        return text

    def _check_limit(self, limit: Any) -> int:
        if limit is None:
            return self.default_limit
        if isinstance(limit, bool) or not isinstance(limit, int | float) or limit != int(limit):
            raise InvalidRequest("limit must be an integer", hint=f"Use 1..{self.max_limit}.")
        return max(1, min(int(limit), self.max_limit))

    def _combine(self, allow: Callable[[Tool], bool] | None) -> Callable[[Tool], bool] | None:
        if allow is None:
            return self._permits
        permits = self._permits
        if permits is None:
            return allow
        # One combined predicate per `allow`, so the index's per-predicate mask cache hits.
        combined = self._combined.get(allow)
        if combined is None:
            combined = self._combined[allow] = lambda t: permits(t) and allow(t)
            if len(self._combined) > 256:
                self._combined.pop(next(iter(self._combined)))
        return combined

    def _no_match(self, text: str, category: str | None) -> ToolscoutError:
        if text[:7].lower() == "select:":
            names = [n.strip().strip("`'\"") for n in text[7:].split(",") if n.strip()]
            if not names:
                return InvalidRequest("select: needs tool names", hint="Use 'select:name_a,name_b'.")
            return UnknownTool(
                f"no tool named {', '.join(map(repr, names))}",
                hint="Check the names, or describe the task instead.",
                suggestions=list(dict.fromkeys(s for n in names for s in self.suggest(n))),
            )
        categories = self.catalog.categories()
        if category and category not in categories:
            return NoMatch(
                f"no category named {category!r}",
                hint="Use one of the listed categories, or none.",
                categories=categories,
            )
        return NoMatch(
            f"no tool matches {text!r}",
            suggestions=self.suggest(text),
            categories=categories,
        )

    def _fill(self, result: FindResult, hits: list[ScoredTool], format: str) -> None:
        for hit in hits:
            result.found.append(hit.tool)
            result.tools.append(formats.render(hit.tool, format))
            result.tool_references.append(
                ToolReference(
                    tool_name=hit.tool.name,
                    relevance_score=round(float(hit.relevance), 4),
                    summary=hit.tool.summary(),
                    version=hit.tool.version,
                )
            )

    def suggest(self, name: str, n: int = 3) -> list[str]:
        """Did-you-mean names for a misspelt or invented tool name."""
        try:
            return self.index.suggest(clean_text(str(name))[:MAX_QUERY_CHARS], n=n)
        except Exception:  # suggestions are a courtesy; never fail the caller over them
            return []

    # -- call -------------------------------------------------------------------
    async def acall(
        self, name: str, arguments: Any = None, *, timeout: float | None = None
    ) -> CallResult:
        """Validate ``arguments`` against the tool's schema and run it. Never raises."""
        started = time.perf_counter()
        label = name if isinstance(name, str) else repr(name)
        try:
            tool = self._resolve(name)
            args = self.validate(tool, arguments)
            handler = self.catalog.handler(tool.name)
            if handler is None:
                raise UpstreamUnavailable(
                    f"tool {tool.name!r} is declared but has no handler in this process",
                    hint="Register a handler for it, or connect its server.",
                )
            value = await self._run(tool, handler, args, timeout)
        except ToolscoutError as exc:
            return CallResult.failure(label, exc, duration_ms=(time.perf_counter() - started) * 1000)
        return _as_call_result(tool.name, value, (time.perf_counter() - started) * 1000)

    def call(self, name: str, arguments: Any = None, *, timeout: float | None = None) -> CallResult:
        """Synchronous :meth:`acall` (usable inside or outside a running event loop)."""
        return run_sync(self.acall(name, arguments, timeout=timeout))

    def _resolve(self, name: Any) -> Tool:
        if not isinstance(name, str) or not name.strip():
            raise InvalidRequest("tool name must be a non-empty string")
        tool = (
            self.catalog.get(name)
            or self.catalog.get(name.strip().strip("`'\""))
            or self.catalog.get(self._wire_names().get(name, ""))
        )
        if tool is None:
            raise UnknownTool(f"no tool named {name!r}", suggestions=self.suggest(name))
        if self._permits is not None and not self._permits(tool):
            raise PolicyDenied(f"tool {tool.name!r} is not allowed by the gateway policy")
        if not tool.available or (tool.platforms and self.platform not in tool.platforms):
            raise PolicyDenied(
                f"tool {tool.name!r} is not available here",
                hint="Pick another tool; this one is disabled or not supported on this platform.",
            )
        return tool

    def _wire_names(self) -> dict[str, str]:
        """Names a host API could not carry were renamed when rendered (``formats.wire_name``);
        map them back so the model's call reaches the tool. Rebuilt when the catalog changes."""
        if self._wire_map[0] != self.catalog.generation:
            names = self.catalog.names()
            merged: dict[str, str] = {}
            for fmt in ("openai", "anthropic", "gemini"):
                merged.update(formats.wire_names(names, fmt))
            self._wire_map = (self.catalog.generation, merged)
        return self._wire_map[1]

    def validate(self, tool: Tool, arguments: Any) -> dict[str, Any]:
        """Return the arguments as a dict, or raise :class:`InvalidArguments` listing each
        problem with its JSON pointer and expected type."""
        if arguments is None:
            arguments = {}
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                raise InvalidArguments(
                    f"arguments are not valid JSON: {exc.msg} at position {exc.pos}",
                    errors=[{"pointer": "/", "message": "broken JSON", "expected": "object"}],
                ) from None
        if not isinstance(arguments, Mapping):
            raise InvalidArguments(
                f"arguments must be a JSON object, not {type(arguments).__name__}",
                errors=[{"pointer": "/", "message": "not an object", "expected": "object"}],
            )
        arguments = dict(arguments)
        validator = self._validator(tool)
        if validator is None:
            return arguments
        import jsonschema  # already loaded by _validator
        from jsonschema.exceptions import SchemaError

        problems = []
        try:
            for err in sorted(validator.iter_errors(arguments), key=lambda e: list(e.path)):
                path = list(err.absolute_path)
                if err.validator == "required" and isinstance(err.instance, Mapping):
                    missing = [r for r in err.validator_value if r not in err.instance]
                    path = [*path, missing[0]] if missing else path
                problem: dict[str, Any] = {"pointer": _pointer(path), "message": err.message}
                if err.validator == "type":
                    problem["expected"] = err.validator_value
                elif err.validator == "required":
                    problem["expected"] = "present"
                elif err.validator == "enum":
                    problem["expected"] = err.validator_value
                problems.append(problem)
                if len(problems) >= 20:
                    break
        except (SchemaError, jsonschema.exceptions.RefResolutionError, RecursionError, TypeError):
            return arguments  # the tool's own schema is broken: let the tool judge
        if problems:
            summary = "; ".join(f"{p['pointer']}: {p['message']}" for p in problems[:3])
            raise InvalidArguments(f"invalid arguments for {tool.name}: {summary}", errors=problems)
        return arguments

    def _validator(self, tool: Tool) -> Any:
        key = (tool.name, tool.version)
        cached = self._validators.get(key)
        if cached is not None:
            self._validators.move_to_end(key)
            return cached
        import jsonschema  # ~40 ms to import: not on the start-up path, only when a call is validated

        schema = tool.input_schema
        try:
            cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
            cls.check_schema(schema)
            validator = cls(schema, format_checker=cls.FORMAT_CHECKER)
        except Exception:
            return None
        self._validators[key] = validator
        if len(self._validators) > 4096:
            self._validators.popitem(last=False)
        return validator

    async def _run(self, tool: Tool, handler: Callable[..., Any], args: dict[str, Any], timeout: float | None) -> Any:
        limit = timeout if timeout is not None else self.call_timeout
        try:
            if _is_async(handler):
                value = await asyncio.wait_for(handler(args), limit)
            else:
                value = await asyncio.wait_for(asyncio.to_thread(handler, args), limit)
                if inspect.isawaitable(value):
                    value = await asyncio.wait_for(value, limit)
        except TimeoutError:
            raise ToolTimeout(f"tool {tool.name!r} did not finish within {limit} s") from None
        except ToolscoutError:
            raise
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            raise ToolFailed(f"{tool.name} raised {type(exc).__name__}: {exc}", exception=type(exc).__name__) from None
        return value

    # -- use_tool ---------------------------------------------------------------
    async def ause_tool(self, query: str, params: Any = None, *, timeout: float | None = None) -> CallResult:
        """Find and run in one step, only when one tool is clearly the best match."""
        found = self.find_tools(query, limit=5)
        if found.error is not None:
            return CallResult(tool="use_tool", ok=False, content=[{"type": "text", "text": found.text()}], error=found.error)
        refs = found.tool_references
        top = refs[0]
        exact = top.tool_name.lower() == found.query.strip("`'\" ").lower()
        clear = len(refs) == 1 or exact or top.relevance_score >= USE_TOOL_MARGIN * refs[1].relevance_score
        if not clear:
            err = Ambiguous(
                f"several tools match {found.query!r} about equally",
                candidates=[{"name": r.tool_name, "summary": r.summary} for r in refs],
            )
            return CallResult.failure("use_tool", err)
        return await self.acall(top.tool_name, params, timeout=timeout)

    def use_tool(self, query: str, params: Any = None, *, timeout: float | None = None) -> CallResult:
        return run_sync(self.ause_tool(query, params, timeout=timeout))

    # -- what the model sees ------------------------------------------------------
    def meta_tools(self, format: str = "generic", *, use_tool: bool = False, call_tool: bool = False) -> list[dict[str, Any]]:
        """The meta-tool definitions in ``format``: ``find_tools``, plus ``call_tool``
        and/or ``use_tool`` when asked."""
        chosen = [FIND_TOOLS]
        if call_tool:
            chosen.append(CALL_TOOL)
        if use_tool:
            chosen.append(USE_TOOL)
        return [formats.render(t, format) for t in chosen]

    def system_prompt(self) -> str:
        return formats.system_prompt(self.catalog.categories())




FIND_TOOLS = Tool(
    "find_tools",
    "Search the tool catalog by capability and load the schemas of matching tools. "
    "Call it before using any tool you have not loaded yet.",
    {
        "type": "object",
        "properties": {
            "query": {
                "type": "string",
                "description": "What you want to do, in a few words, or an exact tool name. "
                "'select:a,b' loads tools by name.",
            },
            "limit": {"type": "integer", "description": "Max tools to return (1-20, default 5)."},
            "search_type": {
                "type": "string",
                "enum": ["auto", "keyword", "regex", "semantic"],
                "description": "'regex' matches name patterns like 'get_.*_data'.",
            },
            "category": {"type": "string", "description": "Only search this category."},
        },
        "required": ["query"],
    },
    source="toolscout",
    defer=DeferPolicy.NEVER,
    annotations=None,
)

CALL_TOOL = Tool(
    "call_tool",
    "Run a tool returned by find_tools, by its exact name, with arguments matching its schema.",
    {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "Exact tool name from find_tools."},
            "arguments": {"type": "object", "description": "Arguments for the tool."},
        },
        "required": ["name", "arguments"],
    },
    source="toolscout",
    defer=DeferPolicy.NEVER,
)

USE_TOOL = Tool(
    "use_tool",
    "Find and run a tool in one step, when you already know its parameters.",
    {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "What you want to do."},
            "params": {"type": "object", "description": "Parameters for the matched tool."},
        },
        "required": ["query", "params"],
    },
    source="toolscout",
    defer=DeferPolicy.NEVER,
)
