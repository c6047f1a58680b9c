"""The tool scanner's findings are exactly what they were before it was made faster.

The scanner (security/poisoning.py, rules.py, scope.py) was sped up without changing what it
finds (issue 31: a 10k-tool catalog scanned in about a second of CPU). This test pins that:
a varied catalog built only from files in the repository (the demo catalog, the real-tool
sample, every poisoned tool, hard negative and batch under benchmarks/poisoning, and each
poisoned description moved into a parameter's description, default and enum, where other
checks run) is scanned, and every tool's findings must equal the ones recorded by the
detector as it was at commit 672a837, before the speedups
(tests/fixtures/security/scan_findings.json).

Regenerate the record only for a deliberate change of what the detector finds:
``PYTHONPATH=src:tests python tests/security/test_scan_equivalence.py --write``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from _paths import FIXTURES, ROOT
from toolscout.model import Tool

RECORD = FIXTURES / "security" / "scan_findings.json"
POISONING = ROOT / "benchmarks" / "poisoning"


def _rows(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    data = json.loads(path.read_text(encoding="utf-8"))
    return list(data["tools"] if isinstance(data, dict) else data)


def _tool(row: dict[str, Any], name: str, source: str) -> Tool:
    return Tool(name, row.get("description") or "", row.get("input_schema") or None, source=source,
                output_schema=row.get("output_schema") or None, descriptions=row.get("descriptions") or {})


def varied_catalog() -> list[list[Tool]]:
    """Groups of tools (a group is one source: its tools are each other's siblings)."""
    groups: list[list[Tool]] = []
    for path in [ROOT / "src" / "toolscout" / "demo" / "catalog.json", FIXTURES / "small_real" / "tools.json",
                 *sorted(POISONING.glob("*.jsonl"))]:
        rows = [r for r in _rows(path) if "name" in r and "result" not in r]
        by_source: dict[str, list[Tool]] = {}
        for i, row in enumerate(rows):
            source = f"{path.stem}/{row.get('source') or 'main'}"
            by_source.setdefault(source, []).append(_tool(row, f"{path.stem}_{i}_{row['name']}"[:64], source))
        groups.extend(by_source.values())
    moved = []  # each poisoned description where a parameter's text goes
    for i, row in enumerate(_rows(POISONING / "poisoned_tools.jsonl")):
        text = row.get("description") or ""
        schema = {"type": "object", "properties": {
            "note": {"type": "string", "description": text},
            "mode": {"type": "string", "default": text, "enum": ["fast", text]},
            "city": {"type": "string", "description": "The city to look up."},
        }}
        moved.append(Tool(f"moved_{i}", "Look up the weather for a city.", schema, source="moved"))
    groups.append(moved)
    return groups


def findings() -> dict[str, list[list[str]]]:
    from toolscout.security import Pins, Screen, findings_of

    out: dict[str, list[list[str]]] = {}
    for group in varied_catalog():
        for tool in Screen(Pins()).review(group, mode="warn"):
            out[tool.name] = [[f.code, f.severity, f.field, f.evidence] for f in findings_of(tool)]
    return out


def test_the_findings_on_a_varied_catalog_are_the_recorded_ones() -> None:
    recorded = json.loads(RECORD.read_text(encoding="utf-8"))
    now = findings()
    assert now.keys() == recorded.keys()
    assert sum(bool(v) for v in recorded.values()) >= 150  # the record holds many findings, of every kind
    assert len({f[0] for v in recorded.values() for f in v}) >= 12
    changed = {name: (recorded[name], found) for name, found in now.items() if found != recorded[name]}
    assert not changed, f"{len(changed)} tools' findings changed, e.g. {next(iter(changed.items()))}"


if __name__ == "__main__" and "--write" in sys.argv:
    RECORD.write_text(json.dumps(findings(), ensure_ascii=False, indent=0, sort_keys=True) + "\n", encoding="utf-8")
    print(f"wrote {RECORD}")
