"""A request's sub-intents: the separate things it asks tools to do, found without a model.

Why: a request such as "turn last week's GitHub issues into a slide deck and email it to the
team" needs several tools, and one list scored against the whole text gives every slot to
its largest part (the e-mail tool never makes the top 10). Ranking each part on its own and
covering every part first (:mod:`~toolscout.search.sets`) needs the parts; this module cuts
a request into them from its surface alone, in every language the analyzer handles
(English, Spanish, German, French, Italian, Portuguese, Dutch; Chinese, Japanese, Korean):

* sentences and semicolons ("Find the invoice. Then email it."), when a later one opens a
  step (an imperative verb, "also", "finally" ...): "I need to classify plants. Which
  model should I use?" asks once, in two sentences;
* sequence words, which always start a new step ("then", "after that", "finally",
  "additionally", "luego", "dann", "puis", "poi", "depois", "daarna", "然后", "接着",
  "그리고", "それから" ...);
* a conjunction or a comma followed by a verb ("... and email it", ", export it to PDF"),
  and only then: "black and white photos", "Tom and Jerry" are one thing;
* "turn/convert X into Y": reading X and making Y are two steps;
* a verb with its object right after a content word, without a conjunction ("find cheap
  flights book a hotel"): "to book a", "me book a", "the book a" stay one step;
* a sentence that asks in other words ("I'm also interested in ...", "we would also like
  ..."), and sentences before one that opens with "First," are a heading, not a step.

A request with one intent comes back as itself (a list of one), untouched: the single-intent
path of search stays exactly what it was. Pieces with fewer than two content words ("and then", "can you
assist") and pieces that ask for nothing ("A teacher wants to make a quiz.", "I'm a
filmmaker": context, no request) are not steps: they are dropped, and at most :data:`MAX_INTENTS` are kept (the last ones merged), so a long
request costs a bounded number of sub-searches.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import pairwise

from .analyzer import STOP_WORDS, words

__all__ = ["MAX_INTENTS", "SubIntent", "split_intents"]

MAX_INTENTS = 6
"""Sub-searches one request may cost (a request naming more steps keeps its last ones together)."""

# Imperative verbs that begin a step after "and" or a comma, per language. A closed list on
# purpose: without a part-of-speech model, "and <verb>" is what tells "search issues and
# email them" (two steps) from "black and white photos" (one thing).
_VERBS_EN = """add alert analyse analyze append archive ask assign attach book build calculate call cancel
    chart check clean clone close commit compare compile compress convert copy count create crop
    deploy delete describe detect download draft draw edit email e-mail encrypt estimate
    evaluate export extract fetch file filter find fix forward generate get give graph import
    inform install invite join label launch list load locate log look make map merge message
    migrate monitor move notify open order parse pay ping plot post predict prepare print publish
    pull push put query read record reply remind remove rename render reply report request reserve
    resize restart restore retrieve return review revert roll run save scan schedule search send set
    share show sign sort speak start stop store submit summarise summarize sync tag tell test text
    track transcribe transfer translate trigger turn tweet update upload validate verify view visualize
    visualise watch write zip provide recommend suggest identify lookup obtain fetch display
    refund approve reject backup subscribe unsubscribe buy purchase sell compute measure classify
    recognize recognise geocode navigate"""
_VERBS_OTHER = """
    busca buscar crea crear envía envia enviar manda mandar guarda guardar descarga descargar sube
    subir traduce traducir muestra mostrar obtén obtener lee leer escribe escribir borra borrar
    elimina eliminar genera generar convierte convertir calcula calcular programa reserva publica
    suche such sende schicke erstelle erstell speichere lade lies schreibe lösche übersetze zeige
    zeig hole berechne generiere konvertiere plane buche veröffentliche teile
    cherche envoie crée crée enregistre télécharge lis écris supprime traduis montre affiche obtiens
    calcule génère convertis planifie réserve publie partage
    cerca invia manda crea salva scarica leggi scrivi elimina traduci mostra ottieni calcola genera
    converti pianifica prenota pubblica condividi
    procura envie cria salve baixe leia escreva apague exclua traduza mostre obtenha calcule gere
    converta agende reserve publique compartilhe
    zoek stuur maak bewaar download lees schrijf verwijder vertaal toon bereken genereer plan boek
    deel"""
_VERBS = frozenset(w.lower() for w in (_VERBS_EN + _VERBS_OTHER).split())

_AND = r"(?:and|&|plus|y|e|und|et|en|och|og)"
_AND_WORDS = frozenset(("and", "&", "plus", "y", "e", "und", "et", "en", "och", "og"))
_BRIDGE = frozenset(("then", "also", "please"))  # "and also send ...": the verb comes next
# Words that start a new step wherever they stand ("..., then email it", "und dann ...").
_SEQUENCE = (
    r"(?:and\s+then|then|after\s+that|afterwards|finally|lastly"
    r"|y\s+luego|luego|y\s+después|und\s+dann|dann|danach|anschließend"
    r"|et\s+puis|puis|ensuite|e\s+poi|poi|infine|e\s+depois|depois|em\s+seguida|en\s+daarna|daarna)"
)
_SEQ_WORDS = frozenset((
    "then", "after", "afterwards", "finally", "lastly", "luego", "después", "dann", "danach", "anschließend",
    "puis", "ensuite", "poi", "infine", "depois", "seguida", "daarna",
))
# A step boundary inside a sentence: ", then", "and then", "; ", ", and <verb>", " and <verb>".
_SEQ_SPLIT = re.compile(rf"(?:\s*,\s*|\s+)(?i:{_SEQUENCE})\b[\s,]*")
_AND_SPLIT = re.compile(rf"\s*,\s*(?:(?i:{_AND})\s+)?|\s+(?i:{_AND})\s+")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|;\s*|[。！？；\n]+\s*")
_CJK_SEQ = re.compile(r"(?:然后|接着|之后|并且|以及|同时|そして|それから|その後|次に|그리고|그다음|그 다음)")
# Anything some splitting rule needs (a mark, a joining or sequence word, a non-ASCII
# character, a "turn X into Y" verb): a request holding none is one step.
_GATE_MARKS = ",;.!?&\n"
_GATE_WORDS = frozenset((
    "and", "plus", "y", "e", "und", "et", "en", "och", "og", "then", "after", "afterwards", "finally", "lastly",
    "luego", "dann", "danach", "puis", "ensuite", "poi", "infine", "depois", "seguida", "daarna",
    "turn", "convert", "transform", "make", "export",
))


def _may_split(text: str) -> bool:
    """Whether any splitting rule could apply (a set of words and a few substring tests)."""
    if not text.isascii():
        return True
    body = text.rstrip(" .!?")
    if any(c in body for c in _GATE_MARKS):
        return True
    words = body.lower().split()
    return not _GATE_WORDS.isdisjoint(words) or _verb_run(words) > 0


_FIRST = re.compile(r"(?i:first(?:ly)?|to\s+(?:start|begin)(?:\s+with)?)\b")
_INTO_VERBS = ("turn ", "convert ", "transform ", "make ", "export ")
_INTO = re.compile(r"^(?P<verb>(?i:turn|convert|transform|make|export))\s+(?P<src>.+?)\s+(?i:into|to\s+an?|as\s+an?)\s+(?P<dst>.+)$")
_ALSO = re.compile(r"\b(?i:also|as well|too|additionally|además|auch|aussi|anche|também|ook)\b")
_GIVE_ME = re.compile(r"^(?i:provide|give|show|recommend|suggest|offer)\s+(?i:me|us)\b")
_CONTENT = 2  # content words (filler aside) a piece needs to be an intent of its own
_LEAD_FILLER = re.compile(
    r"^(?:(?i:and|or|but|so|please|also|then|first|firstly|second|secondly|third|thirdly|next|finally|lastly|additionally"
    r"|after\s+that|afterwards?|in\s+addition|moreover|furthermore|besides|außerdem|además"
    r"|de plus|inoltre|além disso|bovendien|luego|después|dann|danach|anschließend|zweitens|ensuite|puis|poi|dopo|depois|daarna)[\s,]+)+"
)
# A piece is a step when it asks for something: it starts with a verb (imperative), with a
# request phrase, or is a question. A sentence that describes ("A teacher wants to make a
# quiz.", "I'm a filmmaker") is context: it stays in the whole request only.
_REQUEST = re.compile(
    r"^(?i:(?:can|could|would|will)\s+(?:you|i|we|u)|please|i\s+(?:need|want|wish|would\s+like|'d\s+like|must|have\s+to)"
    r"|i'?d\s+like|we\s+(?:need|want|would\s+like|'d\s+like|must)|help\s+me|let\s+me\s+know|is\s+it\s+possible"
    r"|i'?m\s+(?:looking|searching|trying)|i\s+am\s+(?:looking|searching|trying)|show\s+me|tell\s+me|give\s+me"
    r"|how\s+(?:do|can|could|should)\s+(?:i|we)|what|which|where|when|who|how|is\s+there|are\s+there"
    r"|it\s+would\s+be\s+(?:great|helpful|nice|useful)|i\s+(?:also\s+)?(?:need|want)"
    r"|(?:i'?m|i\s+am|we'?re|we\s+are)\s+(?:also\s+)?(?:interested|curious)|(?:i|we)\s+(?:would|'d)\s+also\s+like|i'?d\s+also\s+like"
    r"|(?:i|we)\s+(?:also\s+)?(?:require|wish)"
    r"|puedes|podrías|podrias|quiero|necesito|kannst\s+du|können\s+sie|könntest|ich\s+(?:möchte|brauche|will)|bitte"
    r"|peux-tu|pouvez-vous|je\s+(?:veux|voudrais)|puoi|potresti|vorrei|voglio|você\s+pode|quero|preciso"
    r"|kun\s+je|kunt\s+u|ik\s+wil)\b"
)


def _is_request(piece: str) -> bool:
    if piece.endswith("?") or _starts_with_verb(piece) or _REQUEST.match(piece):
        return True
    return bool(piece) and _is_cjk(piece[0])


def _is_cjk(char: str) -> bool:
    return "\u3040" <= char <= "\u9fff" or "\uac00" <= char <= "\ud7af"


@dataclass(frozen=True, slots=True)
class SubIntent:
    """One thing a request asks for: its text as written (fillers at its ends trimmed)."""

    text: str
    index: int
    """Its position among the request's sub-intents (0 first)."""


def _content(text: str) -> int:
    """Content words of ``text`` ("can you assist": 1); a CJK run counts a word per two
    characters. The analyzer's words and stop words (one tokenisation for splitting and
    matching), counted without stemming: this runs on every multi-sentence request."""
    n = 0
    for token in words(text.lower()):
        if _is_cjk(token[0]):
            n += max(1, len(token) // 2)
        elif token not in STOP_WORDS:
            n += 1
    return n


def _enough(piece: str) -> bool:
    """Whether ``piece`` says enough to be a step: two content words, or a verb and its
    object ("email them", "print it"); "and then", "can you assist" do not."""
    if _vague(piece):
        return False
    n = _content(piece)
    return n >= _CONTENT or (n == 1 and len(piece.split()) > 1 and _starts_with_verb(piece))


# Words a request uses to ask, not to say what for: a piece made of these alone ("Can you
# provide me with the list?", "Can you assist me with these tasks?") points back at the
# other pieces; searched alone it finds a tool for "list" or "information".
_ASKING_WORDS = """provide give get fetch retrieve obtain show tell let know find help assist need want like also
    please list lists information info details detail data api apis call calls task tasks result results
    thing things everything anything something way ways"""
_ASKING = frozenset(_ASKING_WORDS.split())


def _vague(piece: str) -> bool:
    """Whether every content word of ``piece`` is an asking word (:data:`_ASKING`)."""
    seen = False
    for token in words(piece.lower()):
        if token in STOP_WORDS or token.isdigit():
            continue
        if _is_cjk(token[0]) or token not in _ASKING:
            return False
        seen = True
    return seen


def _starts_with_verb(piece: str) -> bool:
    words = piece.split(None, 2)
    if not words:
        return False
    first = words[0].lower().strip(",.")
    if first in ("then", "also", "please") and len(words) > 1:
        first = words[1].lower().strip(",.")
    return first in _VERBS


def _split_and(sentence: str) -> list[str]:
    """``sentence`` cut at each "and"/comma that a verb follows (the rest stays joined)."""
    out: list[str] = []
    last = 0
    for m in _AND_SPLIT.finditer(sentence):
        if _starts_with_verb(sentence[m.end():]) and sentence[last : m.start()].strip():
            out.append(sentence[last : m.start()])
            last = m.end()
    out.append(sentence[last:])
    return out


# Words that open a verb's object: "book *a* hotel", "email *them*". A verb followed by one,
# right after a content word, starts a new step even without "and" or a comma ("find cheap
# flights book a hotel"); after a function word ("to book a", "me book a") it does not.
_OBJECT = frozenset(["the", "a", "an", "my", "our", "your", "his", "her", "their", "some", "it", "them", "me", "us", "this", "that", "these", "those", "all", "any"])


def _verb_run(words: list[str]) -> int:
    """The position of the first word that starts a step by itself (a verb with an object,
    after a content word, two words or more into the request), else 0."""
    for i in range(2, len(words) - 1):
        if words[i] in _VERBS and words[i + 1] in _OBJECT:
            before = words[i - 1].strip(",.;:!?'\"")
            if before and before not in STOP_WORDS and before not in _VERBS and before not in _AND_WORDS and before not in _BRIDGE:
                return i
    return 0


def _split_verbs(clause: str) -> list[str]:
    """``clause`` cut before each verb that starts a step without a conjunction."""
    words = clause.split()
    out: list[str] = []
    while True:
        at = _verb_run([w.lower() for w in words])
        if not at:
            break
        out.append(" ".join(words[:at]))
        words = words[at:]
    return [*out, " ".join(words)]


def _split_into(piece: str) -> list[str]:
    """"turn X into Y" -> ["turn X", "Y"] (reading X and making Y are separate tools)."""
    m = _INTO.match(piece)
    if m is None or _content(m.group("src")) < 1 or _content(m.group("dst")) < 1:
        return [piece]
    return [f"{m.group('verb')} {m.group('src')}", f"create {m.group('dst')}"]


def _pieces(query: str) -> list[tuple[str, bool]]:
    """The request's pieces, each with whether a step marker starts it (module docstring).
    Each splitting pattern runs only when the words it needs occur (substring tests first):
    most requests hold none, and a single-intent request must cost next to nothing."""
    low = query.lower()
    seq = any(word in low for word in _SEQ_WORDS) and not _SEQ_WORDS.isdisjoint(w.strip(",.;:!?") for w in low.split())
    joined = ("," in low or " and " in low or any(f" {w} " in low for w in _AND_WORDS)) and _verb_after_and(low.split())
    inner = query.rstrip(" .!?;。！？；")
    several = any(c in inner for c in ".!?;。！？；\n")
    cjk = not query.isascii() and _CJK_SEQ.search(query) is not None
    into = low.startswith(_INTO_VERBS) and _INTO.match(query) is not None
    run = query.isascii() and _verb_run(low.split()) > 0
    if not (seq or joined or several or cjk or into or run):
        return [(query, False)]  # no boundary of any kind: the common case, a few substring tests
    pieces: list[tuple[str, bool]] = []
    sentences = _SENTENCE.split(query) if several else [query]
    opening = next((n for n, t in enumerate(sentences) if n and _FIRST.match(t)), 0)
    sentences = sentences[opening:]  # "I need help with a few things. First, ...": the steps follow
    for n, sentence in enumerate(sentences):
        for i, step in enumerate(_SEQ_SPLIT.split(sentence) if seq else (sentence,)):
            for j, part in enumerate(_CJK_SEQ.split(step) if cjk else (step,)):
                clauses = [c for a in (_split_and(part) if joined else (part,)) for c in (_split_verbs(a) if run else (a,))]
                for k, clause in enumerate(clauses):
                    for m, piece in enumerate(_split_into(clause.strip())):
                        marked = bool(i or j or k or m) or (n > 0 and _opens_a_step(piece))
                        pieces.append((piece, marked))
    return pieces


def _verb_after_and(words: list[str]) -> bool:
    """Whether some "and"/comma is followed by a verb (else no clause split can happen)."""
    for a, b in pairwise(words):
        if (a.endswith(",") or a in _AND_WORDS) and (b.strip(",.;:!?") in _VERBS or b in _AND_WORDS or b in _BRIDGE):
            return True
    return False


def _opens_a_step(sentence: str) -> bool:
    """Whether a sentence after the first starts a new step: it opens with an imperative
    verb or a word that adds one ("Also, ...", "Finally ...", "Can you also ..."). A
    sentence that asks again in other words ("I need to classify plants. Which model should
    I use?") restates the same need."""
    if _LEAD_FILLER.match(sentence):
        return True
    if _GIVE_ME.match(sentence):  # "Provide me with an API ...": asks for the tool again
        return False
    if _starts_with_verb(sentence.strip(" ,")):
        return True
    return bool(_ALSO.search(" ".join(sentence.split()[:5])))


def _trim(piece: str) -> str:
    return _LEAD_FILLER.sub("", piece.strip(" ,.;:!?。，、；！？")).strip()


def _trim_lead(piece: str) -> str:
    """``piece`` without leading fillers, its closing question mark kept (it marks a request)."""
    return _LEAD_FILLER.sub("", piece.strip(" ,.;:!。，、；！")).strip()


def split_intents(query: str, max_intents: int = MAX_INTENTS) -> list[SubIntent]:
    """``query``'s sub-intents in order; ``[SubIntent(query, 0)]`` when it asks for one thing."""
    text = " ".join(query.split())
    whole = [SubIntent(text, 0)]
    if len(text) < 12:  # "a and b" at most: one thing
        return whole
    if not _may_split(text):  # no boundary word or mark at all: the common short request
        return whole
    pieces = _pieces(text)
    if len(pieces) < 2 or not any(marked for _, marked in pieces[1:]):  # the common case: one step
        return whole
    found: list[tuple[str, bool]] = []
    carried = False  # "Additionally, I'm researching X. Can you ...?": the context's mark goes to the question
    for p, marked in pieces:
        if (t := _trim(p)) and _is_request(_trim_lead(p)) and _enough(t):
            found.append((t, marked or carried))
            carried = False
        else:
            carried = carried or marked
    kept = list(dict.fromkeys(t for t, _ in found))
    if len(kept) < 2 or not any(marked for _, marked in found[1:]):
        return whole
    if len(kept) > max_intents:
        kept = [*kept[: max_intents - 1], " ".join(kept[max_intents - 1 :])]
    return [SubIntent(p, i) for i, p in enumerate(kept)]
