"""The official MCP conformance suite through ``toolscout serve`` (issue 27): every scenario
passes through the gateway, as it does against the fixture directly.

Runs where the fixture (``../shared/conformance``, or ``TOOLSCOUT_CONFORMANCE_FIXTURE``),
Node and the suite (.ci/setup-mcp.sh) exist; skipped otherwise. The fixture is installed
into the system's temporary folder (once), never into the repository. ``benchmarks/conformance.py`` runs the
same comparison (direct and through the gateway) and prints the figures.
"""

from __future__ import annotations

import importlib.util
import tempfile
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


FIXTURE_DIR = Path(tempfile.gettempdir()) / "toolscout-conformance-fixture"
"""Outside the repository and kept between runs: npm installs the fixture's packages once."""


def test_every_scenario_passes_through_toolscout_serve() -> None:
    folder = conformance.install_fixture(FIXTURE_DIR)
    with conformance.fixture_server(folder) as upstream, conformance.gateway(upstream, folder) as url:
        results = conformance.run_suite(url)
    failed = [name for name, ok in results.items() if not ok]
    assert len(results) >= 30 and not failed, f"failed through the gateway: {failed}"
