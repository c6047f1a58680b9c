"""What every phrase rule reads: one text as a :class:`Context` (its sentences and words, what
its tool is called), the evidence window a finding quotes, and the vocabulary several rule
families share (assistants, sinks, transfers, identifiers, parameters).

Split from :mod:`.rules` so each family of rules sits in its own module over one shared base.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["AI", "CREDENTIAL_PARAM", "IDENT", "PARAM", "SINK", "TOKEN", "TRANSFER_RE", "Context", "Hit", "evidence_window", "first_match", "word_set"]

Hit = tuple[str, str] | None
"""What a rule returns: ``(code, evidence)``, or ``None`` (each rule reports once per text)."""

_I = re.IGNORECASE

# -- sentences and evidence ------------------------------------------------------------
_SPLIT = re.compile(r"(?<=[.!?;])\s+|(?<=:)\s+(?=(?-i:[A-Z]))|\n\s*\n|\n(?=\s*[-*•#<\[])|</?\s*important\s*>", _I)


@dataclass(slots=True)
class Context:
    """One text being scanned, with what the rules need to know about its tool."""

    text: str
    own: frozenset[str] = frozenset()  # this tool's names, lower-case
    parameter: bool = False  # the text describes a parameter (so it is where data goes)
    siblings: frozenset[str] = frozenset()  # names of tools from the same source, lower-case
    low: str = ""
    words: frozenset[str] = frozenset()
    _sentences: list[str] | None = field(default=None, repr=False)

    def __post_init__(self) -> None:
        self.low = self.text.lower()
        self.words = frozenset(TOKEN.findall(self.low))

    @property
    def sentences(self) -> list[str]:
        if self._sentences is None:
            self._sentences = [s for s in (" ".join(p.split()) for p in _SPLIT.split(self.text)) if s]
        return self._sentences

    def has(self, group: frozenset[str], also: frozenset[str] | None = None) -> bool:
        """Whether the text has a word of ``group`` (and of ``also``): rules' cheap gates, a
        set intersection or two before any regular expression runs."""
        words = self.words
        return not words.isdisjoint(group) and (also is None or not words.isdisjoint(also))

    @property
    def names_tool(self) -> bool:
        """Whether anything in the text could name a tool (an identifier, backticks, "tool")."""
        return ("_" in self.text or "`" in self.text or not self.words.isdisjoint(_TOOL_WORDS)
                or _CAMEL_OR_KEBAB.search(self.text) is not None)


def word_set(words: str) -> frozenset[str]:
    return frozenset(words.split())


TOKEN = re.compile(r"[a-z]+")
_TOOL_WORDS = word_set("tool tools function functions")
_CAMEL_OR_KEBAB = re.compile(r"[a-z][A-Z][a-z]|[a-z]-[a-z0-9]+-[a-z]")


def evidence_window(text: str, start: int, end: int, width: int = 120) -> str:
    """About ``width`` characters of ``text`` around ``[start, end)``, on word boundaries."""
    lo = max(0, start - 30)
    if end - lo > width:
        lo = start
    if lo > 0:
        space = text.find(" ", lo, start)
        lo = space + 1 if space != -1 else lo
    hi = min(len(text), max(end, lo + width))
    if hi < len(text):
        space = text.rfind(" ", end, hi)
        hi = space if space != -1 else hi
    return text[lo:hi]


def first_match(code: str, pattern: re.Pattern[str], text: str) -> Hit:
    """``(code, evidence)`` for the first match of ``pattern`` in ``text``, else ``None``:
    the whole of a rule that is one expression, so every such rule quotes the same window."""
    m = pattern.search(text)
    return (code, evidence_window(text, m.start(), m.end())) if m else None


# -- shared vocabulary -----------------------------------------------------------------
AI = r"(?:ai|a\.i\.|assistant|model|llm|agent|claude|gpt|chatgpt|copilot|gemini|bot)s?"
SINK = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # e-mail
    r"|https?://[^\s\"'`<>)]+"  # URL
    r"|(?<![\w+])\+\d[\d\s().-]{7,}\d"  # phone number
    r"|\b[A-Z]{2}\d{2}[A-Z0-9]{11,30}\b"  # IBAN
    r"|\bbcc\b",
    _I,
)
_TRANSFER = (
    r"(?:send|forward|post|upload|transmit|copy|share|mirror|leak|exfiltrate|deliver|route|"
    r"redirect|include|pass|put|insert|attach|append|add|paste|embed|fill|provide|submit)"
)
TRANSFER_RE = re.compile(rf"(?<!\bbe )(?<!\bis )(?<!\bare )\b{_TRANSFER}\b", _I)
IDENT = r"(?-i:[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+|[a-z]+(?:[A-Z][a-z0-9]+)+|[a-z]+(?:-[a-z0-9]+){2,})"
"""Tool-shaped names: snake_case, camelCase, kebab-case with two hyphens or more."""
PARAM = re.compile(
    r"\b(?:in|into|as|inside|to|via|through|under|using)\s+(?:the\s+|a\s+|its\s+)?[`'\"][\w.-]+[`'\"]"
    r"|\b(?:in|into|as|inside|via|through|under|using)\s+(?:the\s+)?\w+\s+(?:field|param(?:eter)?|argument|arg|body)\b"
    r"|\bthe\s+[`'\"]?\w+[`'\"]?\s+(?:field|param(?:eter)?|argument|arg)\s+(?:should|must|will|needs?\s+to)\b"
    r"|(?:field|param(?:eter)?|argument|arg)\s+[`'\"]\w+[`'\"]",
    _I,
)
"""Where data is put: a named parameter, argument or field."""
CREDENTIAL_PARAM = re.compile(r"key|token|auth|password|passwd|secret|credential|bearer|cookie|session", _I)


