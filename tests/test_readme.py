"""The README's library example runs and prints what its comments say."""

import contextlib
import io
import re
import shlex

import pytest
import typer
from typer.testing import CliRunner

from _paths import ROOT
from toolscout.cli import app

README = ROOT / "README.md"


def test_library_example_runs():
    block = re.search(r"## Use it as a library\n\n```python\n(.*?)```", README.read_text(), re.S)
    assert block is not None
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block.group(1), "README.md", "exec"), {})
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("get_forecast ")
    assert lines[1] == "True {'city': 'Lisbon', 'days': 3, 'forecast': 'sunny'}"
    assert lines[2:] == ["invalid_arguments", "empty_query"]


def _block(after: str, lang: str) -> str:
    found = re.search(re.escape(after) + r".*?```" + lang + r"\n(.*?)```", README.read_text(), re.S)
    assert found is not None, after
    return found.group(1)


def test_the_gateway_sample_config_runs_its_declaration(tmp_path, monkeypatch):
    """The README's gateway config and tools.yaml are examples/gateway's files, and the
    declaration runs (issue 24, item 1): not 'declared but has no handler'."""
    import asyncio
    import shutil
    import sys

    from toolscout.catalog import Catalog
    from toolscout.gateway import Gateway
    from toolscout.request import CallRequest
    from toolscout.sources.mcp.aggregator import Aggregator
    from toolscout.sources.mcp.config import load_config

    example = ROOT / "examples" / "gateway"
    assert _block("The same file serves tools", "json") == (example / "servers.json").read_text()
    assert _block("all of it is in [examples/gateway/]", "yaml") == (example / "tools.yaml").read_text()
    shutil.copytree(example, tmp_path / "gateway", ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setenv("PETS_TOKEN", "t0ken-for-the-sample")
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.chdir(tmp_path / "gateway")
    for name in [m for m in sys.modules if m == "mytools" or m.startswith("mytools.")]:
        monkeypatch.delitem(sys.modules, name)
    aggregator = Aggregator(load_config(tmp_path / "gateway" / "servers.json"), Catalog())
    aggregator.sources.load(strict=True)
    gateway = Gateway(aggregator.catalog)
    logs = asyncio.run(gateway.execute(CallRequest.parse("ops_tail_logs", {"service": "web", "lines": 1})))
    assert logs.ok and logs.text() == "2026-11-27T06:00:09Z web GET / 200"
    miles = asyncio.run(gateway.execute(CallRequest.parse("units_km_to_miles", {"km": 1.609344})))
    assert miles.ok and miles.text() == "1.0"
    for name in [m for m in sys.modules if m == "mytools" or m.startswith("mytools.")]:
        del sys.modules[name]
# -- the CLI samples ------------------------------------------------------------------------
# Each `toolscout ...` line of the README's shell blocks: its placeholders filled, optional
# [...] parts kept as options, every word must parse (an option renamed or dropped fails); the
# ones that run offline on the bundled catalog are run and must succeed.

PLACES = {"CATALOG": "demo", "NAME": "slack_send_message", "DIR": str(ROOT / "tests" / "fixtures" / "eval_small"),
          "TOOL": "weather_get_current", '"query"': '"send an email"', "C": "slack"}
RUNS_OFFLINE = ("search", "show", "tokens", "call", "--version")


def _samples() -> list[str]:
    text = README.read_text(encoding="utf-8")
    lines = []
    for block in re.findall(r"```(?:bash|sh|shell)\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("toolscout "):
                lines.append(line)
    return lines


def _filled(line: str) -> list[str]:
    line = line.replace("[", "").replace("]", "").replace("stdio|http", "http")
    words = shlex.split(line)
    return [PLACES.get(w, w) for w in words[1:]]


@pytest.mark.parametrize("line", _samples())
def test_readme_cli_sample_parses_and_runs(line: str) -> None:
    args = _filled(line)
    if args[0] in RUNS_OFFLINE and "--embed" not in args:
        args = [a for a in args if a != "--yes"]
        done = CliRunner().invoke(app, args)
        assert done.exit_code == 0, (line, done.output)
        return
    cmd = typer.main.get_command(app)
    rest = list(args)
    while hasattr(cmd, "list_commands") and rest and not rest[0].startswith("-"):
        cmd, rest = cmd.get_command(typer.Context(cmd), rest[0]), rest[1:]
    cmd.make_context("toolscout", rest)  # a usage error for an unknown option or a bad value
