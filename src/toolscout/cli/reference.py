"""docs/cli.md, generated from the commands' own help (by typer's Markdown generator) so the
page cannot drift from the CLI.

    python -m toolscout.cli.reference > docs/cli.md

tests/cli/test_cli_reference.py fails when the page is stale, and when a command lacks help or an
``Example:`` line that parses.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer
from typer.cli import get_docs_for_click

from . import app
from ._exits import example_last

WIDTH = 100
"""Help is rendered this wide for the page (a terminal's width would make it machine-dependent)."""

INTRO = """\
# Command-line reference

<!-- Generated from the commands' --help by `python -m toolscout.cli.reference > docs/cli.md`.
     Do not edit by hand: tests/cli/test_cli_reference.py fails when this page is stale. -->

Every command is one library call. `CATALOG` is a declaration file (YAML, JSON, JSONL), a store
file, a directory holding `tools.jsonl`, a `postgresql://` store, or `demo` (the bundled catalog).
Results go to stdout and errors to stderr as `code: message` followed by a hint, so `--json`
output can be piped. Text from catalogs, queries and paths is printed verbatim: square brackets
are never read as terminal markup.

## Exit codes

One rule for every command, the one `grep` uses:

| status | meaning | for example |
|---|---|---|
| 0 | the command did what was asked | results printed; a warning on stderr (such as `--embed` without the `[embed]` extra) does not change it |
| 1 | it ran and found a problem | `no_match` in `search`, `unknown_tool` in `show`, a failed upstream in `servers`, a high-severity finding in `audit` |
| 2 | it could not run as asked | an unknown `--format` or `--type`, a value out of range (`--limit 0`, `--port 99999`), a missing, unreadable or empty catalog, an unwritable `--run-out`/`--plot` folder, an unknown `--split`, a missing extra, a malformed file, an empty query, an invalid regex |

Status 2 is what the library reports as a request or configuration error (`RequestError`,
`ConfigError`); status 1 is a lookup, upstream or policy outcome. Options are checked before any
work starts, so a bad output path fails at once rather than after a long evaluation.

Errors of the command line itself (a missing argument, an unknown option or command, a value
out of range) take the same form, `usage_error: message` plus a hint, with status 2. `serve`
on a port another process holds exits 2 with one line, `address_in_use: ...`, before printing
anything else.

## Output for people and for scripts

On a terminal, tables are boxed and fitted to its width. Piped or redirected, the same rows
print plain: a title line, a header and one line per row, nothing wrapped or boxed, so
`| grep`, `| cut` and log files see whole tool names and sentences. Wherever a table is printed
(`search`, `tokens`, `eval`, `servers`), `--nl` prints one JSON object per row
(newline-delimited JSON) and `--csv` prints CSV with a header row; `--json` prints the whole
result. `search` reports the search's own time in its title and the one-off load and index
build on a line of its own.

Long work (embedding a catalog, `eval`, `catalog sync`) draws a progress bar on stderr when
stderr is a terminal and the step has run about a second; nothing is drawn into a pipe or a
log. `serve` logs one line per event (`12:04:05 warning mcp: upstream ...`), or one JSON object
per line with `--log-json` (`ts`, `level`, `logger`, `message`, `error`).

## Calling a tool, installing into a client, completion

`toolscout call CATALOG TOOL --args JSON` runs one tool the way `Gateway.execute` does:
arguments checked against the tool's schema, errors as `code: message` (status 2 for invalid
arguments, 1 when the tool fails or is unknown). With `--config servers.json` instead of a
CATALOG it calls a tool of the gateway's upstreams. A tool that needs approval (kind
`dangerous`) is asked for on a terminal and refused elsewhere unless `--yes`.

`toolscout install CLIENT --config servers.json` adds the gateway to an MCP client's config:

| CLIENT | file | key |
|---|---|---|
| `claude-desktop` | macOS `~/Library/Application Support/Claude/claude_desktop_config.json`, Windows `%APPDATA%\\Claude\\claude_desktop_config.json`, Linux `~/.config/Claude/claude_desktop_config.json` | `mcpServers` |
| `cursor` | `~/.cursor/mcp.json` | `mcpServers` |
| `vscode` | `.vscode/mcp.json` in the current folder | `servers` |
| `claude-code` | `.mcp.json` in the current folder (project scope) | `mcpServers` |

The file is merged (other servers and keys stay), the previous one is kept as `<file>.bak`,
`--dry-run` prints the change as a diff and writes nothing, `--name` names the entry and
`--file` writes another path. Restart the client afterwards.

Shell completion: `toolscout --install-completion` (bash, zsh, fish, PowerShell) adds it to
your shell's startup file; `toolscout --show-completion` prints the script instead.

`CATALOG` may also be a gateway's tool-list cache (`serve --cache FILE`, by default
`$XDG_CACHE_HOME/toolscout/mcp-<config>-<hash of the config's full path>.db`, which
`toolscout servers -c servers.json` names on its last line): `toolscout search FILE
"query"` searches the upstream servers' tools as last listed, with no server running (named
`{server}_{tool}`).

## Defaults

`search`, `tokens` and `demo` all default to `--format openai`: Chat Completions is the format
most hosts speak, and the only one whose o200k token counts are exact rather than estimates.
`search` shows each tool by the name the model sees in that format and what its definition
costs in tokens. Tool search pays off from about 15 tools: below that the meta-tools cost more
than the whole list, and `tokens` says so.

## Commands
"""


def _root() -> Any:
    return typer.main.get_command(app)


def commands() -> Iterator[tuple[str, Any]]:
    """Every command and group as (``toolscout ...`` path, command), in help order. Commands
    are typer's own click objects (typer vendors click), so groups are told by duck typing."""

    def walk(path: str, cmd: Any) -> Iterator[tuple[str, Any]]:
        yield path, cmd
        if hasattr(cmd, "list_commands"):
            ctx = typer.Context(cmd, info_name=path)
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None and not sub.hidden:
                    yield from walk(f"{path} {name}", sub)

    yield from walk("toolscout", _root())


def help_text(path: str, cmd: Any, width: int = WIDTH) -> str:
    """``path --help`` as plain text, ``width`` columns wide."""
    ctx = typer.Context(cmd, info_name=path, terminal_width=width, max_content_width=width)
    return cmd.get_help(ctx)


def render() -> str:
    """The whole of docs/cli.md: the intro, then typer's own Markdown for every command
    (``typer.cli``'s generator, the one ``typer ... utils docs`` runs), its headings moved
    under "Commands"."""
    root = example_last(_root())
    ctx = typer.Context(root, info_name="toolscout", terminal_width=WIDTH, max_content_width=WIDTH)
    generated = get_docs_for_click(obj=root, ctx=ctx, name="toolscout")
    lines, fenced = [], False
    for line in generated.replace("\x08", "").strip().splitlines():  # \b: click's keep-as-is mark
        fenced ^= line.startswith("```")
        lines.append("#" + line if line.startswith("#") and not fenced else line)
    return INTRO + "\n" + "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render(), end="")
