"""Is a request (or a catalog) English? A cheap guess, for routing and for hints.

Cross-lingual search needs to know one thing: does this text look like English, or clearly
like another language? Non-Latin scripts (CJK, kana, Hangul, Cyrillic, Arabic, ...) decide at
once; Latin-script text is judged by its function words and letters (``¿``, ``ß``, ``ñ``,
``ç``...). A text with no telling word (``"Wetter Berlin"``) counts as English: the cost of a
wrong "English" is the English model's ranking, which is what toolscout did before.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

__all__ = ["catalog_is_english", "looks_english"]

_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_ENGLISH = _words(
    """a an the and or of to in on at for from with by about into over under is are was were be
    been being am do does did have has had can could will would should shall may might must i you
    he she it we they me my your his her its our their this that these those what which who whom
    whose when where why how not no all any some please show find get give tell make list send
    there here than then if so just also as up out"""
)

# Function words of other Latin-script languages; none is also a common English word
# ("die", "son", "pour", "van", "met", "come" are left out on purpose).
_FOREIGN = _words(
    """el la los las un una unos unas del al que qué y o pero por para con sobre entre es
    está están hay mi mis tu tus su sus este esta estos estas ese esa muy más cómo cuál
    cuánto cuántos cuántas dónde quién cuando porque puedes puede quiero necesito busco dame
    muéstrame
    der das dem den des ein eine einen einem einer und oder aber nicht mit für von zu im ist
    sind wie wo wer warum welche welcher welches mein meine dein deine sein ihr ihre unser
    kannst kann ich du wir sie bitte mir mich dich uns zeig gib auf aus bei nach vom zum zur
    ich habe hast gibt noch schon
    le les une des du au aux et ou mais avec sans dans sur est sont ce cette ces mon ma
    mes ta tes notre votre leur quel quelle quels quelles combien comment où qui quoi
    pourquoi peux peut je tu nous vous il elle ils elles moi toi faire fais donne montre
    il lo gli della delle dei degli che non sono questo questa perché puoi voglio
    o os as um uma dos das do da no na nos nas em é são você não como onde porque quero
    het een en de te dat niet zijn voor wat waar ik jij wij"""
) - _ENGLISH

_SHARED = _words("a am an in so no also")
"""English words that are as common in German, Spanish, ...: they tell nothing."""

_MARKS = frozenset("¿¡ñßäöüàâçèéêëîïôœùûÿáíóúãõ")

_OTHER_SCRIPTS = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL", "CYRILLIC", "ARABIC", "HEBREW", "GREEK", "THAI", "DEVANAGARI")


def _other_script_share(text: str) -> float:
    """Share of the letters from a non-Latin script. An ASCII letter is Latin, so only the
    others are looked up (the lookup per letter cost ~0.4 ms on a typical English request,
    more than its whole keyword search)."""
    if text.isascii():
        return 0.0
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return 0.0
    other = sum(1 for c in letters if not c.isascii() and unicodedata.name(c, "").startswith(_OTHER_SCRIPTS))
    return other / len(letters)


def looks_english(text: str) -> bool:
    """False when ``text`` is clearly in another language; True otherwise (also when it
    cannot tell, e.g. a bare keyword or a tool name)."""
    if _other_script_share(text) >= 0.3:
        return False
    words = [w.lower() for w in _WORD.findall(text)]
    english = sum(w in _ENGLISH and w not in _SHARED for w in words)
    foreign = sum(w in _FOREIGN for w in words) + (1 if _MARKS & set(text.lower()) else 0)
    return not (foreign >= 1 and foreign > english)


def catalog_is_english(texts: Sequence[str], sample: int = 200) -> bool:
    """True when most of (an even sample of) the tools' descriptions look English."""
    picked = [t for t in texts[:: max(1, len(texts) // sample)] if t.strip()][:sample]
    if not picked:
        return True
    return sum(looks_english(t) for t in picked) >= 0.7 * len(picked)
