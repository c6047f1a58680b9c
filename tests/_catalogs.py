"""``catalog_of(tools, fillers=n)``: a small catalog for ranking tests, each tool answering
``"<name> done"``, padded with ``n`` unrelated look-up tools so the scores have a background."""

from __future__ import annotations

from collections.abc import Iterable

from toolscout import Catalog, Tool

OBJ = {"type": "object"}


def catalog_of(tools: Iterable[tuple[str, str]], *, fillers: int = 0) -> Catalog:
    cat = Catalog()
    for name, text in tools:
        cat.add(Tool(name, text, OBJ), handler=lambda a, n=name: f"{n} done")
    for i in range(fillers):
        cat.add(Tool(f"filler_{i}", f"Look up warehouse record {i}.", OBJ), handler=lambda a: "ok")
    return cat
