"""Build ``catalog.json`` (the shipped demo catalog) from the specs in ``_spec``.

Run ``python -m toolscout.demo._build`` after editing a spec; ``tests/demo/test_demo_catalog.py``
fails when the JSON and the specs disagree.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..model import Annotations, Tool
from ._spec import KINDS, Service, Spec, business, collab, dev, infra, local, object_schema

CATALOG_PATH = Path(__file__).with_name("catalog.json")
_DEFAULTS: dict[str, Any] = {"searchable": True, "available": True, "defer": "automatic", "kind": "tool"}


def services() -> list[Service]:
    return [*collab.SERVICES, *dev.SERVICES, *business.SERVICES, *infra.SERVICES, *local.SERVICES]


def build_tool(service: Service, spec: Spec) -> Tool:
    read_only, destructive, idempotent, permission = KINDS[spec.kind]
    title = f"{service.title}: {spec.name.replace('_', ' ')}"
    display = {"en": title}
    descriptions: dict[str, str] = {}
    if spec.zh:
        display["zh-CN"], descriptions["zh-CN"] = spec.zh
    return Tool(
        f"{service.prefix}_{spec.name}",
        spec.description,
        object_schema(spec.params),
        source="demo",
        origin="toolscout.demo",
        category=service.category or service.prefix,
        tags=dict.fromkeys((*service.tags, *spec.tags)),
        annotations=Annotations(
            title=title,
            read_only=read_only,
            destructive=destructive,
            idempotent=idempotent,
            open_world=service.open_world,
        ),
        permission=permission,  # type: ignore[arg-type]
        searchable=spec.searchable,
        platforms=spec.platforms,
        defer=spec.defer or "automatic",
        display=display,
        descriptions=descriptions,
        meta={"service": service.title},
    )


def build() -> list[Tool]:
    return [build_tool(svc, spec) for svc in services() for spec in svc.tools]


def _compact(tool: Tool) -> dict[str, Any]:
    """``Tool.to_dict`` without the derived version and without fields left at defaults."""
    data = tool.to_dict()
    del data["version"]
    return {k: v for k, v in data.items() if v not in (None, [], {}) and _DEFAULTS.get(k, ...) != v}


def render() -> str:
    """One tool per line: compact on disk, readable in a diff."""
    lines = [json.dumps(_compact(t), ensure_ascii=False) for t in build()]
    return '{"format": 1, "tools": [\n' + ",\n".join(lines) + "\n]}\n"


if __name__ == "__main__":
    CATALOG_PATH.write_text(render(), encoding="utf-8")
    print(f"wrote {len(build())} tools to {CATALOG_PATH}")
