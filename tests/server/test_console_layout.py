"""The console at 1280 and 800 px (issue 34: headers broke mid-word, "serv/er",
"permissio/n"): scripts/console_screenshots.py opens ``toolscout console demo`` in headless
Chromium at both widths, takes docs/console.md's pictures, and fails when a table header
wraps or a word is split across two lines."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from _paths import ROOT

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (.ci/setup-services.sh)")
def test_no_table_breaks_a_word_at_1280_and_800_px(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "console_screenshots.py"), "--out", str(tmp_path)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache")},
    )
    assert done.returncode == 0 and "0 broken words" in done.stdout, done.stdout + done.stderr
    shots = sorted(p.name for p in tmp_path.glob("*.png"))
    assert shots == ["console-catalog-1280.png", "console-catalog-800.png", "console-search-1280.png", "console-search-800.png"]
