"""How a find runs: one search for one caller, from a parsed request to its result.

The counterpart of :mod:`toolscout._gateway.execution` for ``find_tools``: a request for a whole
namespace lists it (:class:`~toolscout.namespaces.NamespaceBrowser`), anything else is
ranked by the index over the tools the caller may see (the visibility rule is a mask, so
``limit`` is filled from visible tools), through the cache of repeated finds when there is
one; nothing found is an error that says what to do next (:mod:`toolscout._gateway.no_match`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Mapping
from typing import Any, Protocol

from ..access.visibility import Allow, Visibility
from ..catalog_base import BaseCatalog
from ..errors import ToolscoutError
from ..find_cache import FindCache, find_key
from ..model import CallResult
from ..namespaces import NamespaceBrowser
from ..request import FindRequest
from ..results import FindResult, clear_winner, fill
from ..search.crosslingual import language_hint
from ..search.index import ScoredTool, ToolIndex
from ..search.learning import UsageLearner
from .no_match import no_match

__all__ = ["FindSettings", "search", "use_choice"]


class FindSettings(Protocol):
    """What a find reads from its gateway at the moment it runs."""

    catalog: BaseCatalog
    index: ToolIndex
    visibility: Visibility
    namespaces: NamespaceBrowser
    result_cache: FindCache | None
    learner: UsageLearner | None
    hybrid: Any
    pending_sources: Callable[[], Mapping[str, str]] | None
    max_limit: int
    list_names_below: int

    def kinds_default(self) -> tuple[str, ...]: ...

    def suggest(self, name: str, n: int = 3, *, allow: Allow | None = None) -> list[str]: ...


def search(gw: FindSettings, request: FindRequest, allow: Allow | None, loaded: Collection[str], autocut: bool) -> FindResult:
    """One search for a caller whose ``allow`` rule and the gateway's policy say what it may see."""
    started = time.perf_counter()
    mode = request.search_type
    result = FindResult(query=request.query, search_type=mode, warnings=list(request.notes), request=request)
    if gw.pending_sources is not None:
        result.pending = dict(gw.pending_sources())
    try:
        space = gw.namespaces.asked(request.query, allow)
        if space is not None:
            _whole_namespace(gw, result, space, allow, loaded)
            result.execution_time_ms = (time.perf_counter() - started) * 1000
            return result
        if mode in ("semantic", "hybrid") and mode not in gw.index.modes():
            result.warnings.append(
                f"{mode} search is not enabled (it needs the 'embed' extra and embeddings "
                "turned on); used keyword search"
            )
            mode = "keyword"
        predicate = gw.visibility.predicate(allow)
        kinds = request.kinds or gw.kinds_default()
        cache, key, outcome = gw.result_cache, None, None
        if cache is not None:
            learner = gw.learner
            key = find_key(
                request.query, request.limit, mode, request.category, request.exclude, kinds, autocut,
                predicate, allow, gw.catalog.generation, learner.ranking_version if learner is not None else -1,
            )
            outcome = cache.get(key)
        if outcome is None:
            outcome = gw.index.search(
                request.query, limit=request.limit, mode=mode, category=request.category, allow=predicate,
                exclude=request.exclude, platform=gw.visibility.platform, autocut=autocut, kinds=kinds,
            )
            if cache is not None and key is not None:
                cache.put(key, outcome)
        result.search_type = outcome.mode
        result.intents, result.intent_tools = list(outcome.intents), dict(outcome.best)
        result.warnings.extend(outcome.warnings)
        hint = language_hint(request.query, outcome.mode, gw.hybrid, gw.index.tools)
        if hint is not None:
            result.warnings.append(hint)
        result.total_matches = outcome.total_matches
        if not outcome.hits:
            error = no_match(
                request, catalog=gw.catalog, visibility=gw.visibility, allow=allow, pending=result.pending,
                suggest=lambda text: gw.suggest(text, allow=allow), list_names_below=gw.list_names_below,
            )
            if hint is not None and error.code == "no_match":  # the reason, not "other words"
                error.hint = f"{hint[0].upper()}{hint[1:]}."
            raise error
        _fill(gw, result, outcome.hits, loaded, allow)
    except ToolscoutError as exc:
        result.error = exc.info()
    result.execution_time_ms = (time.perf_counter() - started) * 1000
    return result

def _whole_namespace(gw: FindSettings, result: FindResult, space: str, allow: Allow | None, loaded: Collection[str]) -> None:
    """Every visible tool of one namespace, up to ``max_limit``, instead of a ranking."""
    result.search_type = "namespace"
    members = gw.namespaces.members(space, allow)
    result.total_matches = len(members)
    if len(members) > gw.max_limit:
        result.warnings.append(
            f"namespace {space!r} has {len(members)} tools; the first {gw.max_limit} are shown: "
            "describe the task to rank them"
        )
    _fill(gw, result, [ScoredTool(t, 1.0, 1.0, why="namespace") for t in members[: gw.max_limit]], loaded, allow)

def _fill(gw: FindSettings, result: FindResult, hits: list[ScoredTool], loaded: Collection[str], allow: Allow | None) -> None:
    co = gw.learner.co_usage(gw.index.tools, gw.catalog.generation) if gw.learner is not None else {}
    fill(result, hits, set(loaded), lookup=gw.catalog.get, admits=lambda t: gw.visibility.admits(t, allow),
         co_usage=co)


def use_choice(gw: FindSettings, request: FindRequest, allow: Allow | None, margin: float) -> str | CallResult:
    """``use_tool``'s find: the name of the tool to run (the top match, clearly ahead by
    :func:`~toolscout.results.clear_winner`'s rule), or the refusal to answer with."""
    found = search(gw, request, allow, (), True)
    if found.error is not None:  # the search's own answer, as find_tools gives it
        return CallResult(tool="use_tool", ok=False, content=[{"type": "text", "text": found.text()}], error=found.error)
    resolver = gw.index.resolver

    def names_exactly(query: str, name: str) -> bool:
        """``query`` is ``name`` itself (the resolver's rule, as the ranking's exact-name win)."""
        return any(resolver.tools[d].name == name for d in resolver.docs_named(query))

    picked = clear_winner(found, names_exactly, margin)
    return picked if isinstance(picked, str) else CallResult.failure("use_tool", picked)
