"""Arguments checked against a tool's input schema before anything runs.

Part of the ``approve`` stage of a tool call (:mod:`toolscout.access.guard`): a person is
only ever asked about a call that would run, and a handler only ever receives arguments its
schema admits. Each problem comes back with its JSON pointer and what was expected, so a
model fixes one pointer at a time. Arguments the operator fixed (per-tool overrides) are
refused when given, never silently replaced.

Validators are compiled once per tool version and kept in a bounded LRU; a schema that
cannot be used (broken, or a ``$ref`` to a URL, which is never fetched) is the tool's
problem, not the caller's: its calls go on unvalidated and the operator is told once.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Collection, Mapping
from typing import Any

from ..errors import InvalidArguments
from ..model import Tool

__all__ = ["ArgumentCheck"]

log = logging.getLogger("toolscout.gateway")

MAX_PROBLEMS = 20
MAX_VALIDATORS = 4096


def _pointer(path: Collection[Any]) -> str:
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in path) if path else "/"


def _problems(err: Any) -> list[dict[str, Any]]:
    """One schema error as problems, each with its own pointer: a ``required`` error is
    one problem per missing property (jsonschema reports each one as its own error, all
    pointing at the object; a model fixes one pointer at a time)."""
    path = list(err.absolute_path)
    if err.validator == "required" and isinstance(err.instance, Mapping):
        absent = [r for r in err.validator_value if r not in err.instance]
        missing = [r for r in absent if err.message == f"{r!r} is a required property"] or absent[:1]
        return [
            {"pointer": _pointer([*path, m]), "message": f"{m!r} is a required property", "expected": "present"}
            for m in missing
        ] or [{"pointer": _pointer(path), "message": err.message[:300], "expected": "present"}]
    problem: dict[str, Any] = {"pointer": _pointer(path), "message": err.message[:300]}
    if err.validator in ("type", "enum"):
        problem["expected"] = err.validator_value
    return [problem]


def _fixed_given(tool: Tool, arguments: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Arguments the model gave that the gateway's configuration sets or hides
    (``meta["fixed_arguments"]``, from per-tool overrides): refused, never silently
    replaced, so the model learns it cannot choose them."""
    fixed = tool.meta.get("fixed_arguments") if tool.meta else None
    if not fixed:
        return []
    return [
        {"pointer": _pointer([name]), "message": f"{name!r} is set by the gateway's configuration; leave it out",
         "expected": "absent"}
        for name in fixed if name in arguments
    ]


class ArgumentCheck:
    """Validates call arguments against tools' schemas, one compiled validator per tool version."""

    def __init__(self) -> None:
        self._validators: OrderedDict[tuple[str, str], Any] = OrderedDict()

    def validate(self, tool: Tool, arguments: Mapping[str, Any]) -> dict[str, Any]:
        """A copy of ``arguments`` for the handler, or :class:`InvalidArguments` listing
        each problem with its JSON pointer and expected type."""
        arguments = dict(arguments)  # the handler gets its own copy
        problems = _fixed_given(tool, arguments)
        validator = self._validator(tool)
        try:
            errors = validator.iter_errors(arguments) if validator is not None else ()
            for err in sorted(errors, key=lambda e: [str(p) for p in e.path]):
                problems.extend(_problems(err))
                if len(problems) >= MAX_PROBLEMS:
                    break
            del problems[MAX_PROBLEMS:]
        except Exception as exc:  # the tool's own schema is broken (bad or unresolvable $ref, ...)
            self._skip(tool, f"{type(exc).__name__}: {str(exc)[:200]}")
            problems = _fixed_given(tool, arguments)
        if problems:
            summary = "; ".join(f"{p['pointer']}: {p['message']}" for p in problems[:3])
            raise InvalidArguments(f"invalid arguments for {tool.name}: {summary}", errors=problems)
        return arguments

    def _skip(self, tool: Tool, reason: str) -> None:
        """A schema that cannot be checked locally: calls go on unvalidated (the tool judges
        its arguments), and the operator is told once per tool version."""
        self._validators[(tool.name, tool.version)] = None
        log.warning("not validating arguments of %s: its input schema cannot be used (%s)", tool.name, reason)

    def _validator(self, tool: Tool) -> Any:
        key = (tool.name, tool.version)
        if key in self._validators:
            self._validators.move_to_end(key)
            return self._validators[key]
        import jsonschema  # ~40 ms to import: not on the start-up path, only when a call is validated
        from referencing import Registry

        schema = tool.input_schema
        try:
            cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
            cls.check_schema(schema)
            # An empty registry that retrieves nothing: a "$ref" to a URL is never fetched
            # (no request forgery, no hang on a URL that never answers); it is unresolvable,
            # and the schema is treated as unusable (see _skip).
            validator = cls(schema, format_checker=cls.FORMAT_CHECKER, registry=Registry())
        except Exception as exc:
            self._skip(tool, f"{type(exc).__name__}: {str(exc)[:200]}")
            return None
        self._validators[key] = validator
        if len(self._validators) > MAX_VALIDATORS:
            self._validators.popitem(last=False)
        return validator
