"""The Python examples in docs/sources.md and docs/formats.md run and their asserts hold."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from _paths import DOCS

BLOCK = re.compile(r"```python\n(.*?)```", re.S)


def _examples() -> list[tuple[str, int, str]]:
    out = []
    for name in ("sources.md", "formats.md"):
        path = DOCS / name
        if path.exists():
            for i, code in enumerate(BLOCK.findall(path.read_text(encoding="utf-8"))):
                out.append((name, i, code))
    return out


@pytest.mark.parametrize(("doc", "index", "code"), _examples(), ids=lambda v: str(v)[:20])
def test_doc_example_runs(doc: str, index: int, code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    exec(compile(code, f"{doc}[{index}]", "exec"), {"__name__": f"doc_{index}"})
