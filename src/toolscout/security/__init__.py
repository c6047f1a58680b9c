"""Tool-poisoning detection: upstream tool descriptions are text a model reads as instructions.

``scan(tool)`` lists :class:`Finding` s (code, severity, field, evidence); a
:class:`Screen` applies a policy (``warn``, ``quarantine``, ``off``) as tools enter a
catalog and keeps rug-pull :class:`Pins`; ``findings_of(tool)`` reads what was attached.
See docs/security.md for the codes.
"""

from __future__ import annotations

from .findings import CODES, FINDINGS_KEY, SEVERITIES, Finding, Severity, findings_of, with_findings
from .pins import Pins
from .poisoning import scan, scan_text
from .screen import MODES, QUARANTINE_KEY, Mode, Screen, allowed, blocking, is_quarantined

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
