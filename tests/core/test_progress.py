"""Long work reports progress through one listener (issue 24, item 5): silent by default off
a terminal, a rich bar on stderr on one, anything a caller installs otherwise."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest

from _paths import FIXTURES
from toolscout import progress
from toolscout.eval import run_eval


class Recorder:
    def __init__(self) -> None:
        self.events: list[tuple[str, object]] = []

    def __call__(self, label: str, total: int | None) -> Recorder:
        self.events.append(("start", (label, total)))
        return self

    def advance(self, n: int) -> None:
        self.events.append(("advance", n))

    def close(self) -> None:
        self.events.append(("close", None))


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    seen = Recorder()
    previous = progress.set_reporter(seen)
    yield seen
    progress.set_reporter(previous)


def test_an_evaluation_reports_each_query(recorder: Recorder) -> None:
    report = run_eval(FIXTURES / "eval_small", search_type="keyword")
    kinds = [kind for kind, _ in recorder.events]
    assert kinds[0] == "start" and kinds[-1] == "close"
    label, total = recorder.events[0][1]
    assert total == report.overall.queries == 4 and "4 queries" in label
    assert sum(n for kind, n in recorder.events if kind == "advance") == 4


def test_no_listener_means_nothing_is_reported() -> None:
    previous = progress.set_reporter(None)
    try:
        with progress.step("quiet", total=3) as advance:
            advance(3)  # a no-op, not an error
    finally:
        progress.set_reporter(previous)


STEP = textwrap.dedent(
    """
    from toolscout import progress
    progress.DELAY_S = 0.0
    with progress.step("embedding 9 tools", total=9) as advance:
        advance(9)
    print("done")
    """
)


def test_the_default_bar_is_drawn_on_a_terminal_stderr_only() -> None:
    piped = subprocess.run([sys.executable, "-c", STEP], capture_output=True, text=True, timeout=60)
    assert piped.stdout == "done\n" and piped.stderr == ""  # stderr a pipe: nothing drawn
    primary, secondary = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", STEP], stdout=subprocess.PIPE, stderr=secondary, env={**os.environ, "COLUMNS": "80"})
    os.close(secondary)
    out, _ = proc.communicate(timeout=60)
    drawn = b""
    while True:
        try:
            chunk = os.read(primary, 65536)
        except OSError:
            break
        if not chunk:
            break
        drawn += chunk
    os.close(primary)
    assert out == b"done\n" and b"embedding 9 tools" in drawn


def test_a_gateway_with_embeddings_reports_loading_the_model_and_embedding_its_tools(recorder: Recorder) -> None:
    """Issue 34: a reporter saw no step during ``Gateway(embeddings=...)`` (a 316-tool catalog
    was under the old 512-text threshold, and loading the model was no step at all)."""
    from _fake_embed import FakeEmbedder
    from toolscout import Catalog, Gateway

    catalog = Catalog()
    catalog.add_definitions([{"name": f"tool_{i}", "description": f"Does thing number {i}.", "input_schema": {"type": "object"}} for i in range(20)])
    gateway = Gateway(catalog, embeddings=FakeEmbedder(dim=64))
    gateway.find_tools("thing number 3", search_type="hybrid")
    starts = [event for kind, event in recorder.events if kind == "start"]
    assert ("loading the embedding model", None) in starts
    assert any(label.startswith("embedding 20 tools") and total == 20 for label, total in starts)
    assert sum(1 for kind, _ in recorder.events if kind == "close") == len(starts)  # every step ends
