"""The Python examples in docs/store.md and docs/demo.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from _paths import DOCS


def blocks(name: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / name).read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("name", ["store.md", "demo.md"])
def test_doc_examples_run(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the examples write tools.db and not-a-store.db here
    found = blocks(name)
    assert found
    for code in found:
        exec(compile(code, f"docs/{name}", "exec"), {})
