"""Where the tests' shared inputs live, named once so a test's folder depth never matters."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
DOCS = ROOT / "docs"
EXAMPLES = ROOT / "examples"
FIXTURES = TESTS / "fixtures"
