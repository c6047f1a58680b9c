"""Versions of the sources side by side, for benchmarks that compare them in one run."""

from __future__ import annotations

import contextlib
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def checked_out(versions: Mapping[str, str]) -> Iterator[dict[str, Path]]:
    """``{label: src folder}`` for ``{label: git revision}`` (``HEAD``: this tree as it is),
    each other revision in a temporary worktree removed on exit."""
    sources: dict[str, Path] = {}
    trees: list[Path] = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            for label, rev in versions.items():
                if rev == "HEAD":
                    sources[label] = ROOT / "src"
                    continue
                tree = Path(tmp) / f"tree-{label}"
                subprocess.run(["git", "worktree", "add", "--detach", str(tree), rev], cwd=ROOT, capture_output=True, check=True)
                trees.append(tree)
                sources[label] = tree / "src"
            yield sources
        finally:
            for tree in trees:
                subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True, check=False)
