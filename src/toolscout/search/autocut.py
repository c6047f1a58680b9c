"""AutoCut: drop the weak tail of a ranking where the scores fall off a cliff.

Two rules from the seeds, both available:

* ``"cliff"`` (seed 002, after Weaviate's AutoCut): cut below the first adjacent pair whose
  score ratio exceeds 2.0 (a drop of more than half from one result to the next);
* ``"band"`` (seed 003): keep only results scoring at least half of the top score.

The band rule is the stricter one (every result a cliff would keep past the top band is also
cut). docs/search.md gives the measured effect of each on R@5 and nDCG@10; the default is
the rule that costs the least quality there.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["AUTOCUT_RULES", "DEFAULT_RULE", "autocut"]

AUTOCUT_RULES: tuple[str, ...] = ("cliff", "band", "none")
DEFAULT_RULE = "cliff"
RATIO = 2.0


def autocut(scores: Sequence[float], rule: str = DEFAULT_RULE) -> int:
    """How many of the best-first ``scores`` to keep (at least one if there are any)."""
    if not scores or rule == "none":
        return len(scores)
    if rule == "band":
        floor = scores[0] / RATIO
        return max(1, sum(1 for s in scores if s >= floor))
    if rule == "cliff":
        for i in range(1, len(scores)):
            if scores[i] <= 0 or scores[i - 1] / scores[i] > RATIO:
                return i
        return len(scores)
    raise ValueError(f"unknown AutoCut rule {rule!r}; choose from {AUTOCUT_RULES}")
