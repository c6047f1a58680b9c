"""Requests parsed once, at the edge, into typed objects that everything below trusts.

A model's ``find_tools``/``call_tool``/``use_tool`` arguments arrive as JSON from any
surface (the library, a provider adapter, the MCP server, the CLI). Each surface hands
them to :meth:`FindRequest.parse` / :meth:`CallRequest.parse` / :meth:`UseRequest.parse`;
the gateway, the index and the session never re-check them. Bad input raises a
:class:`~toolscout.errors.RequestError` here and nowhere else.

Seed 001's argument names (``max_results``, ``category_filter``, ``searchType``, ...) are
read as the RFC's names, and the result says so in a note, so a model that learnt either
spelling gets what it asked for.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Any

from .errors import ConfigError, EmptyQuery, InvalidArguments, InvalidRequest
from .model import KINDS

__all__ = [
    "DEFAULT_LIMIT",
    "DEFAULT_SEARCH_TYPE",
    "DIALECTS",
    "MAX_LIMIT",
    "MAX_QUERY_CHARS",
    "SEARCH_TYPES",
    "CallRequest",
    "Dialect",
    "FindRequest",
    "UseRequest",
    "clean_text",
    "find_arguments",
    "kinds_option",
    "parse_arguments",
    "shown",
]

SEARCH_TYPES: tuple[str, ...] = ("auto", "keyword", "regex", "semantic", "hybrid")
DEFAULT_SEARCH_TYPE = "auto"
DEFAULT_LIMIT = 5
MAX_LIMIT = 20
MAX_QUERY_CHARS = 2048
"""Longer queries are cut at a word boundary, with a note: nobody describes one capability
in more words, and search cost grows with query terms."""

_ALIASES: dict[str, str] = {
    "max_results": "limit",
    "maxResults": "limit",
    "top_k": "limit",
    "category_filter": "category",
    "categoryFilter": "category",
    "searchType": "search_type",
}
_FIND_KEYS = frozenset({"query", "limit", "search_type", "category", "exclude", "kinds"})


@dataclass(frozen=True, slots=True)
class Dialect:
    """How the find meta-tool presents itself: its name and the names of its arguments.

    Models learnt tool search under more than one spelling (RFC 0001's ``find_tools``, seed
    001's ``tool_search_tool`` with ``max_results``/``category_filter``, Spring AI's
    camelCase ``toolSearchTool``). A gateway answers under the one it is configured with,
    everywhere, and reads that dialect's argument names without a note; every other known
    spelling is still read, with a note saying so."""

    key: str
    name: str
    limit: str = "limit"
    search_type: str = "search_type"
    category: str = "category"

    def renames(self) -> dict[str, str]:
        """This dialect's argument names -> the RFC's (empty for the RFC itself)."""
        pairs = {self.limit: "limit", self.search_type: "search_type", self.category: "category"}
        return {k: v for k, v in pairs.items() if k != v}


DIALECTS: dict[str, Dialect] = {
    "rfc": Dialect("rfc", "find_tools"),
    "seed001": Dialect("seed001", "tool_search_tool", limit="max_results", category="category_filter"),
    "spring": Dialect("spring", "toolSearchTool", limit="maxResults", search_type="searchType", category="categoryFilter"),
}
"""The dialects by key: ``rfc`` (the default), ``seed001``, ``spring``."""
RFC = DIALECTS["rfc"]


def dialect(key: str | Dialect | None) -> Dialect:
    """A dialect by key (or one given as is); a :class:`~toolscout.errors.ConfigError`
    naming the known keys otherwise."""
    if key is None:
        return RFC
    if isinstance(key, Dialect):
        return key
    found = DIALECTS.get(key) or next((d for d in DIALECTS.values() if d.name == key), None)
    if found is None:
        raise ConfigError(
            f"unknown meta-tool dialect {key!r}",
            hint=f"Use one of: {', '.join(DIALECTS)}.",
        )
    return found
_SEARCH_TYPE_SET = frozenset(SEARCH_TYPES)


def find_arguments(
    query: Any,
    limit: int | None = None,
    search_type: str | None = None,
    category: str | None = None,
    exclude: Any = (),
    kinds: Any = None,
    aliases: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """``find_tools`` arguments as a model would send them, from the library's keywords
    (seed 001's names among ``aliases`` pass through; ``platform`` is the gateway's to judge)."""
    arguments: dict[str, Any] = {"query": query, **{k: v for k, v in (aliases or {}).items() if k != "platform"}}
    for key, value in (("limit", limit), ("search_type", search_type), ("category", category)):
        if value is not None:
            arguments[key] = value
    if exclude:
        arguments["exclude"] = list(exclude)
    if kinds:
        arguments["kinds"] = kinds if isinstance(kinds, str) else list(kinds)
    return arguments


def kinds_option(kinds: Collection[str] | None) -> tuple[str, ...] | None:
    """A gateway's ``default_kinds`` setting, checked once at setup (a typo raises here, not later)."""
    if kinds is None:
        return None
    out = tuple(dict.fromkeys([kinds] if isinstance(kinds, str) else kinds))
    wrong = [k for k in out if k not in KINDS]
    if wrong or not out:
        raise ValueError(f"default_kinds must name some of {', '.join(KINDS)}, not {wrong or 'nothing'}")
    return out


def clean_text(text: str) -> str:
    """Drop control and format characters (keep letters, marks, emoji, any script)."""
    if text.isprintable():
        return text
    return "".join(" " if unicodedata.category(c)[0] == "C" else c for c in text)


def parse_arguments(arguments: Any) -> dict[str, Any]:
    """Arguments as a dict: ``None`` is ``{}``, a JSON string is parsed, anything else that
    is not an object is an :class:`InvalidArguments` error."""
    if type(arguments) is dict:  # the common case, as fast as possible
        return arguments
    if arguments is None:
        return {}
    if isinstance(arguments, str | bytes):
        text = arguments.decode("utf-8", "replace") if isinstance(arguments, bytes) else arguments
        if not text.strip():
            return {}
        try:
            arguments = json.loads(text)
        except (ValueError, RecursionError) as exc:  # JSONDecodeError, too deep, a 5000-digit number
            where = f": {exc.msg} at position {exc.pos}" if isinstance(exc, json.JSONDecodeError) else ""
            raise InvalidArguments(
                f"arguments are not valid JSON{where}",
                hint="Send the arguments as one JSON object matching the tool's input schema.",
                errors=[{"pointer": "/", "message": "broken JSON", "expected": "object"}],
            ) from None
    if not isinstance(arguments, Mapping):
        raise InvalidArguments(
            f"arguments must be a JSON object, not {type(arguments).__name__}",
            hint="Send the arguments as one JSON object matching the tool's input schema.",
            errors=[{"pointer": "/", "message": "not an object", "expected": "object"}],
        )
    return dict(arguments)


def _limit(value: Any, default: int, cap: int, notes: list[str]) -> int:
    if value is None:
        return default
    if type(value) is int and 1 <= value <= cap:
        return value
    problem = InvalidRequest(
        f"limit must be a whole number from 1 to {cap}, not {shown(value)}",
        hint=f"Use a limit from 1 to {cap}, or leave it out for {default}.",
    )
    if isinstance(value, bool):
        raise problem
    if isinstance(value, str):
        if not value.strip().isdigit():
            raise problem
        value = int(value.strip())
    if isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            raise problem
        value = int(value)
    if not isinstance(value, int):
        raise problem
    if value < 1 or value > cap:
        clamped = min(max(value, 1), cap)
        notes.append(f"limit {shown(value)} is outside 1..{cap}; used {clamped}")
        return clamped
    return value


def shown(value: Any) -> str:
    """A short repr for messages (a 5000-digit integer has no repr at all by default)."""
    if type(value) is int and value.bit_length() > 64:
        return f"{'-' if value < 0 else ''}an integer of about {int(value.bit_length() * 0.30103)} digits"
    try:
        return f"{value!r:.40}"
    except ValueError:
        return type(value).__name__


def _search_type(value: Any) -> str:
    if value is None or value == "":
        return DEFAULT_SEARCH_TYPE
    if type(value) is str and value in _SEARCH_TYPE_SET:
        return value
    mode = value.strip().lower() if isinstance(value, str) else None
    if mode not in SEARCH_TYPES:
        raise InvalidRequest(
            f"unknown search_type {shown(value)}",
            hint=f"Use one of: {', '.join(SEARCH_TYPES)}.",
            search_type=str(value)[:40],
        )
    return mode


def _names(value: Any, what: str) -> tuple[str, ...]:
    if value is None or value == "":
        return ()
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise InvalidRequest(f"{what} must be a list of tool names", hint=f'Use e.g. "{what}": ["name_a", "name_b"].')
    return tuple(dict.fromkeys(n.strip() for n in value if n.strip()))


_KIND_WORDS = {**{k: k for k in KINDS}, **{f"{k}s": k for k in KINDS}}


def _kinds(value: Any) -> tuple[str, ...] | None:
    """``kinds`` as a tuple of :data:`~toolscout.model.KINDS` (``None``: the gateway's
    default). Accepts a list or comma-separated text, plurals, any case, and ``all``."""
    if value is None or value == "" or value == []:
        return None
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
        raise InvalidRequest("kinds must be a list of strings", hint=f'Use e.g. "kinds": ["tool", "skill"]; kinds are {", ".join(KINDS)}.')
    words = [v.strip().lower() for v in value if v.strip()]
    if "all" in words:
        return KINDS
    unknown = [w for w in words if w not in _KIND_WORDS]
    if unknown:
        raise InvalidRequest(
            f"unknown kind {unknown[0]!r:.40}",
            hint=f"Use any of: {', '.join(KINDS)} (or all).",
        )
    return tuple(dict.fromkeys(_KIND_WORDS[w] for w in words)) or None


def _query(value: Any, notes: list[str]) -> str:
    if not isinstance(value, str):
        raise InvalidRequest(
            "find_tools needs 'query': a string" if value is None else "query must be a string",
            hint="Describe the task in a few words, as text (the full catalog is never listed).",
        )
    text = clean_text(value).strip()
    if not text:
        raise EmptyQuery("find_tools needs a query; the full catalog is never listed.")
    if len(text) > MAX_QUERY_CHARS:
        cut = text.rfind(" ", 0, MAX_QUERY_CHARS)
        text = text[: cut if cut > MAX_QUERY_CHARS // 2 else MAX_QUERY_CHARS].rstrip()
        notes.append(f"query truncated to {len(text)} characters")
    return text


def _renamed(args: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """``args`` with seed 001's names read as the RFC's (a new dict; notes say what changed)."""
    args = dict(args)
    for alias, name in _ALIASES.items():
        if alias not in args:
            continue
        value = args.pop(alias)
        if name in args and args[name] is not None:
            if args[name] != value:
                notes.append(f"{alias} ignored: {name} was also given")
            continue
        args[name] = value
        notes.append(f"{alias} read as {name}")
    unknown = sorted(str(k) for k in args if k not in _FIND_KEYS)
    if unknown:
        notes.append("ignored unknown argument" + ("s " if len(unknown) > 1 else " ") + ", ".join(map(repr, unknown[:5])))
    return args


@dataclass(frozen=True, slots=True)
class FindRequest:
    """One validated search: what every layer below the edge receives."""

    query: str
    limit: int = DEFAULT_LIMIT
    search_type: str = DEFAULT_SEARCH_TYPE
    category: str | None = None
    exclude: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=(), compare=False)
    kinds: tuple[str, ...] | None = None
    """Which kinds of entry to rank (``tool``, ``skill``, ``agent``); ``None``: the
    gateway's default (tools only unless configured otherwise)."""

    @classmethod
    def parse(
        cls,
        arguments: Any,
        *,
        default_limit: int = DEFAULT_LIMIT,
        max_limit: int = MAX_LIMIT,
        dialect: Dialect = RFC,
    ) -> FindRequest:
        """``find_tools`` arguments (a dict or its JSON text) -> a request, or a
        :class:`~toolscout.errors.RequestError` naming what to fix. ``dialect``: the
        spelling the meta-tool was presented in; its own argument names need no note."""
        args = parse_arguments(arguments)
        notes: list[str] = []
        if dialect is not RFC:
            own = dialect.renames()
            if any(k in args for k in own):
                args = {own.get(k, k): v for k, v in args.items() if own.get(k, k) not in args or k not in own}
        if not _FIND_KEYS.issuperset(args):
            args = _renamed(args, notes)
        query = _query(args.get("query"), notes)
        category = args.get("category")
        if category is not None and not isinstance(category, str):
            raise InvalidRequest("category must be a string", hint="Pass one category name, or leave it out.")
        return cls(
            query=query,
            limit=_limit(args.get("limit"), default_limit, max_limit, notes),
            search_type=_search_type(args.get("search_type")),
            category=(category or "").strip() or None,
            exclude=_names(args.get("exclude"), "exclude"),
            notes=tuple(notes),
            kinds=_kinds(args.get("kinds")),
        )


@dataclass(frozen=True, slots=True)
class CallRequest:
    """A call of one tool by name, arguments parsed to a dict (validated later, against
    the tool's own schema, by the gateway)."""

    name: str
    arguments: dict[str, Any]

    @classmethod
    def parse(cls, name: Any, arguments: Any = None) -> CallRequest:
        if not isinstance(name, str) or not name.strip():
            raise InvalidRequest("the tool name must be a non-empty string", hint="Call a tool by its exact name.")
        return cls(name=name, arguments=parse_arguments(arguments))

    @classmethod
    def from_call_tool(cls, arguments: Any) -> CallRequest:
        """The ``call_tool`` meta-tool's ``{"name", "arguments"}``."""
        args = parse_arguments(arguments)
        name = args.get("name", args.get("tool_name"))
        if not isinstance(name, str) or not name.strip():
            raise InvalidArguments(
                "call_tool needs 'name': the exact name of a tool from find_tools",
                hint="Call find_tools first, then call_tool with one of the names it returned.",
            )
        return cls(name=name, arguments=parse_arguments(args.get("arguments")))


@dataclass(frozen=True, slots=True)
class UseRequest:
    """RFC 0001's ``use_tool``: find and run in one step."""

    find: FindRequest
    params: dict[str, Any]

    @classmethod
    def parse(cls, arguments: Any, *, max_limit: int = MAX_LIMIT) -> UseRequest:
        args = parse_arguments(arguments)
        params = parse_arguments(args.get("params"))
        find = FindRequest.parse({"query": args.get("query")}, default_limit=5, max_limit=max_limit)
        return cls(find=find, params=params)
