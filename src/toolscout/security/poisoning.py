"""The detector: every text of a tool that a model reads, checked for poisoning.

A model reads a tool's name, description, titles and its whole input schema (parameter
names, descriptions, defaults, enums), so all of them are scanned; ``meta`` is not sent to
models and is not. Each text goes through three checks: invisible or deceptive characters
(on the raw text), phrase rules (on the cleaned text, see :func:`unicode.clean`), and
encoded blobs, whose decoding goes through the phrase rules in turn.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator
from typing import Any

from ..model import Tool
from .encoded import ESCAPED, decoded_texts, joined_blobs, looks_instructive
from .findings import CODES, Finding, ordered, trim
from .rules import RULES, Context, Rule, active_rules, run_rules, secret_default
from .scope import scope_gate, scope_hits, secret_name
from .unicode import clean, name_problems, text_problems

__all__ = ["scan", "scan_text", "tool_texts"]

_MIN_PHRASE = 16  # shorter texts cannot hold a sentence-level attack
_MIN_BLOB = 32  # nor an encoded one
_MAX_STRINGS = 5000  # strings per schema; a pathological schema is not walked forever
_NAME_SPLIT = re.compile(r"[_\-.]+|(?<=[a-z])(?=[A-Z])")
_SKIP_KEYS = frozenset({"type", "required", "$schema", "$ref", "$id", "format", "additionalProperties"})


def tool_texts(tool: Tool, schema: Any = None) -> Iterator[tuple[str, str, bool]]:
    """``(field, text, is_name)`` for every string of ``tool`` a model reads (``schema`` is
    its input schema when the caller has parsed it already)."""
    yield "name", tool.name, True
    yield "description", tool.description, False
    for lang, text in tool.descriptions.items():
        yield f"descriptions.{lang}", text, False
    title = tool.display.get("title")
    if title:
        yield "title", title, False
    if tool.annotations is not None and tool.annotations.title:
        yield "annotations.title", tool.annotations.title, False
    schema = json.loads(tool.schema_json) if schema is None else schema
    for count, item in enumerate(_walk(schema, "input_schema")):
        if count >= _MAX_STRINGS:
            return
        yield item
    output = tool.output_schema
    if output:
        yield from _walk(output, "output_schema")


def _walk(node: Any, path: str) -> Iterator[tuple[str, str, bool]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if not isinstance(key, str) or key in _SKIP_KEYS:
                continue
            if key == "properties" and isinstance(value, dict):
                for name, sub in value.items():
                    where = f"{path}.properties.{name}"
                    yield where, str(name), True
                    yield from _walk(sub, where)
            elif isinstance(value, str):
                yield f"{path}.{key}", value, False
            else:
                yield from _walk(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, item in enumerate(node):
            if isinstance(item, str):
                yield f"{path}[{i}]", item, False
            else:
                yield from _walk(item, f"{path}[{i}]")


def scan_text(
    text: str,
    field: str = "description",
    *,
    own: Collection[str] = (),
    siblings: Collection[str] = (),
    context: str = "",
    rules: tuple[Rule, ...] = RULES,
    scope: bool = True,
) -> list[Finding]:
    """Findings for one free text (a description, a parameter's description, a default...).

    ``own`` are the tool's own names and ``siblings`` the names of tools from the same
    source (lower-case), so a tool that mentions itself or a neighbour is not "shadowing";
    ``context`` is the tool's description, for rules that weigh a field against it;
    ``scope=False`` skips scope analysis (:mod:`.scope`: its gate was closed on the whole tool).
    """
    plain = text.isascii() and "\x1b" not in text and "\x08" not in text
    out = [] if plain else [Finding.of(code, field, evidence) for code, evidence in text_problems(text)]
    defaults = field.endswith(("default", "const", "]")) or ".example" in field
    if len(text) < _MIN_PHRASE:
        if defaults:
            out.extend(Finding.of(code, field, ev) for code, ev in secret_default(field, text, context))
        return out
    cleaned = text if plain else clean(text)
    parameter = field.startswith("input_schema.")
    words = Context(cleaned) if rules or scope else None  # lower-cased and split once for both
    hits = run_rules(words, own=own, siblings=siblings, parameter=parameter, rules=rules) if words and rules else []
    if defaults:
        hits.extend(secret_default(field, cleaned, context))
    if scope:
        hits.extend(_scoped(cleaned, own, siblings, hits, parameter=parameter, words=words.words if words else None))
    if hits:
        out.extend(Finding.of(code, field, evidence) for code, evidence in hits)
    if len(text) < _MIN_BLOB:
        return out
    for blob, decoded in decoded_texts(text):
        inner = run_rules(clean(decoded), own=own, siblings=siblings)
        inner.extend(_scoped(clean(decoded), own, siblings, inner))
        if blob.startswith(ESCAPED):
            blob = blob.removeprefix(ESCAPED)
            seen = {code for code, _ in hits}
            if any(code not in seen and CODES[code][0] != "low" for code, _ in inner):  # the escapes hid it
                out.append(Finding.of("encoded_instruction", field, f"{trim(blob, 24)} decodes to: {decoded}"))
        elif inner:
            out.append(Finding.of("encoded_instruction", field, f"{trim(blob, 24)} decodes to: {decoded}"))
        elif looks_instructive(decoded):
            out.append(Finding.of("encoded_payload", field, f"{trim(blob, 24)} decodes to: {decoded}"))
    return out


_TOOLISH = re.compile(r"\b(?:tools?|functions?|called|invoked|calls?|invokes?|runs?|executes?|used)\b", re.I)


def _scoped(
    text: str, own: Collection[str], siblings: Collection[str], found: list[tuple[str, str]], *, parameter: bool = False,
    words: frozenset[str] | None = None,
) -> list[tuple[str, str]]:
    """Scope analysis (:mod:`.scope`) for codes the phrase rules did not already report."""
    owned = frozenset(own)
    sibs = frozenset(siblings)
    toolish: list[bool] = []  # whether the text talks about tools: looked at once, only if asked

    def other(name: str) -> bool:
        if not toolish:
            toolish.append(_TOOLISH.search(text) is not None)
        key = name.lower()
        return toolish[0] and key not in owned and key not in sibs and not any(
            o.endswith(key) or key.endswith(o) for o in owned if o
        )

    have = {code for code, _ in found}
    hits = scope_hits(text, params=owned, is_other_tool=other, parameter=parameter, words=words)
    return [(code, ev) for code, ev in hits if code not in have]


def scan(tool: Tool, *, siblings: Collection[str] = ()) -> list[Finding]:
    """Every finding for ``tool``, most severe first (rug pulls need a pin store: see
    :class:`~toolscout.security.pins.Pins`). ``siblings`` are the names of tools from the
    same source; a ``frozenset`` is taken as already lower-cased (scan a big source with one
    set, not one per tool)."""
    own = {tool.name.lower()}
    if tool.original_name:
        own.add(tool.original_name.lower())
    schema = json.loads(tool.schema_json)
    props = schema.get("properties") if isinstance(schema, dict) else None
    if isinstance(props, dict):
        own.update(str(k).lower() for k in props)
    sibs = siblings if isinstance(siblings, frozenset) else frozenset(s.lower() for s in siblings)
    findings: list[Finding] = []
    texts: list[tuple[str, str]] = []
    for field, text, is_name in tool_texts(tool, schema):
        if is_name:
            problem = name_problems(text)
            if problem:
                findings.append(Finding.of("deceptive_name", field, problem))
            asks = secret_name(text) if field != "name" else None
            if asks:
                findings.append(Finding.of("secret_access", field, f"a parameter named for a credential file: {asks}"))
            if field != "name" and len(text) >= 12:  # a parameter name can carry an order too
                words = _NAME_SPLIT.sub(" ", text).strip()
                if words.count(" ") >= 2:
                    texts.append((field, words))
        elif text:
            texts.append((field, text))
    joined = clean("\n".join(text for _, text in texts))
    gate = Context(joined)  # split once for both gates
    rules = active_rules(gate)
    scope = scope_gate(joined, gate.words)
    for field, text in texts:
        findings.extend(
            scan_text(text, field, own=own, siblings=sibs, context=tool.description, rules=rules, scope=scope)
        )
    if not any(f.code == "encoded_instruction" for f in findings):
        for blob, decoded in joined_blobs(text for _, text in texts):
            inner = run_rules(clean(decoded), own=own, siblings=sibs)
            inner.extend(_scoped(clean(decoded), own, sibs, inner))
            if inner or looks_instructive(decoded):
                code = "encoded_instruction" if inner else "encoded_payload"
                findings.append(Finding.of(code, "(split over fields)", f"{trim(blob, 24)} decodes to: {decoded}"))
    return ordered(findings)
