"""The operator's word over a source's own: per-tool overrides and per-source kinds.

A source entry in the gateway config (an MCP server, a declaration file, an OpenAPI spec,
a Python module) may say, for every tool, ``permission`` (its kind, over what MCP hints
imply) and ``approval`` (``always`` / ``never``), and per tool, in ``overrides`` keyed by
the source's own name for it: a new ``name`` (the prefix still applies), ``description``,
``hide`` (parameters the model never sees; optional ones only), ``pin`` (parameters set
to a fixed value: removed from the schema, refused if the model sends them, injected into
every call), ``tags`` (added), ``category``, ``permission`` and ``approval``.

The overridden tool is what the model reads, so it is what the poisoning screen reads: the
sources apply overrides *before* screening. Calls map back: the tool keeps the source's own
name as ``original_name`` and :func:`with_pins` puts the pinned values back into the
arguments. An override is a promise the operator relies on (a pin may be the account a
tool may touch), so one that cannot be honoured (a pinned value the schema refuses, a
parameter the tool no longer has) keeps the tool out rather than serving it without it.
"""

from __future__ import annotations

import functools
import inspect
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from ..model import Tool, canonical_json
from .source_config import SourceOptions, ToolOverride

__all__ = ["OverrideProblem", "apply_overrides", "pins_for", "unknown_overrides", "with_pins"]

FIXED = "fixed_arguments"
"""``Tool.meta`` key: parameters the configuration sets or hides (the gateway refuses them)."""
APPROVAL = "approval"
"""``Tool.meta`` key: ``always`` or ``never``, the operator's approval rule for the tool."""


class OverrideProblem(ValueError):
    """An override that cannot be honoured for one tool (the tool is kept out)."""


def apply_overrides(tool: Tool, entry: SourceOptions, own: str, prefix: str) -> Tool:
    """``tool`` (already named ``{prefix}_{own}``) as the operator configured it: the
    source-wide ``permission``/``approval``, then the override for ``own``, if any.
    Raises :class:`OverrideProblem` when the override cannot be honoured."""
    override = entry.overrides.get(own)
    permission = (override.permission if override else None) or tool.permission or entry.permission
    rule = (override.approval if override else None) or entry.approval
    if override is None and permission == tool.permission and rule is None:
        return tool
    changes: dict[str, Any] = {"permission": permission}
    if permission != tool.permission and permission is not None:
        changes["annotations"] = _hints_for(tool, permission)
    meta = dict(tool.meta)
    if rule is not None:
        meta[APPROVAL] = rule
    if override is not None:
        if override.name is not None:
            changes["name"] = f"{prefix}_{override.name}" if prefix else override.name
            changes["original_name"] = tool.call_name
        if override.description is not None:
            changes["description"] = override.description
            changes["descriptions"] = {}  # translations of the old text would contradict the new one
        if override.tags:
            changes["tags"] = list(dict.fromkeys([*tool.tags, *override.tags]))
        if override.category is not None:
            changes["category"] = override.category
        fixed = [*override.hide, *override.pin]
        if fixed:
            changes["input_schema"] = _without(tool, override)
            meta[FIXED] = fixed
    changes["meta"] = meta
    try:
        return tool.replace(**changes)
    except ValueError as exc:  # Tool refused a field (a lone surrogate in a description...)
        raise OverrideProblem(str(exc)) from None


def _hints_for(tool: Tool, kind: str) -> dict[str, Any]:
    """The tool's MCP hints made to agree with the kind the operator set, so a client
    that reads ``tools/list`` is not told "read-only" about a tool the gateway gates."""
    hints = tool.annotations.to_mcp() if tool.annotations is not None else {}
    if kind == "read":
        hints.update(readOnlyHint=True, destructiveHint=False)
    elif kind == "dangerous":
        hints.update(readOnlyHint=False, destructiveHint=True)
    else:  # write, execute, network: not read-only, not known to destroy
        hints.update(readOnlyHint=False, destructiveHint=False)
    return hints


def _without(tool: Tool, override: ToolOverride) -> dict[str, Any]:
    """The tool's schema without its hidden and pinned parameters; checks each pin."""
    schema = tool.input_schema
    properties = dict(schema.get("properties") or {})
    required = [r for r in schema.get("required") or [] if isinstance(r, str)]
    for name in [*override.hide, *override.pin]:
        if name not in properties:
            raise OverrideProblem(f"override names parameter {name!r}, which {tool.call_name} does not have")
    for name in override.hide:
        if name in required:
            raise OverrideProblem(f"hide {name!r}: {tool.call_name} requires it; pin a value for it instead")
    for name, value in override.pin.items():
        problem = _pin_problem(properties[name], value)
        if problem:
            raise OverrideProblem(f"pin {name!r}: {problem}")
    for name in [*override.hide, *override.pin]:
        properties.pop(name, None)
    out = {**schema, "properties": properties}
    kept = [r for r in required if r in properties]
    if kept:
        out["required"] = kept
    else:
        out.pop("required", None)
    return out


def _pin_problem(schema: Any, value: Any) -> str:
    """Why ``value`` does not fit the parameter's schema, or ``""``."""
    if not isinstance(schema, Mapping):
        return "" if schema is not False else "the parameter accepts no value"
    try:
        return _checker(canonical_json(schema))(value)
    except (TypeError, ValueError) as exc:  # the value is not JSON data
        return f"not JSON data ({exc})"


@functools.lru_cache(maxsize=256)
def _checker(schema_json: str) -> Callable[[Any], str]:
    import jsonschema  # ~40 ms: only when a pin is configured

    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    try:
        validator = cls(schema)
    except Exception:
        return lambda value: ""  # a schema we cannot use: the upstream judges the value

    def check(value: Any) -> str:
        try:
            error = jsonschema.exceptions.best_match(validator.iter_errors(value))
        except Exception:
            return ""
        return "" if error is None else f"{json.dumps(value, ensure_ascii=False)[:80]} does not fit the parameter ({error.message[:160]})"

    return check


def unknown_overrides(entry: SourceOptions, own_names: Iterable[str]) -> list[str]:
    """Override keys that name no tool the source listed (a typo, or a tool it dropped)."""
    names = set(own_names)
    return sorted(key for key in entry.overrides if key not in names)


def pins_for(entry: SourceOptions, own: str) -> dict[str, Any]:
    """The values configured for the tool the source calls ``own`` (empty: none)."""
    override = entry.overrides.get(own)
    return dict(override.pin) if override is not None else {}


def with_pins(handler: Callable[[dict[str, Any]], Any], pins: Mapping[str, Any]) -> Callable[[dict[str, Any]], Any]:
    """``handler`` called with ``pins`` over its arguments (the gateway already refused a
    model's value for them). A handler is returned as is when there is nothing to pin."""
    if not pins:
        return handler
    fixed = dict(pins)
    if inspect.iscoroutinefunction(handler) or inspect.iscoroutinefunction(type(handler).__call__):

        async def apinned(arguments: dict[str, Any]) -> Any:
            return await handler({**arguments, **fixed})

        return apinned

    def pinned(arguments: dict[str, Any]) -> Any:
        return handler({**arguments, **fixed})

    return pinned
