"""Tool names each API accepts, and a deterministic "wire name" for the others.

OpenAI and Anthropic accept ``[A-Za-z0-9_-]{1,64}``; Gemini also ``.`` and ``:``, starting
with a letter or ``_``. Real catalogs break this (a fifth of the evaluation tools have
names over 64 characters), and one bad name makes the provider reject the whole request.
A name that fits is sent unchanged; one that does not is sent as its wire name: bad
characters become ``_``, and it is cut to fit with an 8-hex hash of the full name, so two
names never share a wire name. Map a called wire name back with :func:`wire_names`.

This module sits below both the formats (which rename on the way out) and the name
resolver (which maps names back on the way in), so the two can never disagree.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

__all__ = ["WIRE_FORMATS", "wire_name", "wire_names"]

_RULES: dict[str, tuple[re.Pattern[str], re.Pattern[str], int]] = {
    # format: (valid name, disallowed character, max length)
    "openai": (re.compile(r"[A-Za-z0-9_-]{1,64}"), re.compile(r"[^A-Za-z0-9_-]"), 64),
    "anthropic": (re.compile(r"[A-Za-z0-9_-]{1,64}"), re.compile(r"[^A-Za-z0-9_-]"), 64),
    "gemini": (re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}"), re.compile(r"[^A-Za-z0-9_.:-]"), 64),
}
_RULES["openai-responses"] = _RULES["openai"]

WIRE_FORMATS: tuple[str, ...] = tuple(_RULES)
"""Formats whose tool names may differ from catalog names."""


def wire_name(name: str, format: str) -> str:
    """``name`` as ``format`` may carry it (unchanged when already valid)."""
    rule = _RULES.get(format)
    if rule is None:
        return name
    valid, bad, limit = rule
    if valid.fullmatch(name):
        return name
    safe = bad.sub("_", name)
    if format == "gemini" and not re.match(r"[A-Za-z_]", safe):
        safe = "_" + safe
    digest = hashlib.sha1(name.encode()).hexdigest()[:8]
    return f"{safe[: limit - 9]}_{digest}"


def wire_names(names: Iterable[str], format: str) -> dict[str, str]:
    """``{wire name: name}`` for the names that change in ``format`` (to route calls back)."""
    out = {}
    for name in names:
        wire = wire_name(name, format)
        if wire != name:
            out[wire] = name
    return out
