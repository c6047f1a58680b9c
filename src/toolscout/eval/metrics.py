"""Retrieval metrics, per query, in 0..1 (reports show percentages).

Relevance is binary and counted per *group*: a query's relevant tools form groups of
equivalent copies (``relevant_groups``; without them each relevant name is its own group).
A group is found once, by its best-ranked member; later copies neither add nor count as
misses. So with groups ``{a, a_copy}, {b}``, the ranking ``[a_copy, a, b]`` has recall@2 = 1/2
and its nDCG counts positions 1 and 3.

- ``recall@k``: found groups in the top k / number of groups (so R@1 of a query with three
  relevant tools is at most 1/3, as in the ToolRet benchmarks).
- ``hit@1``: the first result belongs to some group.
- ``ndcg@k``: DCG with gain 1 at the first position of each group, log2 discount, divided by
  the ideal DCG of min(groups, k) hits.
- ``complete@k``: every group is in the top k (1 or 0). A request that needs three tools
  is served only when the model is shown all three: recall@k gives it 2/3 for a list the
  agent cannot finish its task with, complete@k gives it 0.
- ``coverage@k``: the share of the groups in the top k, i.e. recall@k at the depth a model
  is shown (reported beside complete@k so the two read together: a list can cover most
  needed tools of every request and complete few).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["complete_at", "coverage_at", "group_positions", "hit_at", "ndcg_at", "recall_at"]


def group_positions(ranked: Sequence[str], groups: Sequence[frozenset[str]]) -> list[int]:
    """0-based rank at which each group is first found (only found groups, ascending)."""
    found: list[int] = []
    taken = [False] * len(groups)
    for pos, name in enumerate(ranked):
        for gi, group in enumerate(groups):
            if not taken[gi] and name in group:
                taken[gi] = True
                found.append(pos)
                break
    return found


def recall_at(positions: Sequence[int], n_groups: int, k: int) -> float:
    return sum(1 for p in positions if p < k) / n_groups if n_groups else 0.0


def hit_at(positions: Sequence[int], k: int) -> float:
    return 1.0 if any(p < k for p in positions) else 0.0


def ndcg_at(positions: Sequence[int], n_groups: int, k: int) -> float:
    if not n_groups:
        return 0.0
    dcg = sum(1.0 / math.log2(p + 2) for p in positions if p < k)
    ideal = sum(1.0 / math.log2(i + 2) for i in range(min(n_groups, k)))
    return dcg / ideal


def complete_at(positions: Sequence[int], n_groups: int, k: int) -> float:
    """1.0 when every one of the ``n_groups`` groups is in the top ``k`` (0 without groups)."""
    return 1.0 if n_groups and sum(1 for p in positions if p < k) == n_groups else 0.0


def coverage_at(positions: Sequence[int], n_groups: int, k: int) -> float:
    """The share of the ``n_groups`` groups found in the top ``k``."""
    return recall_at(positions, n_groups, k)
