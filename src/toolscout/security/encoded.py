"""Encoded blobs (base64, hex, ``\\xNN``/``%NN`` escapes) that decode to readable text.

Tool descriptions legitimately carry ids, hashes, keys in examples and data URIs; those
decode to bytes, not prose, so only a blob whose decoding reads as words is reported. The
caller then scans the decoded text with the phrase rules.
"""

from __future__ import annotations

import base64
import binascii
import gzip
import html
import re
import zlib
from collections.abc import Iterable, Iterator
from urllib.parse import unquote

__all__ = ["ESCAPED", "decoded_texts", "joined_blobs", "looks_instructive"]

ESCAPED = "escaped text: "
"""Prefix of the ``blob`` of a text decoded from sparse escapes (``%20``, ``&#95;``,
``\\u0041``): ordinary in URLs and HTML, so only reported when the decoded text is flagged."""

_MAX_INFLATED = 65536  # a gzip bomb in a description inflates no further than this
_DEPTH = 3  # base64 of gzip of base64...: decoded text is decoded again, this many times
_PERCENT = re.compile(r"%[0-9A-Fa-f]{2}")
_UESCAPE = re.compile(r"\\u([0-9A-Fa-f]{4})|\\x([0-9A-Fa-f]{2})|\\U([0-9A-Fa-f]{8})")
_ENTITY = re.compile(r"&#(?:x[0-9A-Fa-f]+|\d+);")
_FRAGMENT = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/]{12,}={0,2}(?![A-Za-z0-9+/=])")

_B64 = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{32,}={0,2}")
_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){16,}(?![0-9A-Fa-f])")
_ESCAPED = re.compile(r"(?:\\x[0-9A-Fa-f]{2}){8,}|(?:%[0-9A-Fa-f]{2}){8,}|(?:\\u00[0-9A-Fa-f]{2}){8,}")
_HEXDIGITS = re.compile(r"[0-9A-Fa-f]{2}")
_SPACED_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}[ :]){12,}[0-9A-Fa-f]{2}(?![0-9A-Fa-f])")
_B32 = re.compile(r"(?<![A-Z2-7=])[A-Z2-7]{32,}={0,6}")
_ROT13 = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm"
)
_ROT13_WORDS = frozenset(  # "the and to of you is it ignore all previous instructions user send read do not tell"
    ("gur", "naq", "gb", "bs", "lbh", "vf", "vg", "vtaber", "nyy", "cerivbhf", "vafgehpgvbaf", "hfre", "fraq",
     "ernq", "qb", "abg", "gryy")
)
_MARKERS = re.compile(
    r"\b(?:you|your|must|always|never|should|assistant|model|user|ignore|instructions?|"
    r"send|call|tool|recommend|read|include|do\s+not|don't)\b",
    re.I,
)


def _readable(data: bytes) -> str | None:
    """The bytes as text if they read as words: valid UTF-8, printable, several words."""
    if len(data) < 12:
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(ch.isprintable() or ch in "\n\t" for ch in text)
    if printable < 0.97 * len(text):
        return None
    words = text.split()
    if len(words) < 3:
        return None
    letters = sum(ch.isalpha() for ch in text)
    if letters < 0.5 * (len(text) - text.count(" ")):
        return None
    return text


def _inflate(data: bytes) -> bytes:
    """gzip or zlib data inflated (bounded), else ``data`` as it was."""
    try:
        if data[:2] == b"\x1f\x8b":
            return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, _MAX_INFLATED)
        if len(data) > 2 and data[0] == 0x78 and (data[0] * 256 + data[1]) % 31 == 0:
            return zlib.decompressobj().decompress(data, _MAX_INFLATED)
    except (zlib.error, EOFError, gzip.BadGzipFile):
        return data
    return data


def _b64(blob: str) -> bytes | None:
    body = blob.rstrip("=")
    urlsafe = "-" in body or "_" in body
    if urlsafe and ("+" in body or "/" in body):
        return None
    padded = body + "=" * (-len(body) % 4)
    try:
        if urlsafe:
            return _inflate(base64.urlsafe_b64decode(padded))
        return _inflate(base64.b64decode(padded, validate=True))
    except (binascii.Error, ValueError):
        return None


def decoded_texts(text: str, depth: int = _DEPTH) -> Iterator[tuple[str, str]]:
    """``(blob, decoded text)`` for every blob in ``text`` that decodes to words (base64,
    possibly gzip- or zlib-compressed, base32, hex, ``%NN``/``\\uXXXX``/``&#NN;`` escapes
    however sparse), and the whole text un-rotated when it reads as ROT13. Decoded text is
    decoded again (nested encodings), up to three levels."""
    for blob, decoded in _decoded_once(text):
        yield blob, decoded
        if depth > 1 and decoded != text:
            for inner_blob, inner in decoded_texts(decoded, depth - 1):
                yield (blob if not inner_blob.startswith(ESCAPED) else ESCAPED + blob), inner


def joined_blobs(texts: Iterable[str]) -> Iterator[tuple[str, str]]:
    """A blob split over several fields (half in the description, half in a parameter's):
    the base64-looking fragments of all ``texts``, in order, joined and decoded."""
    fragments = [
        f for text in texts if len(text) >= 12 for f in _FRAGMENT.findall(text)
        if not f.isalpha() or not (f.islower() or f.isupper() or f.istitle())
    ]
    if len(fragments) < 2:
        return
    for i in range(len(fragments) - 1):
        for j in range(i + 2, min(len(fragments), i + 6) + 1):
            blob = "".join(fragments[i:j])
            data = _b64(blob)
            decoded = _readable(data) if data else None
            if decoded:
                yield blob, decoded
                return


def _decoded_once(text: str) -> Iterator[tuple[str, str]]:
    if text.count("%") >= 3 and len(_PERCENT.findall(text)) >= 3:
        decoded = unquote(text)
        if decoded != text and _readable(decoded.encode("utf-8", "replace")):
            yield ESCAPED + text[:24], decoded
    if "\\" in text and _UESCAPE.search(text):
        decoded = _UESCAPE.sub(lambda m: _chr(m[1] or m[2] or m[3]), text)
        if decoded != text and len(_UESCAPE.findall(text)) >= 3:
            yield ESCAPED + text[:24], decoded
    if "&#" in text and len(_ENTITY.findall(text)) >= 3:
        yield ESCAPED + text[:24], html.unescape(text)
    yield from _rot13(text)
    spaced = " 6" in text and " 7" in text and _SPACED_HEX.search(text) is not None  # hex of ASCII letters
    if len(text) < 32 or (max(map(len, text.split()), default=0) < 32 and not spaced):
        return  # every blob is one long "word"; most texts have none
    for m in _B64.finditer(text):
        blob = m[0]
        if blob.isalpha() and (blob.islower() or blob.isupper()):
            continue  # one long word or constant, not base64
        data = _b64(blob)
        decoded = _readable(data) if data else None
        if decoded:
            yield blob, decoded
        elif data and len(data) >= 32 and _B64.fullmatch(data.decode("ascii", "replace")):
            inner = _b64(data.decode("ascii"))  # base64 of base64
            decoded = _readable(inner) if inner else None
            if decoded:
                yield blob, decoded
    for m in _HEX.finditer(text):
        decoded = _readable(bytes.fromhex(m[0]))
        if decoded:
            yield m[0], decoded
    for m in _SPACED_HEX.finditer(text):
        decoded = _readable(bytes.fromhex(m[0].replace(":", " ")))
        if decoded:
            yield m[0], decoded
    for m in _B32.finditer(text):
        if len(m[0].rstrip("=")) % 8 in (1, 3, 6):
            continue  # not a length base32 produces
        try:
            data = base64.b32decode(m[0] + "=" * (-len(m[0]) % 8))
        except (binascii.Error, ValueError):
            continue
        decoded = _readable(data)
        if decoded:
            yield m[0], decoded
    for m in _ESCAPED.finditer(text):
        decoded = _readable(bytes(int(h, 16) for h in _HEXDIGITS.findall(m[0].replace("\\u00", "\\x"))))
        if decoded:
            yield m[0], decoded


def _chr(code: str) -> str:
    try:
        return chr(int(code, 16))
    except (ValueError, OverflowError):
        return ""


def _rot13(text: str) -> Iterator[tuple[str, str]]:
    """ROT13 keeps word shapes, so it shows as common English words rotated ("gur", "naq")."""
    low = text.lower()
    if " gur " not in low and " naq " not in low and " lbh " not in low and " nyy " not in low:
        return
    words = {w.strip(".,;:!?'\"").lower() for w in text.split()}
    if len(words & _ROT13_WORDS) >= 2:
        yield text[:24], text.translate(_ROT13)


def looks_instructive(text: str) -> bool:
    """Prose that talks to someone (imperatives, modals, "you", "the user")."""
    return _MARKERS.search(text) is not None
