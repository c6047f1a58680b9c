"""Set-aware ranking: one list that covers every sub-intent of a request before it deepens any.

Why: a list scored against a whole multi-step request gives its slots to the largest part:
for "find the failing build and tell slack", ten CI tools and no messaging tool. The model
can only call what it is shown, so a request is served by the *set* of tools its steps need.

How (the field's methods, in toolscout's terms; nothing copied): each sub-intent
(:mod:`~toolscout.search.subintents`) is ranked on its own, in the request's mode, with the
same signals as any search (per-intent retrieval, as ToolQP and MCP-Zero decompose a
request); then the list is built greedily:

1. **The whole request's best tool first**: a wrong split can never cost the top result.
2. **Coverage**: each sub-intent, in request order, gets its best tool unless one it ranks
   on top is in the list already.
3. **Deepening in turns**: the whole request's list, then the sub-intents' lists take turns,
   each adding its best tool not listed yet, so no part takes every slot (COLT and HYSET ask
   the same of a retrieved set: completeness, not more of one kind). Turns rather than one
   fused score: scores of different sub-searches do not compare (a short sub-intent's BM25
   top is low, a long one's high), ranks within each do.
4. **No near-duplicates**: a copy of a listed tool (the same description, or the same name
   spelt otherwise) goes to the end of the list, not into a slot another step needs.
5. **Co-usage completes a set**: in its list's turn, a candidate sessions called together
   with a listed tool (:meth:`toolscout.learning.UsageLearner.co_usage`) goes first.

No weight is fitted to any data: the order is turns, the inputs are ranks.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence

from ..errors import Ambiguous
from .ranking import ScoredTool
from .subintents import SubIntent

__all__ = ["rank_set", "several_steps"]

_SEPARATORS = re.compile(r"[\W_]+")


def _normalised(hits: Sequence[ScoredTool]) -> dict[str, float]:
    """name -> score over the list's top score (0..1; the best is 1)."""
    if not hits:
        return {}
    top = max(h.score for h in hits) or 1.0
    out: dict[str, float] = {}
    for h in hits:
        out.setdefault(h.tool.name, max(0.0, h.score / top) if top > 0 else 0.0)
    return out


def _copy_key(hit: ScoredTool) -> tuple[str, str]:
    """What two copies of one tool share: their description (when it says something), or
    their name spelt alike (case and separators aside)."""
    tool = hit.tool
    desc = " ".join((tool.description or "").lower().split())
    return (desc[:300] if len(desc) >= 20 else "", _SEPARATORS.sub("", tool.name.lower()))


def rank_set(
    whole: Sequence[ScoredTool],
    per_intent: Sequence[tuple[SubIntent, Sequence[ScoredTool]]],
    limit: int,
    *,
    co_usage: Mapping[str, Sequence[str]] | None = None,
) -> list[ScoredTool]:
    """The ``limit`` tools covering ``per_intent``'s sub-intents (module docstring); each
    carries the sub-intent it answers best in ``intent``."""
    if limit <= 0:
        return []
    intents = [(si, _normalised(hits)) for si, hits in per_intent]
    by_name: dict[str, ScoredTool] = {}
    for hit in whole:
        by_name.setdefault(hit.tool.name, hit)
    for _, hits in per_intent:
        for hit in hits:
            by_name.setdefault(hit.tool.name, hit)

    picked: list[str] = []
    keys: set[str] = set()
    deferred: list[str] = []

    def is_copy(name: str) -> bool:
        desc, tail = _copy_key(by_name[name])
        return (bool(desc) and desc in keys) or tail in keys

    def take(name: str) -> None:
        picked.append(name)
        desc, tail = _copy_key(by_name[name])
        if desc:
            keys.add(desc)
        keys.add(tail)

    # 1. the whole request's best
    if whole:
        take(whole[0].tool.name)
    # 2. coverage: each sub-intent's best, in request order
    for _, rel in intents:
        if len(picked) >= limit or not rel:
            continue
        order = sorted(rel, key=lambda name: -rel[name])
        if order[0] in picked:
            continue
        for name in order:
            if name in picked:
                continue
            if is_copy(name):
                deferred.append(name)
                continue
            take(name)
            break
    # 3.-5. deepen: the lists take turns (the whole request, then the sub-intents in order),
    # each adding its best tool not listed yet; one co-used with a listed tool goes first
    co = co_usage or {}
    queues = [[h.tool.name for h in whole]] + [sorted(rel, key=lambda name: -rel[name]) for _, rel in intents]
    while len(picked) < limit and any(queues):
        for queue in queues:
            if len(picked) >= limit:
                break
            together = {m for name in picked for m in co.get(name, ())}
            queue[:] = [name for name in queue if name not in picked]
            pick = next((name for name in queue if name in together), None)
            while queue and pick is None:
                head = queue.pop(0)
                if is_copy(head):
                    deferred.append(head)
                    continue
                pick = head
            if pick is not None:
                take(pick)
    for name in deferred:
        if len(picked) >= limit:
            break
        if name not in picked:
            picked.append(name)
    return [dataclasses.replace(by_name[name], intent=_answered(name, intents)) for name in picked[:limit]]


def _answered(name: str, intents: Sequence[tuple[SubIntent, dict[str, float]]]) -> str | None:
    """The sub-intent whose list ranks ``name`` highest (relative to its top), if any does."""
    best = max(intents, key=lambda item: item[1].get(name, 0.0), default=None)
    return best[0].text if best is not None and best[1].get(name, 0.0) > 0 else None


def several_steps(intents: Sequence[str], found: Sequence[tuple[str, str | None]]) -> Ambiguous:
    """The answer to ``use_tool`` for a request of several steps: running one tool would do
    one of them, so none is run; the error names each step's best tool (``found``: the
    list's tools with the sub-intent each answers) so the caller can call them in turn."""
    steps: list[dict[str, str]] = []
    for intent in intents:
        tool = next((name for name, answers in found if answers == intent), None)
        steps.append({"step": intent, **({"tool": tool} if tool else {})})
    return Ambiguous(
        f"the request asks for {len(intents)} things; one tool would do only one of them",
        hint="Call the tool of each step in turn (find_tools shows their schemas).",
        steps=steps,
    )
