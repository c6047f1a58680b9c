"""Adapters import their SDK only when used, and name the pip extra when it is missing."""

from __future__ import annotations

import importlib
import importlib.metadata
import subprocess
import sys

import pytest

from _session_fixtures import build_session
from toolscout.errors import MissingExtra


def test_importing_adapters_does_not_import_sdks() -> None:
    code = (
        "import sys\n"
        "import toolscout.adapters.openai, toolscout.adapters.anthropic\n"
        "import toolscout.adapters.gemini, toolscout.adapters.langchain\n"
        "print(sorted(m for m in ('openai', 'anthropic', 'google.genai', 'langchain_core') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolscout.adapters.gemini import GeminiAdapter

    real = importlib.import_module

    def fake(name: str) -> object:
        if name.startswith("google"):
            raise ImportError(name)
        return real(name)

    monkeypatch.setattr(importlib, "import_module", fake)
    with pytest.raises(MissingExtra) as info:
        GeminiAdapter(build_session()).tools()
    assert info.value.hint == "pip install 'toolscout[gemini]'"
