"""toolscout itself, through the same path as ``toolscout eval``: ``ToolIndex.search`` with
AutoCut off (a full top 10, like the peers), plus ``Gateway.find_tools`` for the speed table
(the whole user-facing call: filters, ranking and rendering the schemas)."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _attach_hybrid(index: Any, cache: Path | None, **options: Any) -> None:
    """Register toolscout's hybrid mode (default MiniLM model), vectors kept in a store under
    ``cache`` across runs; raises when the ``[embed]`` extra is missing. ``options`` go to
    ``enable_hybrid`` (e.g. ``query_encoder``)."""
    from toolscout.search.hybrid import enable_hybrid
    from toolscout.storage import SQLiteStore as Store

    store = None
    if cache is not None:
        cache.mkdir(parents=True, exist_ok=True)
        store = Store(cache / "toolscout-vectors.db")
    enable_hybrid(index, "default", store=store, progress=False, **options)


def build(method: str, tools: list[dict[str, Any]], ctx: dict[str, Any]):
    from toolscout.catalog import Catalog
    from toolscout.eval import load_tools
    from toolscout.search.index import ToolIndex

    catalog = Catalog(load_tools(ctx["tools_path"])[: ctx["max_tools"]])
    if method == "toolscout-find_tools":
        from toolscout.gateway import Gateway

        gateway = Gateway(catalog)

        def find(query: str, k: int) -> list[str]:
            result = gateway.find_tools(query, k, search_type="keyword")
            return [t.name for t in result.found]

        return find
    index = ToolIndex(catalog)
    index.refresh()
    mode = "keyword"
    if method == "toolscout-hybrid":
        _attach_hybrid(index, ctx["cache"])
        mode = "hybrid"
    elif method.startswith("toolscout-hybrid-"):  # -int8, -model: another query encoder
        _attach_hybrid(index, ctx["cache"], query_encoder=method.removeprefix("toolscout-hybrid-"))
        mode = "hybrid"

    def search(query: str, k: int) -> list[str]:
        outcome = index.search(query, limit=k, mode=mode, autocut=False)
        return [h.tool.name for h in outcome.hits]

    return search
