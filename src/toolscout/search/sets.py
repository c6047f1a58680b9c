"""Set-aware ranking: one list that holds a tool for every sub-intent of a request.

Why: a list scored against a whole multi-step request gives its slots to the largest part:
for "roll back the deployment and tell slack", ten Kubernetes tools and no messaging tool.
The model can only call what it is shown, so a request is served by the *set* of tools its
steps need (complete@k in :mod:`toolscout.eval.metrics`).

How (the field's methods in toolscout's terms; nothing copied): each sub-intent
(:mod:`~toolscout.search.subintents`) is ranked on its own, in the request's mode and with
the same signals as any search (per-intent retrieval, as ToolQP and MCP-Zero decompose a
request). Then:

1. **The whole request's list is the base**: its order is the best evidence of what matters
   most (the whole text has every word), so its best tool stays first and a wrong split
   cannot cost the top result.
2. **Coverage**: a sub-intent whose best tool that list would not show (within ``limit``)
   gets it in, in request order, in the last slots: the list then holds a tool for every
   step, and the whole request's own order above is kept (a single-tool request said in
   two sentences loses nothing but its tail).
3. **No near-duplicates**: a copy of a listed tool (the same description, or the same name
   spelt otherwise) goes to the end, not into a slot another step needs (COLT and HYSET
   ask the same of a retrieved set: completeness, not more of one kind).
4. **Co-usage completes a set**: a tool sessions called together with a listed one
   (:meth:`toolscout.search.learning.UsageLearner.co_usage`) takes the last slot of the base list.

Measured on the dev sets with one set held out (docs/benchmarks.md#set-retrieval), giving
the sub-intents turns to deepen their own lists cost both single-tool nDCG and multi-tool
complete@10 against this: the whole request's order below its first tool is better than
any one part's. No weight is fitted to any data: the inputs are ranks.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Mapping, Sequence

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
    by_server: Sequence[ScoredTool] = (),
    lookup: Callable[[str], ScoredTool | None] | None = None,
) -> list[ScoredTool]:
    """The ``limit`` tools covering ``per_intent``'s sub-intents (module docstring); each
    carries the sub-intent it answers best in ``intent``. ``lookup`` gives a tool co-usage
    names that no list holds (``None``: the caller may not see it)."""
    if limit <= 0:
        return []
    intents = [(si, _normalised(hits)) for si, hits in per_intent]
    by_name: dict[str, ScoredTool] = {}
    for hit in whole:
        by_name.setdefault(hit.tool.name, hit)
    for _, hits in per_intent:
        for hit in hits:
            by_name.setdefault(hit.tool.name, hit)
    for hit in by_server:
        by_name.setdefault(hit.tool.name, hit)
    # The whole request's list, copies of a listed tool moved to its end.
    base: list[str] = []
    copies: list[str] = []
    keys: set[str] = set()
    for hit in whole:
        desc, name = _copy_key(hit)
        if (desc and desc in keys) or name in keys:
            copies.append(hit.tool.name)
            continue
        base.append(hit.tool.name)
        keys.update(k for k in (desc, name) if k)
    shown = set(base[:limit])
    # Each sub-intent whose best tool the list would not show gets it in, in request order;
    # a tool sessions called with a listed one (co-usage) joins when a slot is left.
    missing: list[str] = []
    steps: set[str] = set()  # each sub-intent's best tool
    for _, hits in per_intent:
        best = next((h for h in hits if h.tool.name not in copies), None)
        if best is not None:
            steps.add(best.tool.name)
        if best is None or best.tool.name in shown or best.tool.name in missing:
            continue
        desc, name = _copy_key(best)
        if (desc and desc in keys and best.tool.name not in base) or len(missing) >= limit - 1:
            continue
        missing.append(best.tool.name)
    # The best tool's best sibling, when its server matches too (servers.py), takes a slot,
    # never the slot of a step's own best tool.
    firsts = {hits[0].tool.name for _, hits in per_intent if hits}
    for hit in by_server:
        name = hit.tool.name
        kept = [n for n in base if n not in missing and n != name]
        needed = max((i + 1 for i, n in enumerate(kept[:limit]) if n in firsts), default=1)
        if name in shown or name in missing or limit - len(missing) - 1 < needed:
            continue
        desc, key = _copy_key(hit)
        if name not in base and ((desc and desc in keys) or key in keys):  # a copy of a listed tool
            continue
        missing.append(name)
    co = co_usage or {}
    listed = [n for n in base if n not in missing]
    head = _room_for_steps(listed, max(1, limit - len(missing)), steps)
    if co and lookup is not None:  # a tool called with a listed one need not match the request's words
        for m in dict.fromkeys(m for n in (*head, *missing) for m in co.get(n, ()) if m not in by_name):
            found = lookup(m)
            if found is not None:
                by_name[m] = found
    together = [m for n in (*head, *missing) for m in co.get(n, ()) if m in by_name and m not in head and m not in missing]
    if together and len(head) + len(missing) >= limit and len(head) > 1:
        head = head[:-1]
        missing.append(together[0])
    picked = [*head, *missing]
    picked += [n for n in (*listed, *copies) if n not in picked]
    return [dataclasses.replace(by_name[name], intent=_answered(name, intents) or by_name[name].intent) for name in picked[:limit]]


def _room_for_steps(listed: Sequence[str], room: int, steps: set[str]) -> list[str]:
    """The first ``room`` of ``listed``, except that a sub-intent's best tool the list
    showed keeps its slot when the tools brought in for other steps push it down: the
    last tool that is no step's best gives way ("make sure the addresses exist. Validate
    their format": the second step's tool must not cost the first step's)."""
    head = list(listed[:room])
    for name in listed[room:]:
        if name not in steps:
            continue
        drop = next((i for i in range(len(head) - 1, 0, -1) if head[i] not in steps), None)
        if drop is None:
            break
        del head[drop]
        head.append(name)
    return head


def _answered(name: str, intents: Sequence[tuple[SubIntent, dict[str, float]]]) -> str | None:
    """The sub-intent whose list ranks ``name`` highest (relative to its top), if any does."""
    best = max(intents, key=lambda item: item[1].get(name, 0.0), default=None)
    return best[0].text if best is not None and best[1].get(name, 0.0) > 0 else None


def several_steps(intents: Sequence[str], best: Mapping[str, str]) -> Ambiguous:
    """The answer to ``use_tool`` for a request of several steps: running one tool would do
    one of them, so none is run; the error names each step's best tool (``best``) so the
    caller can call them in turn."""
    steps = [{"step": intent, **({"tool": best[intent]} if intent in best else {})} for intent in intents]
    return Ambiguous(
        f"the request asks for {len(intents)} things; one tool would do only one of them",
        hint="Call the tool of each step in turn (find_tools shows their schemas).",
        steps=steps,
    )
