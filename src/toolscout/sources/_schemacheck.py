"""Checking a declared input/output schema: a valid JSON Schema describing an object.

The meta-schema validator is built once per draft (``check_schema`` would rebuild it per
call), which keeps loading 100k declared tools fast.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from jsonschema import exceptions, validators

__all__ = ["schema_problem"]


@lru_cache(maxsize=8)
def _meta_validator(cls: type) -> Any:
    meta = cls.META_SCHEMA  # type: ignore[attr-defined]
    return validators.validator_for(meta)(meta)


def schema_problem(schema: Any, *, require_object: bool = True) -> str | None:
    """Why ``schema`` is not acceptable as a tool schema; None when it is.

    ``{}`` means "no parameters" and is accepted (callers normalise it).
    """
    if not isinstance(schema, Mapping):
        return f"must be a JSON Schema object, not {type(schema).__name__}"
    if not schema:
        return None
    cls = validators.validator_for(schema)
    error = exceptions.best_match(_meta_validator(cls).iter_errors(schema))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path)
        return f"is not a valid JSON Schema: {error.message}" + (f" (at /{where})" if where else "")
    if require_object and schema.get("type", "object" if "properties" in schema else None) != "object":
        return "must describe an object (\"type\": \"object\") at the top"
    return None
