"""Tool names each API accepts, and a deterministic "wire name" for the others.

OpenAI and Anthropic accept ``[A-Za-z0-9_-]{1,64}``; Gemini also ``.`` and ``:``, starting
with a letter or ``_``. Real catalogs break this (a fifth of the evaluation tools have
names over 64 characters), and one bad name makes the provider reject the whole request.
A name that fits is sent unchanged; one that does not is sent as its wire name: bad
characters become ``_``, and it is cut to fit with an 8-hex hash of the full name, so two
names never share a wire name. Map a called wire name back with :func:`wire_names`.

Parameter names follow the same rule where a format documents one: Gemini's function
declarations accept ``[A-Za-z_][A-Za-z0-9_]{0,63}`` (so ``X-Request-Id`` is sent as
``X_Request_Id_<hash>``). :func:`param_names` renames one object's properties together, so
the names it gives never collide with each other; the Gemini format renames on the way out
and ``formats.gemini_arguments`` maps a call's arguments back.

This module sits below both the formats (which rename on the way out) and the name
resolver (which maps names back on the way in), so the two can never disagree.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

__all__ = ["PARAM_FORMATS", "WIRE_FORMATS", "param_names", "wire_name", "wire_names"]

_RULES: dict[str, tuple[re.Pattern[str], re.Pattern[str], int]] = {
    # format: (valid name, disallowed character, max length)
    "openai": (re.compile(r"[A-Za-z0-9_-]{1,64}"), re.compile(r"[^A-Za-z0-9_-]"), 64),
    "anthropic": (re.compile(r"[A-Za-z0-9_-]{1,64}"), re.compile(r"[^A-Za-z0-9_-]"), 64),
    "gemini": (re.compile(r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}"), re.compile(r"[^A-Za-z0-9_.:-]"), 64),
}
_RULES["openai-responses"] = _RULES["openai"]

WIRE_FORMATS: tuple[str, ...] = tuple(_RULES)
"""Formats whose tool names may differ from catalog names."""

_PARAM_RULES: dict[str, tuple[re.Pattern[str], re.Pattern[str], int]] = {
    "gemini": (re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}"), re.compile(r"[^A-Za-z0-9_]"), 64),
}

PARAM_FORMATS: tuple[str, ...] = tuple(_PARAM_RULES)
"""Formats whose parameter names may differ from the schema's property names."""


def _shorten(name: str, bad: re.Pattern[str], limit: int, digest: str) -> str:
    safe = bad.sub("_", name)
    if not re.match(r"[A-Za-z_]", safe):
        safe = "_" + safe
    return f"{safe[: limit - len(digest) - 1]}_{digest}"


def wire_name(name: str, format: str) -> str:
    """``name`` as ``format`` may carry it (unchanged when already valid)."""
    rule = _RULES.get(format)
    if rule is None:
        return name
    valid, bad, limit = rule
    if valid.fullmatch(name):
        return name
    if format != "gemini":  # only Gemini needs a leading letter or underscore
        safe = bad.sub("_", name)
        return f"{safe[: limit - 9]}_{hashlib.sha1(name.encode()).hexdigest()[:8]}"
    return _shorten(name, bad, limit, hashlib.sha1(name.encode()).hexdigest()[:8])


def wire_names(names: Iterable[str], format: str) -> dict[str, str]:
    """``{wire name: name}`` for the names that change in ``format`` (to route calls back)."""
    out = {}
    for name in names:
        wire = wire_name(name, format)
        if wire != name:
            out[wire] = name
    return out


def param_names(names: Iterable[str], format: str) -> dict[str, str]:
    """``{property name: name as sent}`` for the properties of one object schema.

    Valid names are kept; the others become their sanitised form plus a hash. A result
    that would clash with a sibling's name takes a longer hash, so the map is always
    one-to-one. It depends only on the set of names, so whoever maps arguments back
    rebuilds the same map from the same schema.
    """
    names = list(dict.fromkeys(names))
    rule = _PARAM_RULES.get(format)
    if rule is None:
        return {n: n for n in names}
    valid, bad, limit = rule
    out = {n: n for n in names if valid.fullmatch(n)}
    taken = set(out)
    for name in sorted(n for n in names if n not in out):
        full = hashlib.sha1(name.encode()).hexdigest()
        candidate = _shorten(name, bad, limit, full[:8])
        extra = 0
        while candidate in taken:
            extra += 1
            tail = full[: 8 + 4 * extra] if 8 + 4 * extra <= len(full) else f"{full[:8]}{extra}"
            candidate = _shorten(name, bad, limit, tail)
        out[name] = candidate
        taken.add(candidate)
    return {n: out[n] for n in names}
