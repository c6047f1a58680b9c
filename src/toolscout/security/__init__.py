"""Tool-poisoning detection: upstream tool descriptions are text a model reads as instructions.

``scan(tool)`` lists :class:`Finding` s (code, severity, field, evidence); a
:class:`Screen` applies a policy (``warn``, ``quarantine``, ``off``) as tools enter a
catalog and keeps rug-pull :class:`Pins`; ``findings_of(tool)`` reads what was attached.
See docs/security.md for the codes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .findings import CODES, FINDINGS_KEY, SEVERITIES, Finding, Severity, findings_of, with_findings

if TYPE_CHECKING:
    from .pins import Pins
    from .poisoning import scan, scan_text
    from .screen import MODES, QUARANTINE_KEY, Mode, Screen, allowed, blocking, is_quarantined

# The scanner's rules take a while to compile: loaded on first use, so reading findings
# (the gateway does, on every search) costs no start-up time.
_LAZY = {
    "Pins": "pins",
    "scan": "poisoning",
    "scan_text": "poisoning",
    "MODES": "screen",
    "QUARANTINE_KEY": "screen",
    "Mode": "screen",
    "Screen": "screen",
    "allowed": "screen",
    "blocking": "screen",
    "is_quarantined": "screen",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value

__all__ = [
    "CODES",
    "FINDINGS_KEY",
    "MODES",
    "QUARANTINE_KEY",
    "SEVERITIES",
    "Finding",
    "Mode",
    "Pins",
    "Screen",
    "Severity",
    "allowed",
    "blocking",
    "findings_of",
    "is_quarantined",
    "scan",
    "scan_text",
    "with_findings",
]
