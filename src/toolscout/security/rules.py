"""Phrase rules: instructions aimed at the model, requests for secrets, orders about other tools.

Ordinary tool descriptions also talk to the model ("you must provide an id", "pass your API
key", "use search_files first"), so no rule fires on one alarming word. A rule needs the
parts of an attack together, usually in one sentence: a secret *and* an order to hand it
over; another tool *and* a trigger *and* a change to its arguments; a scope of "every
request" *and* an action. Each rule names keywords it needs, so a clean text costs a few
substring checks.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from .rule_text import Context, Hit
from .rules_instructions import (
    conceal_gate,
    conceal_rule,
    directive_gate,
    directive_rule,
    line_jumping_gate,
    line_jumping_rule,
    override_gate,
    override_rule,
    tags_gate,
    tags_rule,
)
from .rules_secrets import (
    exfiltration_gate,
    exfiltration_rule,
    secret_default,
    secrets_gate,
    secrets_rule,
)
from .rules_tools import shadowing_gate, shadowing_rule

__all__ = ["RULES", "Context", "Hit", "Rule", "active_rules", "run_rules", "secret_default"]



Rule = tuple[Callable[[Context], bool], Callable[[Context], Hit]]
"""A gate (word-set checks only) and the check it guards."""
RULES: tuple[Rule, ...] = (
    (tags_gate, tags_rule),
    (override_gate, override_rule),
    (conceal_gate, conceal_rule),
    (line_jumping_gate, line_jumping_rule),
    (secrets_gate, secrets_rule),
    (exfiltration_gate, exfiltration_rule),
    (shadowing_gate, shadowing_rule),
    (directive_gate, directive_rule),
)


def active_rules(text: str | Context) -> tuple[Rule, ...]:
    """The rules whose gate opens on ``text``. Gates only look for words, so rules closed on
    all of a tool's texts joined are closed on each of them: one pass per tool skips them."""
    c = text if isinstance(text, Context) else Context(text)
    return tuple(rule for rule in RULES if rule[0](c))


def run_rules(
    text: str | Context,
    *,
    own: Collection[str] = (),
    siblings: Collection[str] = (),
    parameter: bool = False,
    rules: tuple[Rule, ...] = RULES,
) -> list[tuple[str, str]]:
    """``(code, evidence)`` for every rule that fires on ``text`` (already cleaned; a
    :class:`Context` of it, its words split once for the scope analysis too)."""
    if isinstance(text, Context):
        c = text
        c.own, c.parameter, c.siblings = frozenset(own), parameter, frozenset(siblings)
    else:
        c = Context(text, frozenset(own), parameter, frozenset(siblings))
    return [hit for gate, check in rules if gate(c) and (hit := check(c)) is not None]

