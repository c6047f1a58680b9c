"""One scored document of a ranking: the record every backend and ranking speaks.

Its own module so that :mod:`toolscout.search.base` (the seam) and
:mod:`toolscout.search.ranking` (lazy rankings the seam names) both use it without
importing each other.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Hit"]


@dataclass(frozen=True, slots=True)
class Hit:
    doc: int
    score: float
    why: str = ""
