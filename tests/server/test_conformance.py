"""The official MCP conformance suite through ``toolscout serve`` (issue 27): every scenario
passes through the gateway, as it does against the fixture directly.

Runs where the fixture (``../shared/conformance``, or ``TOOLSCOUT_CONFORMANCE_FIXTURE``),
Node and the suite (.ci/setup-mcp.sh) exist; skipped otherwise. The fixture is installed
into a temporary folder, never into the repository. ``benchmarks/conformance.py`` runs the
same comparison (direct and through the gateway) and prints the figures.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from _paths import ROOT


def _runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("_conformance_runner", ROOT / "benchmarks" / "conformance.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


conformance = _runner()
pytestmark = pytest.mark.skipif(conformance.available() is not None, reason=str(conformance.available()))


def test_every_scenario_passes_through_toolscout_serve(tmp_path: Path) -> None:
    folder = conformance.install_fixture(tmp_path / "fixture")
    with conformance.fixture_server(folder) as upstream, conformance.gateway(upstream, folder) as url:
        results = conformance.run_suite(url)
    failed = [name for name, ok in results.items() if not ok]
    assert len(results) >= 30 and not failed, f"failed through the gateway: {failed}"
