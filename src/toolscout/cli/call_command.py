"""``toolscout call``: the library's second verb (``Gateway.execute``) from the shell, on a
catalog or on the upstream servers of a gateway config."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from ..access.approval import Decision
from ..context import CallContext
from ..errors import ToolscoutError
from ..gateway import Gateway
from ..request import CallRequest
from . import app
from ._console import out
from ._exits import USAGE, fail, fail_with
from ._hints import for_a_person
from .catalog_commands import load_catalog
from .serve_command import built, settings_of

if TYPE_CHECKING:
    from ..model import CallResult, Tool


@app.command()
def call(
    ctx: typer.Context,
    first: Annotated[str, typer.Argument(metavar="[CATALOG] TOOL", help="The catalog (not with --config), then the tool's name.")],
    second: Annotated[str | None, typer.Argument(metavar="", hidden=True)] = None,
    args: Annotated[
        str, typer.Option("--args", "-a", help="The arguments as one JSON object ('-' reads it from stdin).")
    ] = "{}",
    config: Annotated[
        Path | None, typer.Option("--config", "-c", help="Call a tool of this mcpServers config's upstreams.")
    ] = None,
    cache: Annotated[str | None, typer.Option("--cache", help="With --config: the tool-list cache file.")] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Approve a call that needs approval without asking.")] = False,
    timeout: Annotated[float, typer.Option(min=0.001, help="Seconds the call may take.")] = 60.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole result (content, structured, error) as JSON.")] = False,
) -> None:
    """Call one tool with JSON arguments, validated against its schema first; print its
    structured result as JSON, else its text. A call that needs approval (a dangerous tool)
    is asked for on a terminal, refused elsewhere unless --yes.

    \b
    Example: toolscout call demo weather_get_current --args '{"location": "Paris"}'
    """
    if config is None and second is None:
        raise fail("usage_error", "give CATALOG TOOL, or --config FILE TOOL", "toolscout call demo weather_get_current --args '{\"location\": \"Paris\"}'", status=USAGE)
    if config is not None and second is not None:
        raise fail("usage_error", f"--config names the tools' servers: give only TOOL, not {first!r} and {second!r}", status=USAGE)
    name = first if config is not None else second
    assert name is not None
    request = _request(name, sys.stdin.read() if args == "-" else args)
    context = CallContext(approve=_approver(yes), timeout=timeout)
    try:
        if config is not None:
            result = asyncio.run(_on_upstreams(ctx, request, context))
        else:
            result = asyncio.run(Gateway(load_catalog(first)).execute(request, context))
    except ToolscoutError as exc:
        raise fail_with(exc) from None
    _print(result, as_json)


def _request(name: str, text: str) -> CallRequest:
    try:
        arguments = json.loads(text)
    except json.JSONDecodeError as exc:
        raise fail("invalid_arguments", f"--args is not JSON: {exc}", "Pass one JSON object, e.g. --args '{\"path\": \"a.txt\"}'.") from None
    try:
        return CallRequest.parse(name, arguments)
    except ToolscoutError as exc:
        raise fail_with(exc) from None


def _approver(yes: bool) -> Any:
    """--yes approves; a person at a terminal is asked; a script is refused (and told how)."""

    def approve(tool: Tool, arguments: dict[str, Any]) -> Decision:
        if yes:
            return Decision(True)
        if not sys.stdin.isatty():
            return Decision(False, "no terminal to ask on; pass --yes to approve it")
        shown = json.dumps(arguments, ensure_ascii=False)
        kind = tool.effective_permission
        return Decision(typer.confirm(f"Run {tool.name} ({kind}) with {shown}?", err=True), "declined at the prompt")

    return approve


async def _on_upstreams(ctx: typer.Context, request: CallRequest, context: CallContext) -> CallResult:
    served = built(settings_of(ctx, only=("cache",), rules=False))
    aggregator = served.aggregator
    try:
        aggregator.load_cached()
        await aggregator.start(lazy=True)  # servers without a cached list are asked for it now
        return await served.gateway.execute(request, context)
    finally:
        await aggregator.aclose()


def _print(result: CallResult, as_json: bool) -> None:
    if as_json:
        out().print_json(json.dumps(result.to_dict(), ensure_ascii=False, default=str))
    elif result.ok:
        if result.structured is not None:
            if result.findings and result.content and isinstance(result.content[0], dict):
                typer.echo(str(result.content[0].get("text", "")))  # the screen's mark first, as on every surface
            out().print_json(json.dumps(result.structured, ensure_ascii=False, default=str))
        else:
            typer.echo(result.text())
    if result.error is not None:
        error = result.error
        raise fail(error.code, error.message, for_a_person(error.code, error.hint or "", error.details))
