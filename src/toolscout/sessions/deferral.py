"""When to start deferring: at a tool count (seed 003) or at a share of the model's context.

Fifteen one-line tools and fifteen tools with 2,000-token schemas are not the same
decision. Claude Code defers MCP tools once their definitions would take more than 10% of
the context window; the count rule stays for hosts that want it. A rule is written as the
session option ``threshold`` (or ``serve --defer``):

* ``15`` (an int, or ``"15"``): defer at 15 visible tools or more (the default);
* ``"auto"``: defer when the visible tools' definitions take more than 10% of the context;
* ``"auto:5%"`` (or ``"auto:5"``): more than 5% of the context.

The context window is the session's ``context_window``, else looked up from its ``model``
in :data:`CONTEXT_WINDOWS` (first matching prefix; :func:`set_context_window` adds or
overrides a row), else :data:`DEFAULT_CONTEXT_WINDOW`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..errors import ConfigError

__all__ = [
    "CONTEXT_WINDOWS",
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_SHARE",
    "DeferRule",
    "context_window",
    "set_context_window",
]

DEFAULT_SHARE = 0.10
DEFAULT_CONTEXT_WINDOW = 128_000
"""Tokens assumed when the model is unknown: the smallest window of today's common
tool-calling models, so an unknown model defers early rather than late."""

CONTEXT_WINDOWS: dict[str, int] = {
    # Model-name prefixes -> context window in tokens, from the providers' model pages.
    # The longest matching prefix wins; set_context_window() adds or overrides rows.
    "claude-": 200_000,
    "gpt-4o": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-5": 400_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5-flash": 1_048_576,
    "gemini-2": 1_048_576,
    "gemini-3": 1_048_576,
    "llama-3": 128_000,
    "mistral-large": 128_000,
    "qwen": 128_000,
}


def set_context_window(prefix: str, tokens: int) -> None:
    """Add or override a row of :data:`CONTEXT_WINDOWS` (a model-name prefix)."""
    if tokens < 1:
        raise ConfigError(f"context window for {prefix!r} must be positive, not {tokens}")
    CONTEXT_WINDOWS[prefix] = int(tokens)


def context_window(model: str | None) -> int:
    """The context window of ``model`` by the longest matching prefix, else the default."""
    if not model:
        return DEFAULT_CONTEXT_WINDOW
    name = model.lower().rsplit("/", 1)[-1]  # "anthropic/claude-..." and "models/gemini-..."
    best = max((p for p in CONTEXT_WINDOWS if name.startswith(p)), key=len, default=None)
    return CONTEXT_WINDOWS[best] if best is not None else DEFAULT_CONTEXT_WINDOW


@dataclass(frozen=True, slots=True)
class DeferRule:
    """A count rule (``count``) or a budget rule (``share`` of the context window)."""

    count: int | None = None
    share: float | None = None

    @classmethod
    def parse(cls, value: int | str | DeferRule) -> DeferRule:
        if isinstance(value, DeferRule):
            return value
        if isinstance(value, bool):
            raise ConfigError(f"threshold must be a tool count or 'auto[:N%]', not {value!r}")
        if isinstance(value, int):
            return cls(count=max(0, value))
        text = str(value).strip().lower()
        if text.isdigit():
            return cls(count=int(text))
        if text == "auto":
            return cls(share=DEFAULT_SHARE)
        if text.startswith("auto:"):
            number = text[5:].rstrip("%").strip()
            try:
                percent = float(number)
            except ValueError:
                percent = -1.0
            if 0 < percent <= 100:
                return cls(share=percent / 100)
        raise ConfigError(
            f"unknown deferral threshold {value!r}",
            hint="Use a tool count (15), 'auto' (10% of the context window) or 'auto:N%'.",
        )

    @property
    def is_budget(self) -> bool:
        return self.share is not None

    def exceeded(self, visible: int, tokens: Callable[[], int], window: int) -> bool:
        """Whether ``visible`` tools, whose definitions cost ``tokens()`` (asked only for a
        budget rule), are past this rule."""
        if self.share is None:
            return visible >= (self.count or 0)
        return visible > 0 and tokens() > self.share * window

    def describe(self, window: int) -> str:
        if self.share is None:
            return f"{self.count} tools"
        return f"{self.share:.0%} of a {window:,}-token context ({int(self.share * window):,} tokens)"
