"""Tables the way sqlite-utils prints them: boxed for a person at a terminal, plain and
unwrapped for a pipe, CSV (``--csv``) or one JSON object per row (``--nl``) for a script.

A boxed table squeezed into 80 columns splits tool names and sentences across lines (rich
cannot measure a pipe, so it assumes 80): ``grep``, ``cut`` and a log file then see half a
name. So a command describes its rows once (:class:`Grid`) and :func:`emit` picks the form.
"""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any

import typer

from ._console import out

__all__ = ["Column", "CsvOpt", "Grid", "NlOpt", "emit"]

NlOpt = Annotated[bool, typer.Option("--nl", help="Print one JSON object per row (newline-delimited JSON).")]
CsvOpt = Annotated[bool, typer.Option("--csv", help="Print the rows as CSV with a header row.")]


@dataclass(frozen=True)
class Column:
    """``key`` names the value in ``--nl``/``--csv``; ``label`` heads the table; ``show``
    turns a value into the table's text (``--nl`` keeps the value itself)."""

    key: str
    label: str = ""
    right: bool = False
    show: Callable[[Any], str] = str
    style: str | None = None


@dataclass
class Grid:
    columns: Sequence[Column]
    rows: list[Sequence[Any]] = field(default_factory=list)
    title: str = ""
    notes: list[str] = field(default_factory=list)


def emit(grid: Grid, *, nl: bool = False, as_csv: bool = False) -> None:
    if nl:
        for row in grid.rows:
            typer.echo(json.dumps({c.key: v for c, v in zip(grid.columns, row, strict=True)}, ensure_ascii=False))
        return
    if as_csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow([c.key for c in grid.columns])
        writer.writerows([["" if v is None else v for v in row] for row in grid.rows])
        return
    if out().is_terminal:
        _boxed(grid)
    else:
        _plain(grid)


def _cells(grid: Grid) -> list[list[str]]:
    return [[" ".join(c.show(v).split()) if v is not None else "" for c, v in zip(grid.columns, row, strict=True)] for row in grid.rows]


def _plain(grid: Grid) -> None:
    """A title line, a header and one line per row with columns padded to line up; nothing
    wrapped, nothing boxed (tab-free, so ``column -t`` or ``awk`` read it too)."""
    header = [c.label or c.key for c in grid.columns]
    cells = _cells(grid)
    widths = [max(len(r[i]) for r in [header, *cells]) for i in range(len(header))]

    def line(values: Sequence[str]) -> str:
        parts = [
            v.rjust(w) if c.right else (v if i == len(values) - 1 else v.ljust(w))
            for i, (c, v, w) in enumerate(zip(grid.columns, values, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    lines = [grid.title] if grid.title else []
    lines += [line(header), *(line(r) for r in cells), *grid.notes]
    typer.echo("\n".join(lines))


def _boxed(grid: Grid) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(grid.title) if grid.title else None, caption=Text("\n".join(grid.notes)) if grid.notes else None)
    for c in grid.columns:
        table.add_column(c.label or c.key, justify="right" if c.right else "left", style=c.style, overflow="fold")
    for row in grid.rows:
        table.add_row(*(Text(c.show(v) if v is not None else "") for c, v in zip(grid.columns, row, strict=True)))
    out().print(table)
