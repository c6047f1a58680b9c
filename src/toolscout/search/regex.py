"""Regex search over tool names and descriptions, safe on hostile patterns.

The engine is RE2 (``google-re2``): matching is linear in the text, so a pattern such as
``(a+)+$`` cannot backtrack catastrophically. Syntax RE2 does not support (backreferences,
lookaround) gives :class:`~toolscout.errors.InvalidRegex` with a hint, never a crash.

Limits: a pattern is at most :data:`MAX_PATTERN` (512) characters and RE2 may use at most
8 MB to compile it; matching is case-insensitive and per line (``^``/``$`` anchor at each
name or description).

A glob-style pattern (``get_*_data``, ``*weather*``), meaning one with ``*`` or ``?`` and no
other regex syntax, is read as a glob: ``*`` is any run of characters, ``?`` one character.

Names are all searched in one pass over a newline-joined text (and likewise descriptions),
so a query costs one RE2 scan per field rather than one call per tool. A name match scores
2, a description match 1; ties keep catalog order.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..errors import InvalidRegex
from ..model import Tool
from .base import Hit
from .ranking import Ranking

__all__ = ["MAX_PATTERN", "RegexBackend", "RegexRanking", "compile_pattern"]

MAX_PATTERN = 512
_MAX_MEM = 8 << 20
_REGEX_SYNTAX = re.compile(r"[.^$+()\[\]{}|\\]")
_WHY = {2.0: "regex: name", 1.0: "regex: description", 3.0: "regex: name, description"}
_FULL = 3.0  # a name and a description match: relevance 1


def _is_glob(pattern: str) -> bool:
    return ("*" in pattern or "?" in pattern) and not _REGEX_SYNTAX.search(pattern)


def _glob_to_regex(pattern: str) -> str:
    return "".join(".*" if ch == "*" else "." if ch == "?" else re.escape(ch) for ch in pattern)


def compile_pattern(pattern: str) -> Any:
    """Compile ``pattern`` with RE2 (case-insensitive, multi-line); InvalidRegex if unusable."""
    import re2  # here: the serve path never pays its import unless a regex arrives

    if not pattern.strip():
        raise InvalidRegex("the regex pattern is empty")
    if len(pattern) > MAX_PATTERN:
        raise InvalidRegex(
            f"the regex pattern is {len(pattern)} characters; the limit is {MAX_PATTERN}",
            length=len(pattern),
            limit=MAX_PATTERN,
        )
    source = _glob_to_regex(pattern) if _is_glob(pattern) else pattern
    options = re2.Options()
    options.case_sensitive = False
    options.max_mem = _MAX_MEM
    options.log_errors = False
    options.never_nl = False
    try:
        return re2.compile(f"(?m){source}", options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else "invalid"
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        raise InvalidRegex(f"unsupported or invalid regex {pattern!r}: {reason}", pattern=pattern) from None


class RegexBackend:
    """Regex over names and descriptions; the joined texts are built on the first regex query
    (most sessions never use regex, so a large catalog does not pay their memory)."""

    name = "regex"

    def __init__(self) -> None:
        self._tools: Sequence[Tool] = ()
        self._fields: list[tuple[bytes, np.ndarray]] | None = None
        self._n = 0

    def rebuild(self, tools: Sequence[Tool]) -> None:
        self._tools = tools
        self._n = len(tools)
        self._fields = None

    def _texts(self) -> list[tuple[bytes, np.ndarray]]:
        if self._fields is None:
            self._fields = [
                self._join([t.name for t in self._tools]),
                self._join([" ".join(t.description.split()) for t in self._tools]),
            ]
        return self._fields

    @staticmethod
    def _join(lines: list[str]) -> tuple[bytes, np.ndarray]:
        # UTF-8 bytes (1 byte per ASCII char whatever else the text holds). Line i starts at
        # starts[i]; a match at byte p belongs to the last start <= p.
        encoded = [s.encode("utf-8", "replace") for s in lines]
        lengths = np.fromiter((len(b) + 1 for b in encoded), dtype=np.int64, count=len(encoded))
        starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if encoded else np.zeros(0, np.int64)
        return b"\n".join(encoded), starts

    def match_scores(self, pattern: str) -> np.ndarray:
        """Score per doc: 2 for a name match, +1 for a description match, 0 otherwise."""
        compiled = compile_pattern(pattern)
        scores = np.zeros(self._n, dtype=np.float32)
        for weight, (text, starts) in zip((2.0, 1.0), self._texts(), strict=True):
            pos = 0
            while pos <= len(text):
                m = compiled.search(text, pos)
                if m is None:
                    break
                doc = int(np.searchsorted(starts, m.start(), side="right")) - 1
                scores[doc] += weight
                # Continue at the next line: one match per doc and field is enough.
                pos = int(starts[doc + 1]) if doc + 1 < self._n else len(text) + 1
        return scores

    def search(self, query: str, *, limit: int, mask: np.ndarray | None = None) -> list[Hit]:
        scores = self.match_scores(query)
        if mask is not None:
            scores[~mask] = 0.0
        matched = np.flatnonzero(scores > 0)
        order = matched[np.lexsort((matched, -scores[matched]))][: max(limit, 0)]
        return [Hit(int(d), float(scores[d]), _WHY[float(scores[d])]) for d in order]

    def ranking(self, query: str, mask: np.ndarray) -> RegexRanking:
        """``query``'s ranking within ``mask``, for the finishing step (:mod:`~toolscout.search.signals`)."""
        return RegexRanking(self, query, mask)


class RegexRanking(Ranking):
    """Regex mode's ranking. A pattern is a filter: signals may reorder the docs it matched
    (their boosts a share of a name and description match), never add others."""

    def __init__(self, backend: RegexBackend, query: str, mask: np.ndarray) -> None:
        super().__init__("regex", query)
        self._rx = backend
        self._mask = mask
        self._raw: np.ndarray | None = None

    @property
    def bound(self) -> float:
        return _FULL

    def cut(self, limit: int) -> tuple[list[Hit], int]:
        raw = self._rx.match_scores(self.query)
        raw[~self._mask] = 0.0
        self._raw = raw
        total = int(np.count_nonzero(raw))
        matched = np.flatnonzero(raw > 0)
        if not self.rescores:
            order = matched[np.lexsort((matched, -raw[matched]))][: max(limit, 0)]
            return [Hit(int(d), float(raw[d]), _WHY[float(raw[d])]) for d in order], total
        scores = self.adjusted(raw.astype(np.float64), _FULL)
        order = matched[np.lexsort((matched, -scores[matched]))][: max(limit, 0)]
        return [Hit(int(d), float(scores[d]), _WHY.get(float(raw[d]), "regex")) for d in order], total

    def matched(self, doc: int) -> bool:
        return self._raw is not None and bool(self._raw[doc] > 0)

    def relevance(self, score: float, hits: Sequence[Hit]) -> float:
        return min(1.0, score / _FULL)
