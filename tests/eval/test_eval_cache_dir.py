"""``eval``'s vector cache lives where every other cache does: ``$XDG_CACHE_HOME/toolscout``
(it was fixed to ``~/.cache`` at import time, while ``search`` honoured the variable)."""

from __future__ import annotations

from pathlib import Path

import pytest

from _fake_embed import FakeEmbedder
from toolscout import Catalog
from toolscout.eval.compare import index_factory


def test_eval_vectors_go_under_xdg_cache_home_set_after_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    catalog = Catalog()
    catalog.add_definitions([{"name": "send_email", "description": "Send an email.", "input_schema": {"type": "object"}}])
    index = index_factory("hybrid", FakeEmbedder(dim=64))(catalog)
    index.refresh()
    assert (tmp_path / "xdg" / "toolscout" / "eval-vectors.db").is_file()
