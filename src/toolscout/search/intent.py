"""What a request asks a tool to do, apart from the values it carries.

A request to tell someone something carries the message inside it ("let my team know the
build is broken"): the message is an argument, not what the tool does, and its words
("build", "broken") pull keyword and dense search alike towards the wrong tools (a Docker
build, issue trackers). Such a request is matched as "send a message to <recipient>"
instead; "me"/"us" address the assistant ("tell me the weather"), not a message. Quoted
text is a value too ('post "deploy done" to #releases'). Leading politeness and question
words ("can you please help me") say nothing about the tool either.
"""

from __future__ import annotations

import re

__all__ = ["identifiers", "matching_text", "message_action", "strip_leading", "verb_variant"]

_LEADING = re.compile(
    r"^\s*(?:(?:hey|hi|ok|okay|so|um|please)[,!\s]+)*"
    r"(?:(?:can|could|would|will) (?:you|i|we)(?: please)?(?: help me(?: to)?)?"
    r"|(?:please )?help me(?: to)?|i(?:'d| would) like to|i (?:want|need|wish) to|i'm looking for|i am looking for"
    r"|how (?:do|can|could|should) (?:i|we|you)|is (?:there|it possible to)(?: a way to)?|what(?:'s| is) the"
    r"|which tool(?: can| could| should| would)?|find me|show me|tell me|let me|please)\b[\s,]*",
    re.I,
)


# The same in Chinese: "能不能帮我读文件" asks to read a file ("读文件"); what precedes it
# (can you / please / help me) and the particles after it say nothing about the tool.
_LEADING_CJK = re.compile(
    r"^(?:请问|麻烦(?:你|您)?|请(?:你|您)?|(?:你|您)?(?:能不能|能否|可不可以|可以|能)|我(?:想|要|需要|希望))*"
    r"(?:帮(?:我|忙)?|给我)?(?:请)?"
)
_TRAILING_CJK = re.compile(r"(?:一下|一下子)?(?:吗|呢|吧|好吗|可以吗|行吗)?[\s？?。！!]*$")


# A verb inside the filler is the request's action ("find me jobs ...", "show me the
# logs"): the filler around it goes, the verb stays (tools are named find_*, show_*; without
# it a natural-language request lost its only action word).
_KEPT_VERB = re.compile(r"\b(?:find|show)\b", re.I)


def _is_cjk(char: str) -> bool:
    return "\u3400" <= char <= "\u9fff"


def strip_leading(query: str) -> str:
    """The request without leading question and politeness words ("can you please ...",
    "能不能帮我 ..."); an action verb among them stays ("find me X" -> "find X")."""
    stripped = query
    for _ in range(3):  # "please, can you help me ..." peels in steps
        m = _LEADING.match(stripped)
        if m is None:
            break
        verbs = _KEPT_VERB.findall(m.group(0))
        shorter = " ".join([*verbs, stripped[m.end():]]).strip(" ,?!.")
        if shorter == stripped:
            break
        stripped = shorter
    stripped = stripped.rstrip("?!. ")
    if stripped and _is_cjk(stripped[0]):  # CJK: only then pay for the second pass
        cjk = _TRAILING_CJK.sub("", _LEADING_CJK.sub("", stripped, count=1), count=1)
        stripped = cjk or stripped
    return stripped


_DET = r"(?i:the|my|our|your|his|her|their|all|every|each|this)"
_WORD = r"[\w-]+(?![\w-])"  # a whole word ("tea" is not a word of "team")
# words that cannot start or end a recipient ("notify the team with ...", "tell the difference")
_NOT_WHO = (
    r"(?!(?i:that|about|the|a|an|to|it|is|was|i|you|he|she|we|they|know|this|my|our|your|difference|time|truth|story|joke"
    r"|with|via|using|by|in|on|through|over|from|when|whenever|once|after|before|every)(?![\w-]))"
)
_WHO = (
    rf"(?:{_DET}\s+{_NOT_WHO}{_WORD}(?:\s+{_NOT_WHO}{_WORD})?"
    r"|(?i:everyone|everybody|him|them)|[@#][\w.-]+|[\w.+-]+@[\w.-]+|[A-Z][\w-]*)"
)
_PAYLOAD_MARK = r"(?:\s+(?:that|about|saying|to say|whether|if)\b|\s*[:,\u2014]|\s+-)?\s*"
# "notify the team by email", "... when the build fails": how or when, not a message
_MEANS = r"(?i:with|via|using|by|in|on|through|over|from|when|whenever|once|after|before|every)\b"
_INFORM = re.compile(
    rf"^(?:(?i:let)\s+(?P<who1>{_WHO})\s+(?i:know)|(?P<verb>(?i:tell|inform|notify|remind|warn|alert|ping|message|text|e-?mail|dm))\s+(?P<who2>{_WHO}))"
    rf"(?i:{_PAYLOAD_MARK})(?P<payload>(?!{_MEANS})\S.*)$"
)
_SEND = {"remind": "send a reminder to", "text": "send a text message to", "email": "send an email to", "e-mail": "send an email to"}
_ACTION_WORDS = 3  # what is left of a request must still say something
_QUOTED = re.compile(r"[\"\u201c]([^\"\u201c\u201d]{3,})[\"\u201d]")


def message_action(request: str) -> str | None:
    """The request without the message it asks to pass on (see ``_INFORM``), or ``None``."""
    m = _INFORM.match(request)
    if m:
        who = m.group("who1") or m.group("who2")
        if len(m.group("payload").split()) >= 2:
            verb = (m.group("verb") or "tell").lower()
            return f"{_SEND.get(verb, 'send a message to')} {who}"
    # Quoted text is a value the tool is given ('post "deploy done" to #releases', 'the
    # film "Avengers: Endgame"'), not what it does; a request that is all quote stays whole.
    rest = " ".join(_QUOTED.sub(" ", request).split()).strip(" .,;:?!")
    if rest != request and len(rest.split()) >= _ACTION_WORDS:
        return rest
    return None


# Tool names use a few verbs (create, get, update, delete, list, search); requests use many
# more. A request that starts with a common everyday verb is also matched with the verb tool
# names use: "open a jira ticket" -> "create a jira ticket". "open the file" reads a file, so
# only "open a/an/new ..." means create.
_VERBS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(rf"^(?:{pattern})\b", re.I), verb)
    for pattern, verb in (
        (r"(?:open|file|raise|start|make|set up|spin up)(?=\s+(?:a|an|new)\b)", "create"),
        (r"remove|erase|get rid of|drop|wipe|trash|discard", "delete"),
        (r"fetch|retrieve|look up|lookup|pull up|read|open|view|display", "get"),
        (r"change|modify|edit|amend|rename|adjust", "update"),
        (r"look for|hunt for|query for|search for", "search"),
        (r"enumerate|show all|list all", "list"),
        # telling someone is sending them something: tools say send_message, send_email
        # ("notify", "alert" are tool names' own verbs; a word that is also a noun only
        # before an object: "email it", not "email address")
        (r"(?:tell|ping|dm)(?=\s+(?!(?:me|us)\b)\S)", "send"),
        (r"(?:e-?mail|mail|message|text)(?=\s+(?:it|them|this|that|these|those|the|a|an|my|our|your|his|her|everyone|everybody|him)\b)", "send"),
    )
)


def verb_variant(request: str) -> str | None:
    """``request`` with its leading everyday verb replaced by the verb tool names use, or
    ``None`` when it starts with no such verb."""
    for pattern, verb in _VERBS:
        replaced = pattern.sub(verb, request, count=1)
        if replaced != request:
            return replaced
    return None


# Only where it ends a question ("what time is it now", "who is online right now?") does
# "now" ask for the current value; inside a sentence it narrates ("we are now working on a
# quiz"), after a command it urges ("find me coupons now!").
_NOW = re.compile(r"\b(?:right now|now|at the moment|currently)[\s?!.]*$", re.I)
_QUESTION = re.compile(r"^(?i:what|which|who|whom|whose|where|when|how|is|are|do|does|can|could)\b|\?\s*$")

_IDENT = re.compile(r"`([^`]+)`|\b([A-Za-z][A-Za-z0-9]*(?:[_.:/-][A-Za-z0-9]+)+|[a-z]+[A-Z][A-Za-z0-9]*)\b")


_PROSE_HYPHEN = re.compile(r"[A-Za-z]+(?:-[A-Za-z]+)+")  # "text-to-speech": a word, not a name


def identifiers(query: str) -> list[str]:
    """Names the query spells as identifiers: backticked text, ``snake_case``,
    ``dotted.names``, ``camelCase``, ``kebab-case`` with a digit (a model asking for a tool
    by name); hyphenated words ("pre-trained", "text-to-speech") are prose unless backticked."""
    found = []
    for m in _IDENT.finditer(query):
        if m.group(1):
            found.append(m.group(1).strip())
        elif not _PROSE_HYPHEN.fullmatch(m.group(2)):
            found.append(m.group(2))
    return list(dict.fromkeys(found))


def matching_text(query: str) -> str:
    """What keyword search should match for ``query``: its action when it carries a message
    or quoted values (see :func:`message_action`), else the query itself (a CJK one without
    its leading politeness and question words: :func:`strip_leading`); plus the verb tool names use when it starts
    with an everyday one (see :func:`verb_variant`), and ``current`` when it asks about now
    (tools say ``get_current_time``, people say "what time is it now")."""
    stripped = strip_leading(" ".join(query.split()))
    action = message_action(stripped)
    verb = verb_variant(action or stripped)
    # Filler is dropped from what is matched only in a CJK request: there each character is
    # a term, so "能不能帮我" adds characters that match any description holding them. A
    # Latin-script filler word is a word like any other, and IDF weighs it: descriptions say
    # "helps you ...", "a way to ...", so dropping "help" and "way" lost natural-language
    # requests their tool (issue 32: the keyword regression since 65f5f88).
    text = action or (stripped if stripped and _is_cjk(stripped[0]) else query)
    if verb:
        text = f"{text} {verb.split()[0]}"
    return f"{text} current" if _NOW.search(query) and _QUESTION.search(query.strip()) else text
