"""Policy: scan tools as they enter a catalog, attach findings, hold back quarantined ones.

Three modes, per upstream server or for the whole gateway:

- ``warn`` (default): every tool is kept; findings ride in its meta (:func:`findings_of`)
  and are logged.
- ``quarantine``: a tool with a high or medium finding is neither searchable nor callable
  until a person allows it (an ``allow`` pattern: a glob on its name, optionally
  ``name@version`` to allow exactly the content that was reviewed).
- ``off``: no scanning.
"""

from __future__ import annotations

import fnmatch
import logging
from collections.abc import Collection, Sequence
from typing import Any, Literal, TypeVar

from ..model import Tool
from .findings import FINDINGS_KEY, Finding, findings_of, ordered
from .pins import Pins
from .poisoning import scan

__all__ = ["MODES", "QUARANTINE_KEY", "Mode", "Screen", "allowed", "blocking", "is_quarantined"]

log = logging.getLogger("toolscout.security")

Mode = Literal["warn", "quarantine", "off"]
MODES: tuple[Mode, ...] = ("warn", "quarantine", "off")
QUARANTINE_KEY = "toolscout.quarantined"
_LOGGED_PER_SOURCE = 20

T = TypeVar("T")


def blocking(findings: Collection[Finding]) -> bool:
    """Whether findings are serious enough to quarantine (high or medium)."""
    return any(f.at_least("medium") for f in findings)


def allowed(tool: Tool, patterns: Collection[str]) -> bool:
    """Whether an allow pattern (``glob`` or ``glob@version``) admits ``tool``, matched on its
    upstream name or its catalog name."""
    for pattern in patterns:
        glob, _, version = pattern.partition("@")
        if version and version != tool.version:
            continue
        if fnmatch.fnmatchcase(tool.call_name, glob) or fnmatch.fnmatchcase(tool.name, glob):
            return True
    return False


def is_quarantined(tool: Tool) -> bool:
    """Whether :meth:`Screen.review` held this tool back."""
    return bool(tool.meta.get(QUARANTINE_KEY))


class Screen:
    """Scans tools and applies a mode; one per catalog feed (it owns the rug-pull pins)."""

    def __init__(self, pins: Pins | None = None) -> None:
        self.pins = pins if pins is not None else Pins()

    def review(
        self,
        tools: Sequence[Tool],
        *,
        mode: Mode | str = "warn",
        allow: Collection[str] = (),
        source: str = "",
    ) -> list[Tool]:
        """``tools`` with findings attached; in ``quarantine`` mode the held-back ones are
        marked (:func:`is_quarantined`). Same order; nothing is dropped here."""
        if mode == "off" or not tools:
            return list(tools)
        if mode not in MODES:
            raise ValueError(f"poisoning mode must be one of {MODES}, not {mode!r}")
        siblings = frozenset(n.lower() for t in tools for n in (t.name, t.call_name))
        rug = self.pins.check((t.name, t) for t in tools)
        out: list[Tool] = []
        logged = 0
        for tool in tools:
            findings = scan(tool, siblings=siblings)
            if tool.name in rug:
                findings = ordered([rug[tool.name], *findings])
            held = mode == "quarantine" and blocking(findings) and not allowed(tool, allow)
            if findings or held or FINDINGS_KEY in tool.meta:
                meta = {k: v for k, v in tool.meta.items() if k not in (FINDINGS_KEY, QUARANTINE_KEY)}
                if findings:
                    meta[FINDINGS_KEY] = [f.to_dict() for f in findings]
                if held:
                    meta[QUARANTINE_KEY] = True
                tool = tool.replace(meta=meta)
            if blocking(findings) and logged < _LOGGED_PER_SOURCE:
                logged += 1
                _log(source, tool, findings, held)
            out.append(tool)
        flagged = sum(1 for t in out if blocking(findings_of(t)))
        if flagged > logged:
            log.warning("%s: %d more tools flagged (toolscout audit lists them all)", source or "catalog", flagged - logged)
        return out

    def apply(self, source: str, pairs: list[tuple[Tool, T]], mode: Mode | str, allow: Collection[str]) -> list[tuple[Tool, T]]:
        """:meth:`review` over ``(tool, payload)`` pairs (the aggregator keeps raw entries)."""
        reviewed = self.review([t for t, _ in pairs], mode=mode, allow=allow, source=source)
        return [(tool, payload) for tool, (_, payload) in zip(reviewed, pairs, strict=True)]

    @classmethod
    def on_store(cls, store: Any | None) -> Screen:
        """A screen whose pins live in ``store`` (e.g. the tool-list cache), else in memory."""
        return cls(Pins(store))


def _log(source: str, tool: Tool, findings: list[Finding], held: bool) -> None:
    worst = findings[0]
    more = f" (+{len(findings) - 1} more)" if len(findings) > 1 else ""
    log.warning(
        "%s: tool %s %s: %s (%s) in %s: %s%s",
        source or "catalog",
        tool.name,
        "quarantined" if held else "flagged",
        worst.code,
        worst.severity,
        worst.field,
        worst.evidence,
        more,
    )
