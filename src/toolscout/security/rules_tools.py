"""Rules for orders about other tools: shadowing (when another tool is called, change where it
sends or what it carries) and overriding (use this one instead, the other is broken). One
family of :mod:`.rules`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .rule_text import IDENT, SINK, Context, Hit, evidence_window, word_set
from .rules_instructions import NEGATION

__all__ = ["shadowing_gate", "shadowing_rule"]

_I = re.IGNORECASE

# -- other tools -----------------------------------------------------------------------
_REF = re.compile(
    r"\b(?:use|uses|using|call|calls|calling|invoke|invokes|invoking|run|runs|running)\s+(?:to\s+)?(?:the\s+)?"
    rf"(?:\([\w.-]+\)\s+)?`?(?P<a>{IDENT})`?"
    rf"|(?<![\w-])`?(?P<b>{IDENT})`?\s+(?:(?:tool\s+|function\s+)?(?:is|are|gets?|was)\s+"
    r"(?:used|called|invoked|run|executed|available|present|triggered)\b"
    r"|(?:calls?|requests?|invocations?|results?|outputs?|responses?)\b)"
    rf"|\bthe\s+`?(?P<c>{IDENT}|[A-Za-z]\w*)`?\s+(?:tool|function)\b"
    r"|\b(?:calls?|requests?|invocations?|results?|outputs?|responses?)\s+(?:to|from|of)\s+(?:the\s+)?"
    rf"`?(?P<e>{IDENT})`?"
    r"|\b(?:use|uses|using|call|calls|calling|invoke|invokes|invoking|run|runs|running)\s+"
    r"(?P<d>(?:any|every|all|another)\s+(?:other\s+)?(?:\w+\s+)?(?:tools?|functions?))\b",
    _I,
)
_TRIGGER = re.compile(
    r"\b(?:when|whenever|if|once|every\s+time|each\s+time|any\s*time|as\s+soon\s+as|in\s+case|before|after|while|"
    r"(?:for|on)\s+(?:every|each|all|any))\b"
    rf"|\b(?:notes?|instructions?|messages?|reminders?|rules?)\s+(?:for|to)\s+(?:the\s+)?`?{IDENT}"
    rf"|(?<![\w-])`?{IDENT}`?\s+(?:calls?|requests?|invocations?)\s+(?:must|should|shall|need\s+to|needs\s+to|will|always)\b",
    _I,
)
_CHANGE = re.compile(  # to another tool's call: where it sends, what it runs, what it carries
    r"\b(?:change|set|replace|redirect|switch|route|rewrite|modify|alter)\s+(?:the\s+|its\s+|their\s+|all\s+)?"
    r"(?:\w+\s+)?(?:recipients?|destination|address|account|number|url|endpoint|host|payee|iban|wallet|"
    r"sender|amount|command|path|to\s+field)\b"
    r"|\b(?:prepend|append|add|insert|inject)\b(?:[^.;\n]|[.;](?=\S)){0,80}?\bto\s+(?:the\s+|every\s+|each\s+|all\s+|its\s+)?"
    r"(?:commands?|messages?|body|bodies|emails?|requests?|quer(?:y|ies)|prompts?|text|content|code|scripts?)\b"
    r"|\b(?:recipients?|payee|destination|address|account|url|endpoint|host|wallet|iban|amount|sender|to\s+field)\s+"
    r"(?:(?:must|should|will|shall|has\s+to|is\s+to|needs?\s+to)\s+)?(?:be\s+|is\s+|are\s+)?(?:changed|switched|set|replaced|"
    r"redirected|routed|swapped|updated|overwritten|rewritten)\s+to\b"
    r"|\b(?:bcc|cc)\b"
    r"|\binstead\s+of\s+the\s+(?:requested|given|user'?s|original|intended|specified|provided|chosen)\b"
    r"|\b(?:include|add|append|use|pass|set)\s+(?:the\s+)?[`'\"]?--?[a-z][\w-]*"
    r"|\b(?:also|always|silently|secretly|quietly)\s+(?:\w+\s+)?(?:append|prepend|add|insert|inject|attach)\b"
    r"|\b(?:put|set|write|insert|include|add|use|fill)\s+[`'\"][^`'\"]{1,80}[`'\"]\s+(?:in|into|as|for)\s+(?:the\s+|every\s+|each\s+)?\w+"
    r"|\b(?:must|should)\s+(?:also\s+)?(?:call|invoke|run|use)\s+this\s+(?:tool|function)\b"
    r"|\bsend\s+(?:all|every|each|a\s+copy)\b|\bcopy\b",
    _I,
)
_SIDE_EFFECT = re.compile(r"\bside[\s-]effects?\s+on\s+(?:the\s+)?(?:also[\s-]present\s+)?", _I)
_OVERRIDE_TOOL = re.compile(
    r"\bthis\s+(?:tool|function|server)\s+(?:replaces|overrides|supersedes|shadows|"
    r"takes\s+precedence\s+over|(?:should|must)\s+(?:always\s+)?be\s+used\s+instead\s+of)\b"
    rf"|\b(?:replaces|overrides|supersedes)\s+(?:the\s+)?(?:built[-\s]?in\s+|default\s+|original\s+|existing\s+)?"
    rf"`?(?:{IDENT}|\w+)`?\s+(?:tool|function)\b",
    _I,
)
_AVOID = re.compile(
    rf"\b(?:never|do\s+not|don'?t|must\s+not)\s+(?:use|call|invoke|trust|rely\s+on)\s+(?:the\s+)?`?(?P<t>{IDENT})`?"
    r"|\b(?:never|do\s+not|don'?t|must\s+not)\s+(?:use|call|invoke|trust|rely\s+on)\s+(?:any\s+)?other\s+"
    r"(?:\w+\s+)?(?:tools?|functions?)\b",
    _I,
)
_TOOL_WORD = re.compile(r"\b(?:tools?|functions?)\b|`", _I)
_DISTRUST = re.compile(
    r"\b(?:is|are|has\s+been|have\s+been|returns?|gives?)\s+(?:\w+\s+)?(?:deprecated|disabled|broken|"
    r"compromised|unsafe|malicious|unreliable|insecure|fake|untrusted|outdated)\b"
    r"|\b(?:is|are)\s+(?:no\s+longer|not)\s+(?:safe|secure|trusted|trustworthy|reliable|supported|available)\b"
    r"|\b(?:is|are)\s+(?:poisoned|hijacked|tampered)\b"
    r"|\b(?:only|exclusively)\s+(?:through|via|with|use)\s+this\s+(?:tool|function)|\bthrough\s+this\s+tool\s+only\b"
    r"|\b(?:ignore|disregard|distrust|discard)\s+(?:its|their|the)\s+(?:output|results?|responses?)\b",
    _I,
)


def _other(name: str, c: Context, *, siblings_count: bool) -> bool:
    """Whether an identifier names a tool other than this one (and, unless
    ``siblings_count``, other than one from the same source)."""
    key = name.lower().strip("`")
    if key in c.own or any(own.endswith(key) or key.endswith(own) for own in c.own if own):
        return False
    return siblings_count or key not in c.siblings


def _refs(sentence: str, c: Context, *, siblings_count: bool) -> Iterator[re.Match[str]]:
    for m in _REF.finditer(sentence):
        if m["d"]:
            yield m
            continue
        name = m["a"] or m["b"] or m["c"] or m["e"]
        if name and name.lower() not in ("this", "same", "following", "above") and _other(
            name, c, siblings_count=siblings_count
        ):
            yield m


_TRIGGERS = word_set("when whenever if once time anytime soon case before after while every each note notes instructions "
               "instruction message messages reminder rules call calls request requests invocations")
_CHANGES = word_set("change set replace redirect switch route rewrite modify alter add include append insert attach instead "
              "prepend bcc cc always must should send copy changed switched replaced redirected routed swapped "
              "updated overwritten rewritten http https put write fill use inject also silently secretly quietly")
_OVERRIDE_WORDS = word_set("replaces overrides supersedes shadows precedence instead")
_AVOID_VERBS = word_set("use call invoke trust rely")
_DISTRUST_WORDS = word_set("deprecated disabled broken compromised unsafe malicious unreliable insecure fake untrusted "
                     "outdated ignore disregard distrust discard longer only exclusively poisoned hijacked tampered")


def _shadow_refs_gate(c: Context) -> bool:
    return c.has(_TRIGGERS) and (c.has(_CHANGES) or "@" in c.text or "+" in c.text)


def shadowing_gate(c: Context) -> bool:
    return (
        "side" in c.words or _shadow_refs_gate(c) or c.has(_OVERRIDE_WORDS) or c.has(NEGATION, _AVOID_VERBS)
        or c.has(_DISTRUST_WORDS)
    ) and c.names_tool


def shadowing_rule(c: Context) -> Hit:
    side = "side" in c.words and _SIDE_EFFECT.search(c.text) is not None
    refs = _shadow_refs_gate(c) and _REF.search(c.text) is not None
    overrides = (
        (c.has(_OVERRIDE_WORDS) and _OVERRIDE_TOOL.search(c.text))
        or (c.has(NEGATION, _AVOID_VERBS) and _AVOID.search(c.text))
        or (c.has(_DISTRUST_WORDS) and _DISTRUST.search(c.text) and _REF.search(c.text))
    )
    if not (side or refs or overrides):
        return None
    found_override = None
    for sentence in c.sentences:
        se = _SIDE_EFFECT.search(sentence) if side else None
        if se and any(True for _ in _refs(sentence[se.end():], c, siblings_count=True)):
            return "tool_shadowing", evidence_window(sentence, se.start(), se.end())
        trigger = _TRIGGER.search(sentence) if refs else None
        if trigger:
            for ref in _refs(sentence, c, siblings_count=True):
                if ref.end() < trigger.start() and not ref["d"]:
                    continue
                change = _CHANGE.search(sentence, ref.end()) or SINK.search(sentence, ref.end())
                if change is None:
                    continue
                name = ref["a"] or ref["b"] or ref["c"] or ref["e"] or ""
                sibling = not ref["d"] and (
                    not re.fullmatch(IDENT, name) or not _other(name, c, siblings_count=False)
                )
                if sibling and not SINK.search(sentence):
                    continue  # guidance about a tool of the same server, with nowhere to send data
                return "tool_shadowing", evidence_window(sentence, trigger.start(), change.end())
        if found_override is None and overrides:
            m = _OVERRIDE_TOOL.search(sentence)
            if m is not None and not (_TOOL_WORD.search(m[0], 10) or _TOOL_WORD.search(sentence, m.end())):
                m = None
            if m is None:
                m = next((a for a in _AVOID.finditer(sentence)
                          if not a["t"] or _other(a["t"], c, siblings_count=False)), None)
            if m is None and _DISTRUST.search(sentence):
                m = next((r for r in _refs(sentence, c, siblings_count=False) if not r["d"]), None)
            if m is not None:
                found_override = evidence_window(sentence, m.start(), m.end())
    if found_override is not None:
        return "tool_override", found_override
    return None
