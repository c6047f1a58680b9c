"""One exit-code rule for every command, and the helpers that print errors by it.

Like grep: 0 when the command did what was asked; 1 when it ran and found a problem (no tool
matched, an unknown tool name, a failed upstream, a high-severity finding); 2 when it could
not run as asked (a bad option value, an unreadable or empty input, a missing extra). Scripts
can then tell "fix the command" from "look at the answer" without parsing text.

Text that is not ours (tool names, queries, file paths, error messages) is printed as plain
text, never read as rich markup: ``[red]x`` or ``toolscout[embed]`` must reach the user whole.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from typer.core import TyperGroup

from ._console import err

if TYPE_CHECKING:
    from ..errors import ToolscoutError

__all__ = [
    "OK",
    "PROBLEM",
    "USAGE",
    "OneStyleGroup",
    "check_format",
    "check_writable",
    "choice",
    "exit_code",
    "fail",
    "fail_with",
    "kinds_counted",
    "plural",
    "warn",
]

OK = 0
PROBLEM = 1
USAGE = 2


@cache
def _classes() -> dict[str, type[ToolscoutError]]:
    """Error code -> the most general class using it (``invalid_request`` is RequestError's)."""
    from .. import errors  # pydantic, ~250 ms: off the path of --help and completion (cli/_lazy.py)

    found: dict[str, type[ToolscoutError]] = {}
    todo: list[type[ToolscoutError]] = [errors.ToolscoutError]
    while todo:
        cls = todo.pop(0)
        found.setdefault(cls.code, cls)
        todo.extend(cls.__subclasses__())
    return found


def exit_code(code: str) -> int:
    """USAGE for errors the user fixes in the command or its inputs (request and config
    errors), PROBLEM for everything else (lookups, upstream failures, policy)."""
    cls = _classes().get(code)
    usage = tuple(c for c in _classes().values() if c.code in ("invalid_request", "config_error"))
    return USAGE if cls is not None and issubclass(cls, usage) else PROBLEM


LAST_FAILURE: list[tuple[str, str, str]] = []
"""The last failure :func:`fail` printed (code, message, hint): ``serve`` on stdio repeats it
to the MCP client that started it (see ``_stdio_refusal``)."""


def fail(code: str, message: str, hint: str = "", *, status: int | None = None) -> typer.Exit:
    """Print ``code: message`` and the hint on stderr; return the Exit to raise (its status
    from :func:`exit_code` unless given)."""
    from rich.text import Text

    LAST_FAILURE[:] = [(code, message, hint)]
    line = Text(code, style="red")
    line.append(f": {message}")
    err().print(line, soft_wrap=True, highlight=False)
    if hint:
        err().print(Text(hint), soft_wrap=True, highlight=False)
    return typer.Exit(exit_code(code) if status is None else status)


def fail_with(exc: ToolscoutError) -> typer.Exit:
    from ._hints import for_a_person  # the error classes (pydantic): loaded once an error exists

    return fail(exc.code, exc.message, for_a_person(exc.code, exc.hint, exc.details))


def warn(message: str) -> None:
    """A warning on stderr: the command still does what was asked."""
    from rich.text import Text

    line = Text("warning", style="yellow")
    line.append(f": {message}")
    err().print(line, soft_wrap=True, highlight=False)


def kinds_counted(entries: Iterable[Any]) -> str:
    """``316 tools, 2 skills, 2 agents``: a catalog's entries by kind (skills and agents are
    found only when a search asks for them, so a bare total would mislead)."""
    from collections import Counter

    kinds = Counter(getattr(e, "kind", "tool") for e in entries)
    return ", ".join(plural(n, kind) for kind, n in kinds.most_common()) or plural(0, "tool")


def plural(n: int, word: str, many: str | None = None) -> str:
    """``1 tool``, ``2 tools``; ``many`` for irregular plurals (``match`` -> ``matches``)."""
    return f"{n:,} {word if n == 1 else many or word + 's'}"


def choice(values: Iterable[str], *, optional: bool = False) -> Callable[[str | None], str | None]:
    """An option callback that accepts only ``values`` (a usage error, status 2, otherwise);
    unlike click.Choice it keeps help text ours and lets the list come from the library."""
    allowed = tuple(values)

    def check(value: str | None) -> str | None:
        if value is None and optional:
            return None
        if value not in allowed:
            raise typer.BadParameter(f"{value!r}; use one of: {', '.join(allowed)}")
        return value

    return check


def check_format(value: str | None) -> str | None:
    """One of the format names ``--help`` lists, or a usage error: the library's aliases
    (``claude``) stay out of the CLI so that what help lists is what the CLI takes; a known
    alias is refused with the name it stands for."""
    from .. import formats  # the renderers and their models: only for a command that takes --format

    if value is None or value in formats.FORMATS:
        return value
    try:
        meant = formats.renderer(value)
    except _classes()["invalid_request"]:
        meant = None
    name = next((n for n in formats.FORMATS if formats.renderer(n) is meant), None) if meant else None
    also = f" ({value!r} is {name!r})" if name else ""
    raise typer.BadParameter(f"{value!r}; use one of: {', '.join(formats.FORMATS)}{also}")


def check_writable(path: Path | None) -> Path | None:
    """Fail before the work, not after it: an output file whose folder is missing or
    read-only would otherwise only be noticed once a long run has finished."""
    if path is None:
        return None
    parent = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise typer.BadParameter(f"{str(path)!r} is a directory")
    if not parent.is_dir():
        raise typer.BadParameter(f"folder {str(parent)!r} does not exist")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise typer.BadParameter(f"{str(path)!r} is not writable")
    return path


def _click_class(name: str) -> type[Exception]:
    """typer ships its own copy of click; its exception classes are reached through the
    public ``typer.BadParameter`` rather than a private module path."""
    return next(c for c in typer.BadParameter.__mro__ if c.__name__ == name)


_UsageError = _click_class("UsageError")
_ClickException = _click_class("ClickException")


_EXAMPLE = re.compile(r"\n\s*\x08\n(\s*Example: .*)$", re.S)
"""A docstring's last paragraph, ``\\b`` (keep as written) then ``Example: ...``."""


def example_last(cmd: Any) -> Any:
    """Move ``cmd``'s example from its help text to its epilog, so ``--help`` ends with it
    (after the options) while the docstring keeps it next to the description."""
    found = _EXAMPLE.search(cmd.help or "")
    if found is not None and not cmd.epilog:
        cmd.help = cmd.help[: found.start()].rstrip()
        cmd.epilog = "\x08\n" + "\n".join(line.strip() for line in found.group(1).strip().splitlines())
    return cmd


class OneStyleGroup(TyperGroup):
    """The command group that prints click's own errors (a missing argument, a bad option
    value, an unknown command) as ``usage_error: message`` plus a hint, like every error of
    ours, instead of click's ``Usage: ... Error: ...`` block: one style a script can parse.
    Every command's help ends with its example (:func:`example_last`)."""

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        found = super().get_command(ctx, cmd_name)
        return example_last(found) if found is not None else None

    def format_help(self, ctx: Any, formatter: Any) -> None:
        example_last(self)
        super().format_help(ctx, formatter)

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        try:
            done = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except _UsageError as exc:
            if not standalone_mode:
                raise
            if type(exc).__name__ == "NoArgsIsHelpError":  # the help itself, not an error
                print(exc.format_message(), file=sys.stderr)  # type: ignore[attr-defined]
                raise SystemExit(USAGE) from None
            ctx = getattr(exc, "ctx", None)
            where = ctx.command_path if ctx is not None else "toolscout"
            usage = ctx.get_usage().strip() + "; " if ctx is not None else ""
            hint = f"{usage}'{where} --help' says more."
            raise SystemExit(fail("usage_error", exc.format_message(), hint, status=USAGE).exit_code) from None
        except _ClickException as exc:  # a file option that cannot be opened, ...
            if not standalone_mode:
                raise
            raise SystemExit(fail("usage_error", exc.format_message(), status=USAGE).exit_code) from None  # type: ignore[attr-defined]
        except typer.Abort:
            if not standalone_mode:
                raise
            print("aborted", file=sys.stderr)
            raise SystemExit(PROBLEM) from None
        if not standalone_mode:
            return done
        raise SystemExit(done if isinstance(done, int) else OK)
