"""Characters a person cannot see but a model reads: tags, bidi overrides, terminal escapes,
zero-width runs, and names spelled with look-alike letters from other scripts.

Also :func:`clean`, the text the phrase rules match against: invisible characters removed,
compatibility forms folded (NFKC) and look-alike letters inside mixed-script words mapped
to Latin, so ``ig\\u200bnore`` or a Cyrillic ``і`` does not slip past them.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from functools import lru_cache

__all__ = ["clean", "name_problems", "text_problems"]

_TAGS = re.compile("[\U000e0000-\U000e007f]+")
_VARIATION_RUN = re.compile("[\ufe00-\ufe0f\U000e0100-\U000e01ef]{4,}")
_BIDI_OVERRIDE = re.compile("[\u202d\u202e\u2066-\u2069]")  # reorder what follows
_BIDI_EMBED = re.compile("[\u202a-\u202c]")  # legitimate inside right-to-left text
_RTL_LETTERS = re.compile("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufefc]")
_CONTROL = re.compile("[\x08\x1b\x9b]")  # backspace, ESC, CSI: rewrite or hide terminal text
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[@-Z\\-_]|\x9b[0-9;?]*[A-Za-z]")
_ZERO_WIDTH = "\u200b\u200c\u200d\u2060\u2061\u2062\u2063\u2064\ufeff\u180e\u00ad\u034f\u115f\u1160\u3164\uffa0"
_ZW_RUN = re.compile(f"[{_ZERO_WIDTH}]+")
_INVISIBLE = re.compile(
    f"[{_ZERO_WIDTH}\u200e\u200f\u061c\u202a-\u202e\u2066-\u206f\ufe00-\ufe0f"
    "\U000e0000-\U000e007f\U000e0100-\U000e01ef]"
)
_WORD = re.compile(r"\w+")

# Letters of other scripts that render like Latin ones (the common confusables).
_LOOKALIKE = str.maketrans(
    "АВЕЅІЈКМНОРСТХУаеѕіјорсухԁԛԝһӏΑΒΕΖΗΙΚΜΝΟΡΤΥΧαεικνορτυχ",
    "ABESIJKMHOPCTXYaesijopcyxdqwhlABEZHIKMNOPTYXaeikvoptux",
)
_CONFUSABLE_SCRIPTS = frozenset({"CYRILLIC", "GREEK", "ARMENIAN", "CHEROKEE", "COPTIC"})


@lru_cache(maxsize=4096)
def _script(ch: str) -> str:
    """The script word of a letter's Unicode name (``LATIN``, ``CYRILLIC``...)."""
    try:
        return unicodedata.name(ch).split(" ", 1)[0]
    except ValueError:
        return ""


def _mixes_scripts(word: str) -> bool:
    """Latin letters together with letters of a script whose glyphs look Latin."""
    latin = other = False
    for ch in word:
        if ch.isascii():
            latin = latin or ch.isalpha()
        elif ch.isalpha():
            script = _script(ch)
            latin = latin or script == "LATIN"
            other = other or script in _CONFUSABLE_SCRIPTS
    return latin and other


def clean(text: str) -> str:
    """``text`` as the phrase rules should read it (see the module docstring)."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKC", _INVISIBLE.sub("", text))
    if text.isascii():
        return text
    return _WORD.sub(lambda m: m[0].translate(_LOOKALIKE) if _mixes_scripts(m[0]) else m[0], text)


def _decode_tags(run: str) -> str:
    return "".join(chr(ord(c) - 0xE0000) for c in run if 0xE0020 <= ord(c) <= 0xE007E)


def _visible(text: str, width: int = 60) -> str:
    """Invisible characters written as ``<U+200B>`` so evidence shows them."""
    out = []
    for ch in text[:width]:
        cat = unicodedata.category(ch)
        out.append(f"<U+{ord(ch):04X}>" if cat in ("Cf", "Cc") and ch not in "\n\t" else ch)
    return "".join(out)


def _around(text: str, start: int, end: int, width: int = 50) -> str:
    return _visible(text[max(0, start - 20) : end + width], 140)


def text_problems(text: str) -> Iterator[tuple[str, str]]:
    """``(code, evidence)`` for invisible or deceptive characters in free text."""
    if text.isascii():
        if "\x1b" in text or "\x08" in text:
            yield from _controls(text)
        return
    for m in _TAGS.finditer(text):
        hidden = _decode_tags(m[0])
        if m.start() > 0 and text[m.start() - 1] == "\U0001f3f4" and hidden.isalnum():
            continue  # a subdivision flag emoji (England, Scotland, Wales)
        yield "unicode_tags", f"hidden text: {hidden or _visible(m[0])}"
    for m in _VARIATION_RUN.finditer(text):
        yield "unicode_tags", f"{len(m[0])} variation selectors in a row (hidden data) near: {_around(text, m.start(), m.end())}"
    for m in _BIDI_OVERRIDE.finditer(text):
        yield "bidi_control", _around(text, m.start(), m.end())
        break
    else:
        if _BIDI_EMBED.search(text) and not _RTL_LETTERS.search(text):
            m = _BIDI_EMBED.search(text)
            assert m is not None
            yield "bidi_control", _around(text, m.start(), m.end())
    yield from _controls(text)
    yield from _zero_width(text)
    if not text.isascii():
        for m in _WORD.finditer(text):
            if not m[0].isascii() and _mixes_scripts(m[0]):
                yield "mixed_script", _visible(m[0])
                break


def _controls(text: str) -> Iterator[tuple[str, str]]:
    m = _ANSI.search(text) or _CONTROL.search(text)
    if m is not None:
        yield "control_characters", _around(text, m.start(), m.end())


def _zero_width(text: str) -> Iterator[tuple[str, str]]:
    """Zero-width characters in a run, or splitting an ASCII word (``ig\\u200bnore``).

    A lone one at a line's start (a copy-paste artefact) and joiners between emoji or
    inside Indic and Arabic words are normal text.
    """
    for m in _ZW_RUN.finditer(text):
        before = text[m.start() - 1] if m.start() else ""
        after = text[m.end()] if m.end() < len(text) else ""
        inside = before.isascii() and before.isalnum() and after.isascii() and after.isalnum()
        if len(m[0]) >= 2 or inside:
            yield "zero_width", _around(text, m.start(), m.end())
            return


def name_problems(name: str) -> str | None:
    """Why a tool or parameter name is deceptive, or ``None``: names are identifiers, so any
    invisible character, compatibility form or mixed-script spelling is a disguise."""
    if name.isascii():
        return None if not any(c in name for c in "\x08\x1b\x9b") else _visible(name)
    if _INVISIBLE.search(name) or any(unicodedata.category(c) in ("Cc", "Cf") for c in name):
        return f"invisible characters: {_visible(name)}"
    if unicodedata.normalize("NFKC", name) != name:
        return f"compatibility forms: {name} reads as {unicodedata.normalize('NFKC', name)}"
    if _mixes_scripts(name):
        others = sorted({f"{c} U+{ord(c):04X} {_script(c)}" for c in name if not c.isascii() and c.isalpha()})
        return f"{name} mixes scripts ({', '.join(others)[:80]})"
    return None
