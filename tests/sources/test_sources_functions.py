"""Python functions as tools: schemas from hints, docs from docstrings, refused signatures."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any, Literal

import pytest
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from toolscout.catalog import Catalog
from toolscout.errors import DeclarationError, InvalidArguments
from toolscout.sources.functions import function_tool


class Address(BaseModel):
    street: str
    zip: str | None = None


class Options(TypedDict):
    verbose: bool


def google_style(channel: str, count: int = 3, unit: Literal["c", "f"] = "c") -> dict[str, int]:
    """Send a message to a channel.

    Longer explanation that stays in the description.

    Args:
        channel (str): Channel to post in,
            without the leading '#'.
        count: How many times.

    Returns:
        dict: ignored.
    """
    return {"sent": count}


def numpy_style(path: str, mode: str | None = None) -> None:
    """Open a file.

    Parameters
    ----------
    path : str
        Where the file is.
    mode : str, optional
        How to open it.
    """


def sphinx_style(query: str, limit: int = 10) -> list[str]:
    """Search documents.

    :param query: What to look for.
    :param int limit: At most this many.
    :returns: the hits.
    """
    return [query] * limit


def test_google_docstring_and_hints() -> None:
    tool, _ = function_tool(google_style)
    schema = tool.input_schema
    assert tool.description == "Send a message to a channel.\n\nLonger explanation that stays in the description."
    assert schema["required"] == ["channel"]
    assert schema["properties"]["channel"] == {
        "type": "string",
        "description": "Channel to post in, without the leading '#'.",
    }
    assert schema["properties"]["count"] == {"type": "integer", "default": 3, "description": "How many times."}
    assert schema["properties"]["unit"]["enum"] == ["c", "f"]
    assert "title" not in schema and "title" not in schema["properties"]["channel"]
    assert tool.output_schema == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert tool.origin == f"python:{__name__}.google_style"


def test_numpy_docstring_and_optional() -> None:
    tool, _ = function_tool(numpy_style)
    props = tool.input_schema["properties"]
    assert tool.description == "Open a file."
    assert props["path"]["description"] == "Where the file is."
    assert props["mode"]["description"] == "How to open it."
    assert {"type": "null"} in props["mode"]["anyOf"]
    assert tool.output_schema is None


def test_sphinx_docstring_and_wrapped_output() -> None:
    tool, handler = function_tool(sphinx_style)
    props = tool.input_schema["properties"]
    assert tool.description == "Search documents."
    assert props["query"]["description"] == "What to look for."
    assert props["limit"]["description"] == "At most this many."
    out = tool.output_schema
    assert out is not None and out["properties"]["result"]["type"] == "array"
    assert handler({"query": "x", "limit": 2}) == ["x", "x"]


def test_annotated_field_description_wins_over_docstring() -> None:
    def f(city: Annotated[str, Field(description="From Field")]) -> None:
        """Do it.

        Args:
            city: From docstring.
        """

    tool, _ = function_tool(f)
    assert tool.input_schema["properties"]["city"]["description"] == "From Field"


def test_pydantic_and_typeddict_parameters_are_coerced() -> None:
    seen: dict[str, Any] = {}

    def ship(to: Address, options: Options | None = None) -> str:
        """Ship a parcel."""
        seen["to"], seen["options"] = to, options
        return to.street

    tool, handler = function_tool(ship)
    schema = tool.input_schema
    assert set(schema["$defs"]) == {"Address", "Options"}
    assert schema["properties"]["to"] == {"$ref": "#/$defs/Address"}
    assert handler({"to": {"street": "Main St"}, "options": {"verbose": True}}) == "Main St"
    assert isinstance(seen["to"], Address) and seen["options"] == {"verbose": True}


def test_async_function_handler_returns_awaitable() -> None:
    async def fetch(url: str, retries: int = 1) -> list[int]:
        """Fetch a URL."""
        return [retries]

    tool, handler = function_tool(fetch)
    assert tool.input_schema["required"] == ["url"]
    result = handler({"url": "http://x", "retries": "4"})
    assert asyncio.iscoroutine(result)
    assert asyncio.run(result) == [4]


def test_handler_reports_bad_arguments() -> None:
    _, handler = function_tool(google_style)
    with pytest.raises(InvalidArguments) as info:
        handler({"channel": "x", "count": "many"})
    assert info.value.details["errors"][0]["path"] == "/count"


def test_parameter_names_that_clash_with_pydantic_still_work() -> None:
    def odd(schema: str, model_config: int = 1, _private: bool = False) -> str:
        """Odd names."""
        return f"{schema}{model_config}{_private}"

    tool, handler = function_tool(odd)
    assert set(tool.input_schema["properties"]) == {"schema", "model_config", "_private"}
    assert handler({"schema": "s", "model_config": 2}) == "s2False"


@pytest.mark.parametrize(
    ("source", "param"),
    [
        ("def f(*args): pass", "args"),
        ("def f(a, **kwargs): pass", "kwargs"),
        ("def f(a, /, b): pass", "a"),
    ],
)
def test_refused_signatures_name_the_parameter(source: str, param: str) -> None:
    scope: dict[str, Any] = {}
    exec(source, scope)
    with pytest.raises(DeclarationError) as info:
        function_tool(scope["f"])
    assert info.value.field == param
    assert info.value.hint


def test_lambda_needs_a_name_and_options_apply() -> None:
    with pytest.raises(DeclarationError):
        function_tool(lambda x: x)
    tool, _ = function_tool(
        lambda x: x, name="identity", description="Return x.", category="misc", tags=["a"], permission="read",
        annotations={"readOnlyHint": True},
    )
    assert (tool.name, tool.description, tool.category, tool.tags) == ("identity", "Return x.", "misc", ("a",))
    assert tool.annotations is not None and tool.annotations.read_only is True
    with pytest.raises(DeclarationError):
        function_tool(google_style, colour="red")


def test_catalog_decorator_registers_a_callable_tool() -> None:
    cat = Catalog()

    @cat.tool(category="chat")
    def shout(text: str) -> str:
        """Shout the text."""
        return text.upper()

    assert cat.get("shout").category == "chat"  # type: ignore[union-attr]
    assert cat.handler("shout")({"text": "hi"}) == "HI"  # type: ignore[misc]


def test_models_local_to_the_caller_resolve_under_postponed_annotations() -> None:
    class Point(BaseModel):  # local class, and this module uses `from __future__ import annotations`
        x: float
        y: float

    def move(to: Point) -> None:
        """Move the cursor."""

    tool, handler = function_tool(move)
    assert tool.input_schema["$defs"]["Point"]["required"] == ["x", "y"]
    assert handler({"to": {"x": 1, "y": 2}}) is None


def test_methods_callable_objects_and_partials() -> None:
    import functools

    class Store:
        def get(self, key: str, default: int = 0) -> int:
            """Read a value."""
            return default

        def __call__(self, query: str) -> str:
            """Query the store."""
            return query

    store = Store()
    tool, handler = function_tool(store.get)
    assert tool.input_schema["required"] == ["key"] and handler({"key": "k"}) == 0
    tool, handler = function_tool(store, name="store")
    assert tool.description == "Query the store." and handler({"query": "q"}) == "q"
    tool, handler = function_tool(functools.partial(google_style, count=2), name="twice")
    assert tool.input_schema["properties"]["count"]["type"] == "integer"
    assert tool.description.startswith("Send a message") and handler({"channel": "c"}) == {"sent": 2}
