"""Python callables as tools: JSON Schema from type hints, descriptions from the docstring.

``function_tool(fn)`` builds the argument schema with pydantic, so anything pydantic
understands works as a parameter type (``Optional``, ``Literal`` -> ``enum``, pydantic
models and TypedDicts as nested objects under ``$defs``, ``Annotated[..., Field(...)]``).
Only keyword-bindable signatures are accepted: ``*args``, ``**kwargs`` and positional-only
parameters are refused, because a model passes one JSON object of named arguments.

The handler re-validates the arguments through the same pydantic model, so the function
receives coerced values (a dict becomes the model instance its signature asks for).
"""

from __future__ import annotations

import functools
import inspect
import sys
import types
import typing
from collections.abc import Callable, Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, create_model
from pydantic.fields import FieldInfo

from ..errors import DeclarationError, InvalidArguments
from ..model import Annotations, Tool
from ._docstring import parse_docstring

__all__ = ["function_tool"]

Handler = Callable[[dict[str, Any]], Any]
_TOOL_OPTIONS = {"name", "description", "category", "tags", "annotations", "permission", "defer",
                 "searchable", "available", "platforms", "meta", "display", "descriptions",
                 "output_schema", "source_id"}
_NO_OUTPUT = (Any, None, type(None), inspect.Signature.empty)


def function_tool(fn: Callable[..., Any], **options: Any) -> tuple[Tool, Handler]:
    """Describe ``fn`` as a :class:`Tool` and return it with a handler that calls it."""
    unknown = set(options) - _TOOL_OPTIONS
    if unknown:
        raise DeclarationError(f"unknown tool option(s) {sorted(unknown)} for {fn!r}", field=sorted(unknown)[0])
    name = options.pop("name", None) or getattr(fn, "__name__", None)
    if not name or name == "<lambda>":
        raise DeclarationError(f"{fn!r} has no usable name", field="name", hint="Pass name='...'.")
    origin = f"python:{getattr(fn, '__module__', None) or '?'}.{getattr(fn, '__qualname__', name)}"
    doc = parse_docstring(inspect.getdoc(_target(fn)))
    model, params = _arguments_model(fn, name, doc.params, origin)
    schema = _clean(model.model_json_schema(by_alias=True))
    schema.setdefault("properties", {})
    output = options.pop("output_schema", None) or _output_schema(fn)
    annotations = options.pop("annotations", None)
    if isinstance(annotations, Mapping):
        annotations = Annotations.from_mcp(annotations)
    tool = Tool(
        name,
        options.pop("description", None) or doc.description,
        schema,
        output_schema=output,
        source="python",
        origin=origin,
        annotations=annotations,
        **options,
    )
    return tool, _handler(fn, model, params, name)


def _target(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The function whose annotations and docstring describe ``fn`` (partials, callables)."""
    while isinstance(fn, functools.partial):
        fn = fn.func
    if inspect.isfunction(fn) or inspect.ismethod(fn) or inspect.isclass(fn):
        return fn
    return getattr(fn, "__call__", fn)  # noqa: B004


def _hints(fn: Callable[..., Any]) -> dict[str, Any]:
    target = _target(fn)
    try:
        return typing.get_type_hints(target, include_extras=True)
    except Exception:
        pass
    # String annotations naming classes local to the caller (a function defining its own
    # models): resolve them in the namespace of the first frame outside toolscout.
    frame = sys._getframe(1)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("toolscout"):
        frame = frame.f_back  # type: ignore[assignment]
    try:
        return typing.get_type_hints(target, localns=dict(frame.f_locals) if frame else None, include_extras=True)
    except Exception:  # still unresolvable: raw annotations (pydantic reports what is missing)
        return dict(getattr(target, "__annotations__", {}) or {})


def _arguments_model(
    fn: Callable[..., Any], name: str, docs: Mapping[str, str], origin: str
) -> tuple[type[BaseModel], list[tuple[str, str]]]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise DeclarationError(f"cannot read the signature of {origin}: {exc}") from exc
    hints = _hints(fn)
    fields: dict[str, Any] = {}
    params: list[tuple[str, str]] = []  # (field name, parameter name)
    for i, (pname, param) in enumerate(sig.parameters.items()):
        kind = param.kind
        if kind is param.VAR_POSITIONAL or kind is param.VAR_KEYWORD:
            star = "*" if kind is param.VAR_POSITIONAL else "**"
            raise DeclarationError(
                f"{origin} takes {star}{pname}; a tool needs named parameters only",
                field=pname,
                hint="Replace it with explicit keyword parameters (or a pydantic model parameter).",
            )
        if kind is param.POSITIONAL_ONLY:
            raise DeclarationError(
                f"{origin} has positional-only parameter '{pname}'; a tool's arguments are named",
                field=pname,
                hint="Remove the '/' from the signature.",
            )
        annotation = hints.get(pname, Any)
        desc = docs.get(pname)
        info = FieldInfo.from_annotation(annotation) if _has_field(annotation) else None
        extra: dict[str, Any] = {"alias": pname}
        if desc and not (info and info.description):
            extra["description"] = desc
        field_name = f"f{i}"
        if param.default is param.empty:
            fields[field_name] = (Annotated[annotation, Field(**extra)], ...)
        else:
            fields[field_name] = (Annotated[annotation, Field(**extra)], param.default)
        params.append((field_name, pname))
    try:
        model = create_model(  # type: ignore[call-overload]
            f"{name}_arguments",
            __config__=ConfigDict(arbitrary_types_allowed=True, populate_by_name=False, extra="ignore"),
            **fields,
        )
        model.model_json_schema(by_alias=True)
    except Exception as exc:
        raise DeclarationError(
            f"cannot build a JSON Schema for {origin}: {exc}",
            hint="Use JSON-friendly parameter types (str, int, lists, dicts, pydantic models).",
        ) from exc
    return model, params


def _has_field(annotation: Any) -> bool:
    return typing.get_origin(annotation) is Annotated and any(
        isinstance(m, FieldInfo) for m in typing.get_args(annotation)[1:]
    )


def _output_schema(fn: Callable[..., Any]) -> dict[str, Any] | None:
    ret = _hints(fn).get("return", inspect.Signature.empty)
    if inspect.iscoroutinefunction(fn) and typing.get_origin(ret) in (typing.Awaitable, typing.Coroutine):
        ret = typing.get_args(ret)[-1]
    if any(ret is x for x in _NO_OUTPUT) or ret is types.NoneType:
        return None
    try:
        schema = _clean(TypeAdapter(ret).json_schema())
    except Exception:
        return None
    if schema.get("type") == "object":
        return schema
    defs = schema.pop("$defs", None)
    wrapped: dict[str, Any] = {
        "type": "object",
        "properties": {"result": schema},
        "required": ["result"],
        "x-toolscout-wrap-result": True,
    }
    if defs:
        wrapped["$defs"] = defs
    return wrapped


def _clean(schema: Any) -> Any:
    """Drop pydantic's auto-generated ``title`` keywords (they only cost tokens)."""
    if isinstance(schema, dict):
        out = {}
        for key, value in schema.items():
            if key == "title" and isinstance(value, str):
                continue
            if key in ("properties", "$defs", "definitions") and isinstance(value, dict):
                out[key] = {k: _clean(v) for k, v in value.items()}
            else:
                out[key] = _clean(value)
        return out
    if isinstance(schema, list):
        return [_clean(v) for v in schema]
    return schema


def _handler(fn: Callable[..., Any], model: type[BaseModel], params: list[tuple[str, str]], name: str) -> Handler:
    def handle(arguments: dict[str, Any]) -> Any:
        try:
            validated = model.model_validate(arguments or {})
        except ValidationError as exc:
            problems = [
                {"path": "/" + "/".join(str(p) for p in err["loc"]), "message": err["msg"]}
                for err in exc.errors(include_url=False)
            ]
            raise InvalidArguments(f"invalid arguments for '{name}'", errors=problems) from None
        kwargs = {pname: getattr(validated, fname) for fname, pname in params}
        return fn(**kwargs)

    handle.__name__ = f"handle_{name}"
    handle.__doc__ = f"Validate arguments and call {getattr(fn, '__qualname__', name)}."
    return handle
