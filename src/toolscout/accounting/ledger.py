"""Per-session token ledger: tool-definition tokens sent each turn against a static list.

Recording a turn is cheap (it keeps references to the rendered definitions); tokens are
counted only when someone reads the ledger, with one count per ``(format, tool, version)``
shared by every session, so the per-turn cost of a session stays far below a millisecond.
Counts use o200k (``toolscout.accounting.tokens``); for Claude and Gemini they are an o200k estimate.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from .tokens import count_tool_tokens

__all__ = ["Ledger", "Turn"]

_TOKEN_CACHE: OrderedDict[str, int] = OrderedDict()
_TOKEN_CACHE_MAX = 200_000


def _count_one(definition: dict[str, Any]) -> int:
    key = json.dumps(definition, separators=(",", ":"), ensure_ascii=False)
    cached = _TOKEN_CACHE.get(key)
    if cached is not None:
        return cached
    value = count_tool_tokens([definition])
    _TOKEN_CACHE[key] = value
    if len(_TOKEN_CACHE) > _TOKEN_CACHE_MAX:
        _TOKEN_CACHE.popitem(last=False)
    return value


def count_definitions(definitions: Sequence[dict[str, Any]]) -> int:
    """Tokens of a tool list, as the sum of each definition's (cached) count."""
    return sum(_count_one(d) for d in definitions)


@dataclass(slots=True)
class Turn:
    """One request's tool list: what was sent, and what a static list would have cost."""

    number: int
    format: str
    names: tuple[str, ...]
    _definitions: tuple[dict[str, Any], ...] = field(repr=False)
    _baseline: Callable[[], int] = field(repr=False)
    _tokens: int | None = field(default=None, repr=False)

    @property
    def tokens(self) -> int:
        if self._tokens is None:
            self._tokens = count_definitions(self._definitions)
        return self._tokens

    @property
    def baseline_tokens(self) -> int:
        return self._baseline()

    def to_dict(self) -> dict[str, Any]:
        return {
            "turn": self.number,
            "format": self.format,
            "tools": list(self.names),
            "tokens": self.tokens,
            "baseline_tokens": self.baseline_tokens,
        }


class Ledger:
    """Turns sent by one session, and notable events (schema changes, evictions)."""

    def __init__(self) -> None:
        self.turns: list[Turn] = []
        self.events: list[dict[str, Any]] = []

    def record(
        self,
        format: str,
        definitions: Sequence[dict[str, Any]],
        names: Sequence[str],
        baseline: Callable[[], int],
    ) -> Turn:
        turn = Turn(len(self.turns) + 1, format, tuple(names), tuple(definitions), baseline)
        self.turns.append(turn)
        return turn

    def note(self, event: str, **details: Any) -> None:
        self.events.append({"event": event, "turn": len(self.turns), **details})

    @property
    def tokens_sent(self) -> int:
        return sum(t.tokens for t in self.turns)

    @property
    def baseline_tokens(self) -> int:
        return sum(t.baseline_tokens for t in self.turns)

    @property
    def saved_fraction(self) -> float:
        base = self.baseline_tokens
        return 1.0 - self.tokens_sent / base if base else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "turns": [t.to_dict() for t in self.turns],
            "tokens_sent": self.tokens_sent,
            "baseline_tokens": self.baseline_tokens,
            "saved_fraction": round(self.saved_fraction, 4),
            "events": list(self.events),
        }

    def report(self) -> str:
        """A few readable lines: per-turn tokens vs the static list, then the total."""
        lines = [
            f"turn {t.number}: {t.tokens} tool tokens ({len(t.names)} tools) vs "
            f"{t.baseline_tokens} static"
            for t in self.turns
        ]
        lines.append(
            f"total: {self.tokens_sent} vs {self.baseline_tokens} tool-definition tokens "
            f"({self.saved_fraction:.1%} saved, o200k)"
        )
        return "\n".join(lines)
