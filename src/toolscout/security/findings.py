"""What a scan reports: :class:`Finding`, the table of codes, and findings kept on a tool.

Findings ride in ``Tool.meta`` under :data:`FINDINGS_KEY`. ``meta`` is not part of
``Tool.version`` (the content hash covers only what a model sees), so attaching findings
never changes a tool's ETag, and a tool with findings renders exactly as before.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from ..model import Tool

__all__ = [
    "CODES",
    "FINDINGS_KEY",
    "SEVERITIES",
    "Finding",
    "Severity",
    "findings_of",
    "with_findings",
]

Severity = Literal["high", "medium", "low"]
SEVERITIES: tuple[Severity, ...] = ("high", "medium", "low")
FINDINGS_KEY = "toolscout.findings"
EVIDENCE_WIDTH = 120

CODES: dict[str, tuple[Severity, str, str]] = {
    # code: (severity, class, what it means)
    "instruction_tag": ("high", "hidden_instruction", "an <IMPORTANT>/<system>/[INST]-style block addressed to the model"),
    "override_instructions": ("high", "hidden_instruction", "tells the model to ignore or replace its instructions"),
    "conceal_from_user": ("high", "hidden_instruction", "tells the model to hide something from the user or skip asking"),
    "line_jumping": ("medium", "hidden_instruction", "a standing order for every request or every tool, or to run a command before use"),
    "model_directive": ("medium", "hidden_instruction", "orders to the model with claimed authority, wide scope, secrecy or personal data"),
    "secret_access": ("high", "secret_access", "asks the model to read or pass on keys, credential files or environment variables"),
    "exfiltration": ("high", "secret_access", "asks the model to send conversation, files or secrets somewhere"),
    "sensitive_path": ("low", "secret_access", "mentions a credential file (informational)"),
    "tool_shadowing": ("high", "tool_shadowing", "changes how another tool is called (recipient, destination, extra content)"),
    "tool_override": ("medium", "tool_shadowing", "claims to replace another tool, or tells the model to avoid or distrust it"),
    "unicode_tags": ("high", "invisible_characters", "Unicode tag characters (U+E0000 block): text a model reads and a person cannot see"),
    "bidi_control": ("high", "invisible_characters", "bidirectional override or isolate characters that reorder what a person sees"),
    "control_characters": ("high", "invisible_characters", "terminal escape or backspace characters that hide or rewrite text"),
    "zero_width": ("medium", "invisible_characters", "zero-width characters inside words or in runs"),
    "deceptive_name": ("high", "invisible_characters", "a name with invisible characters or letters from mixed scripts (homoglyphs)"),
    "mixed_script": ("low", "invisible_characters", "a word mixing Latin with Cyrillic or Greek letters"),
    "encoded_instruction": ("high", "encoded_payload", "an encoded blob that decodes to instructions"),
    "encoded_payload": ("medium", "encoded_payload", "an encoded blob that decodes to readable text"),
    "rug_pull": ("medium", "rug_pull", "the tool changed since it was first seen or approved"),
    "classifier_flag": ("medium", "hidden_instruction", "the operator's own classifier flagged the text"),
}
"""Every code a scan can emit: its fixed severity, its class, and a one-line meaning."""

_RANK = {"high": 0, "medium": 1, "low": 2}


@dataclass(frozen=True, slots=True)
class Finding:
    """One reason to distrust a tool: ``code`` (see :data:`CODES`), ``severity``, the
    ``field`` it was found in (``description``, ``name``,
    ``input_schema.properties.path.description``...) and the offending text."""

    code: str
    severity: Severity
    field: str
    evidence: str

    @classmethod
    def of(cls, code: str, field: str, evidence: str) -> Finding:
        """A finding with the code's own severity and the evidence trimmed for display."""
        return cls(code, CODES[code][0], field, trim(evidence))

    @property
    def klass(self) -> str:
        """The attack class this code belongs to (``hidden_instruction``, ``rug_pull``...)."""
        return CODES[self.code][1] if self.code in CODES else "unknown"

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "severity": self.severity, "field": self.field, "evidence": self.evidence}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Finding:
        severity = data.get("severity")
        return cls(
            str(data.get("code", "")),
            severity if severity in _RANK else "low",  # type: ignore[arg-type]
            str(data.get("field", "")),
            str(data.get("evidence", "")),
        )

    def at_least(self, severity: Severity) -> bool:
        return _RANK[self.severity] <= _RANK[severity]


def trim(text: str, width: int = EVIDENCE_WIDTH) -> str:
    """Whitespace collapsed, control and format characters shown as ``<U+XXXX>`` (evidence is
    printed to terminals and logs, where an escape sequence would act), cut to ``width``."""
    text = " ".join(text.split())
    if not text.isprintable():
        text = "".join(ch if ch.isprintable() else f"<U+{ord(ch):04X}>" for ch in text)
    return text if len(text) <= width else text[: width - 1].rstrip() + "…"


def ordered(findings: Iterable[Finding]) -> list[Finding]:
    """Most severe first; one finding per (code, field, evidence)."""
    unique = dict.fromkeys(findings)
    return sorted(unique, key=lambda f: _RANK[f.severity])


def findings_of(tool: Tool) -> list[Finding]:
    """The findings a scan attached to ``tool`` (empty when it was clean or never scanned)."""
    raw = tool.meta.get(FINDINGS_KEY)
    if not isinstance(raw, list):
        return []
    return [Finding.from_dict(item) for item in raw if isinstance(item, Mapping)]


def with_findings(tool: Tool, findings: Iterable[Finding]) -> Tool:
    """``tool`` with ``findings`` in its meta (replacing earlier ones); same ``version``."""
    items = [f.to_dict() for f in findings]
    meta = {k: v for k, v in tool.meta.items() if k != FINDINGS_KEY}
    if items:
        meta[FINDINGS_KEY] = items
    if meta == dict(tool.meta):
        return tool
    return tool.replace(meta=meta)
