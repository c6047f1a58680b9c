"""What a search that found nothing answers: an error that says what to do next.

Hidden means absent here too: the categories, names and suggestions an error carries are
only those the caller may see, so a hidden server is neither named nor counted.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..access.visibility import Allow, Visibility
from ..catalog_base import BaseCatalog
from ..errors import InvalidRequest, NoMatch, ToolscoutError, UnknownTool, split_pending
from ..request import FindRequest, clean_text
from ..search.index import ToolIndex
from ..search.resolve import select_names

__all__ = ["all_names", "did_you_mean", "no_match", "visible_categories"]

Suggest = Callable[[str], list[str]]


def visible_categories(catalog: BaseCatalog, visibility: Visibility, allow: Allow | None) -> dict[str, int]:
    """Categories with the number of tools this caller may see in each, largest first."""
    if visibility.policy is None and allow is None:
        return catalog.categories()
    counts: dict[str, int] = {}
    for tool in catalog:
        if tool.searchable and tool.available and tool.kind == "tool" and visibility.admits(tool, allow):
            key = tool.category or "uncategorized"
            counts[key] = counts.get(key, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def did_you_mean(
    index: ToolIndex, catalog: BaseCatalog, visibility: Visibility, name: str, n: int, allow: Allow | None
) -> list[str]:
    """Names close to a misspelt or invented ``name``, only tools the caller may see (a
    suggestion never leaks a hidden tool's name); a courtesy, so it never fails the caller."""
    try:
        found = index.suggest(clean_text(str(name))[:200], n=n * 3)
    except Exception:
        return []
    tools = (catalog.get(candidate) for candidate in found)
    return [t.name for t in tools if t is not None and visibility.admits(t, allow)][:n]


def all_names(catalog: BaseCatalog, visibility: Visibility, allow: Allow | None, cap: int) -> list[str] | None:
    """Every tool name the caller may see, when there are at most ``cap`` (seed 003's
    fallback for small catalogs); ``None`` otherwise or when ``cap`` is 0."""
    if cap <= 0:
        return None
    names: list[str] = []
    for tool in catalog:
        if tool.kind == "tool" and visibility.admits(tool, allow):
            names.append(tool.name)
            if len(names) > cap:
                return None
    return sorted(names)


def no_match(
    request: FindRequest,
    *,
    catalog: BaseCatalog,
    visibility: Visibility,
    allow: Allow | None,
    pending: Mapping[str, str],
    suggest: Suggest,
    list_names_below: int = 0,
) -> ToolscoutError:
    """The error for ``request`` finding nothing: unknown ``select:`` names, an unknown
    category, or ``no_match`` with near names, the visible categories, the sources still
    loading, and (small catalogs) every visible name."""
    names = select_names(request.query)
    if names is not None:
        if not names:
            return InvalidRequest("select: needs tool names", hint="Use 'select:name_a,name_b'.")
        return UnknownTool(
            f"no tool named {', '.join(map(repr, names))}",
            hint="Check the names, or describe the task instead.",
            suggestions=list(dict.fromkeys(s for n in names for s in suggest(n))),
        )
    categories = visible_categories(catalog, visibility, allow)
    loading, failed = split_pending(pending)  # a failed source is reported as failed, not as loading
    extra: dict[str, Any] = {k: v for k, v in (("loading", loading), ("failed", failed)) if v}
    if request.category and request.category not in categories:
        return NoMatch(
            f"no category named {request.category!r}",
            hint="Use one of the listed categories, or none.",
            categories=categories,
        )
    hint = (
        "Some tool sources are still loading; search again in a moment."
        if loading
        else "Some tool sources failed to load (see below); describe the task in other words, or pick a category."
        if failed
        else "Describe the task in other words, or pick a category."
    )
    listed = all_names(catalog, visibility, allow, list_names_below)
    if listed is not None:
        extra["available"] = listed
        hint = "Nothing matched; these are all the tools available to you: search again with words from one of them."
    return NoMatch(
        f"no tool matches {request.query!r}",
        hint=hint,
        suggestions=suggest(request.query),
        categories=categories,
        **extra,
    )
