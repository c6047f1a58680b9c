"""Merging two workers' changes to one session's state (three-way: the state last synced,
ours, theirs), so concurrent writers lose no reveal.

Plain Python, with the session's rules (the reveal cap, recency, search counters), and no
Redis: :class:`~toolscout.sessions.redis.RedisSessionStore` calls it when a compare-and-set
finds another worker wrote first, and it is tested on its own.
"""

from __future__ import annotations

import json
from typing import Any

from .dispatch import MAX_SEARCHES

__all__ = ["merge_states"]


def _moved(before: list[str], after: list[str]) -> list[str]:
    """The tail of ``after`` (a recency order) that is no longer in ``before``'s order:
    the names used since ``before``, in the order they were used."""
    where = {name: i for i, name in enumerate(before)}
    last = -1
    for i, name in enumerate(after):
        at = where.get(name, -1)
        if at < last or at < 0:
            return after[i:]
        last = at
    return []


def merge_states(
    base: dict[str, Any] | None, ours: dict[str, Any], theirs: dict[str, Any] | None, *, max_revealed: int
) -> dict[str, Any]:
    """Three-way merge of session states: ``base`` is ours when it last matched the store,
    ``theirs`` what the store holds now (``None``: nothing, so ours stands).

    Reveals from both sides are kept (theirs first, then ours in our order); a name one
    side dropped since ``base`` stays dropped; names used here move to the recent end;
    search counters add our increments to theirs; past ``max_revealed`` the least recently
    used go. Fields this merge does not know take ours when we changed them (lists: the
    union), else theirs.
    """
    if theirs is None:
        return dict(ours)
    base = base or {}
    b_rev, o_rev, t_rev = base.get("revealed", []), ours.get("revealed", []), theirs.get("revealed", [])
    b_set, o_set, t_set = set(b_rev), set(o_rev), set(t_rev)
    dropped = b_set - o_set
    revealed = [n for n in t_rev if n not in dropped]
    revealed += [n for n in o_rev if n not in b_set and n not in t_set]
    keep = set(revealed)
    moved = _moved(base.get("recency", []), ours.get("recency", []))
    moved_set = set(moved)
    recency = [n for n in theirs.get("recency", []) if n in keep and n not in moved_set]
    recency += [n for n in moved if n in keep]
    listed = set(recency)
    recency = [n for n in revealed if n not in listed] + recency  # unknown recency: oldest
    over = len(revealed) - max(1, max_revealed)
    if over > 0:
        evicted, recency = set(recency[:over]), recency[over:]
        revealed = [n for n in revealed if n not in evicted]
        keep -= evicted
    t_ver, o_ver = theirs.get("versions", {}), ours.get("versions", {})
    versions = {k: v for k, v in {**t_ver, **o_ver}.items() if k in keep or k in o_ver}
    b_search, searches = base.get("searches", {}), dict(theirs.get("searches", {}))
    for key, count in ours.get("searches", {}).items():
        grew = count - b_search.get(key, 0)
        if grew > 0:
            searches[key] = searches.pop(key, 0) + grew  # re-inserted: most recent last
    while len(searches) > MAX_SEARCHES:
        del searches[next(iter(searches))]
    out = dict(theirs)
    for key, value in ours.items():
        if value == base.get(key):
            continue
        other = theirs.get(key)
        if isinstance(value, list) and isinstance(other, list):
            seen = set(map(_hashable, other))
            out[key] = [*other, *(v for v in value if _hashable(v) not in seen)]
        else:
            out[key] = value
    out.update(id=ours.get("id", theirs.get("id")), revealed=revealed, recency=recency)
    out.update(versions=versions, searches=searches)
    return out


def _hashable(value: Any) -> Any:
    return value if isinstance(value, str | int | float | bool | None) else json.dumps(value, sort_keys=True)
