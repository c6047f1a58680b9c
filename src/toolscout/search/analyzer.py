"""Text to index terms, kept apart from scoring (as bm25s does) so every backend and the
query side share exactly one tokenizer.

The pipeline is: NFKC-normalise, cut the text into letter/digit tokens (control
characters, punctuation and emoji separate tokens), split each token into runs of CJK
characters and runs of other letters/digits, then

* a letter/digit run is split as an identifier (``snake_case``, ``kebab-case``,
  ``camelCase``, ``HTTPServer``, ``v2Api``, dotted and slashed paths), lower-cased, stop
  words dropped, and each part stemmed (Snowball English via PyStemmer). A run that split
  into several parts also keeps its joined form (``getWeather`` -> ``get``, ``weather``,
  ``getweather``) so a query that writes the compound still meets it;
* a CJK run (Chinese, Japanese, Korean) has no spaces to split on, so it becomes its
  characters plus its character bigrams: a Chinese query matches a Chinese description
  without a dictionary, and mixed-script text works because each run is handled alone.

All functions are pure; results of the per-word work are memoised (a catalog repeats the
same few thousand words).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from itertools import chain

import Stemmer

__all__ = ["STOP_WORDS", "analyze", "clear_caches", "split_identifier", "stem", "words"]

# Common English function words. Kept short on purpose: domain words such as "get",
# "list" or "search" carry meaning for tools and are left to IDF to weigh.
_STOP_TEXT = """a about above after again against all am an and any are as at be because been before
    being below between both but by can could did do does doing down during each few for
    from further had has have having he her here hers herself him himself his how i if in
    into is it its itself just me more most my myself no nor not of off on once only or
    other our ours ourselves out over own same she should so some such than that the their
    theirs them themselves then there these they this those through to too under until up
    very was we were what when where which while who whom why will with would you your
    yours yourself yourselves let lets please also im ive want wants need needs"""
STOP_WORDS: frozenset[str] = frozenset(_STOP_TEXT.split())

_CJK = (
    "\u3040-\u30ff"  # hiragana, katakana
    "\u3400-\u4dbf"  # CJK extension A
    "\u4e00-\u9fff"  # CJK unified ideographs
    "\uf900-\ufaff"  # compatibility ideographs
    "\uac00-\ud7af"  # hangul syllables
    "\u31f0-\u31ff"  # katakana phonetic extensions
)
_RUNS = re.compile(rf"(?P<cjk>[{_CJK}]+)|(?P<word>[^\W_{_CJK}]+)")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_DIGITS = re.compile(r"\d+|[^\W\d_]+")
_STEMMER = Stemmer.Stemmer("english")


_TOKENS = re.compile(r"[^\W_]+")


def split_identifier(word: str) -> list[str]:
    """Split one letter/digit run on case and digit boundaries, lower-cased.

    ``HTTPServer`` -> ``["http", "server"]``, ``getV2Data`` -> ``["get", "v", "2", "data"]``.
    """
    # Case boundaries are only reliable in ASCII identifiers; other scripts split on digits.
    pattern = _CAMEL if word.isascii() else _DIGITS
    return [p.lower() for p in pattern.findall(word)] or [word.lower()]


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Snowball English stem of a lower-case word (memoised)."""
    return _STEMMER.stemWord(word)


@lru_cache(maxsize=200_000)
def _word_terms(run: str) -> tuple[str, ...]:
    parts = split_identifier(run)
    terms = [stem(p) for p in parts if p not in STOP_WORDS and (len(p) > 1 or p.isdigit())]
    if len(parts) > 1:
        joined = "".join(parts)
        if joined not in STOP_WORDS:
            terms.append(stem(joined))
    return tuple(terms)


def _cjk_terms(run: str) -> list[str]:
    return list(run) + [run[i : i + 2] for i in range(len(run) - 1)]


@lru_cache(maxsize=200_000)
def _token_terms(token: str) -> tuple[str, ...]:
    if token.isascii():
        return _word_terms(token)
    out: list[str] = []
    for m in _RUNS.finditer(token):
        cjk = m.group("cjk")
        out.extend(_cjk_terms(cjk) if cjk else _word_terms(m.group("word")))
    return tuple(out)


def clear_caches() -> None:
    """Empty the per-word memo tables (after a large build they hold its words)."""
    for cached in (stem, _word_terms, _token_terms):
        cached.cache_clear()


def words(text: str) -> list[str]:
    """The letter/digit runs of ``text`` the analyzer starts from (punctuation, ``_`` and
    spaces separate them), before splitting, stop words and stemming: what a request is cut
    into by :mod:`~toolscout.search.subintents`, so a split and a match see the same words."""
    return _TOKENS.findall(text)


def analyze(text: str) -> list[str]:
    """Index terms of ``text`` (identifiers, prose, any script). Never raises on odd input.

    Control and format characters are not word characters, so they split words like spaces.
    """
    if not text:
        return []
    if not text.isascii():
        text = unicodedata.normalize("NFKC", text)
    return list(chain.from_iterable(map(_token_terms, _TOKENS.findall(text))))
