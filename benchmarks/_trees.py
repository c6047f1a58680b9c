"""Versions of the sources side by side, for benchmarks that compare them in one run."""

from __future__ import annotations

import contextlib
import json
import subprocess
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

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


def take_turns(workers: Mapping[str, subprocess.Popen[str]], chunks: Iterable[tuple[int, int]]) -> dict[str, list[Any]]:
    """Each worker answers ``chunk`` after chunk in turn (one ``"<start> <stop>"`` line in, one
    JSON list out), so a change of load on a shared machine hits every version alike; then
    their stdin is closed and they are waited for. ``{label: every chunk's items}``."""
    rows: dict[str, list[Any]] = {label: [] for label in workers}
    for start, stop in chunks:
        for label, worker in workers.items():
            assert worker.stdin is not None and worker.stdout is not None
            worker.stdin.write(f"{start} {stop}\n")
            worker.stdin.flush()
            rows[label] += json.loads(worker.stdout.readline())
    for worker in workers.values():
        assert worker.stdin is not None
        worker.stdin.close()
        worker.wait()
    return rows
