"""examples/gateway runs as its README says, on what the README's first command installs
(issue 34): every command of its "Try it" blocks, the HTTP server it starts answering ready,
an MCP client over stdio finding and calling its tools, and a client of a gateway that cannot
start (an unset variable) seeing the reason as an MCP error instead of a closed connection."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from _paths import ROOT
from _procs import free_port, stop, wait_http

TOOLSCOUT = str(Path(sys.executable).with_name("toolscout"))
EXAMPLE = ROOT / "examples" / "gateway"
README = EXAMPLE / "README.md"


def _commands() -> list[list[str]]:
    """The ``.venv/bin/toolscout ...`` lines of the README's bash blocks, split as a shell would."""
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), re.S):
        lines += [shlex.split(line) for line in block.splitlines() if line.startswith(".venv/bin/toolscout ")]
    return lines


@pytest.fixture
def clone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the repository's example (its notes file written there, not in the repo),
    with a cache directory of its own."""
    shutil.copytree(EXAMPLE, tmp_path / "examples" / "gateway", ignore=shutil.ignore_patterns("__pycache__", "notes.json"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return tmp_path


def _env() -> dict[str, str]:
    return {**os.environ, "COLUMNS": "80", "NO_COLOR": "1"}


def test_the_readme_config_is_the_example_file() -> None:
    shown = re.search(r"```json\n(.*?)```", README.read_text(encoding="utf-8"), re.S)
    assert shown is not None and json.loads(shown.group(1)) == json.loads((EXAMPLE / "servers.json").read_text())


def test_every_command_of_the_readme_runs_as_written(clone: Path) -> None:
    commands = _commands()
    assert [c[1] for c in commands][:5] == ["servers", "call", "call", "call", "call"] and commands[-1][1] == "serve"
    outputs = []
    for argv in commands[:-1]:
        done = subprocess.run(
            [TOOLSCOUT, *argv[1:]], cwd=clone, env=_env(), capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL
        )
        assert done.returncode == 0, (argv, done.stdout, done.stderr)
        outputs.append(done.stdout)
    rows = {line.split()[0]: line.split() for line in outputs[0].splitlines()[1:] if line and not line.startswith("tool lists")}
    assert {name: row[2] for name, row in rows.items()} == {"notes": "ready", "ops": "ready", "units": "ready"}
    assert "saved note 'standup'" in outputs[1]
    assert "standup: ship the example gateway" in outputs[2]  # the upstream kept it between two gateways
    assert "web GET / 200" in outputs[3]
    assert outputs[4].strip().startswith("26.21")


def test_the_readme_serve_command_serves_every_source(clone: Path) -> None:
    argv = _commands()[-1]
    port = free_port()  # the README says 8765; a test never assumes that port is free
    argv = [str(port) if value == "8765" else value for value in argv]
    proc = subprocess.Popen([TOOLSCOUT, *argv[1:]], cwd=clone, env=_env(), stdin=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_http(proc, f"http://127.0.0.1:{port}/v1/ready", ready=lambda r: r.status_code == 200)
        ready = httpx.get(f"http://127.0.0.1:{port}/v1/ready", timeout=10).json()
        assert ready["status"] == "ready" and ready["tools"] == 6 and ready["failed"] == {}
    finally:
        stop(proc)


async def test_an_mcp_client_over_stdio_finds_and_calls_the_upstreams_tools(clone: Path) -> None:
    config = clone / "examples" / "gateway" / "servers.json"
    params = StdioServerParameters(command=TOOLSCOUT, args=["serve", "--config", str(config)], env=_env(), cwd=str(clone))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        found = await session.call_tool("find_tools", {"query": "add a note with a title", "limit": 3})
        names = [r["tool_name"] for r in found.structured_content["tool_references"]]
        assert "notes_add_note" in names
        saved = await session.call_tool("call_tool", {"name": "notes_add_note", "arguments": {"title": "a", "text": "b"}})
        assert not saved.is_error and "saved note 'a'" in saved.content[0].text


async def test_a_client_of_a_gateway_that_cannot_start_sees_why(clone: Path) -> None:
    """An unset ${VARIABLE}: named, with how to set it, in the MCP error the client gets."""
    folder = clone / "examples" / "gateway"
    (folder / "pets.json").write_text(json.dumps({"openapi": "3.0.0", "info": {"title": "pets", "version": "1"}, "paths": {}}))
    config = json.loads((folder / "servers.json").read_text())
    config["openapi"] = {"pets": {"spec": "pets.json", "baseUrl": "http://127.0.0.1:9", "headers": {"Authorization": "Bearer ${TS_PETS_TOKEN}"}}}
    (folder / "servers.json").write_text(json.dumps(config))
    env = {k: v for k, v in _env().items() if k != "TS_PETS_TOKEN"}
    params = StdioServerParameters(command=TOOLSCOUT, args=["serve", "--config", str(folder / "servers.json")], env=env)
    with pytest.raises(BaseException) as refused:  # the SDK may wrap it in an exception group
        async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
    errors = [refused.value]
    while isinstance(errors[0], BaseExceptionGroup):
        errors = list(errors[0].exceptions)
    assert isinstance(errors[0], MCPError), refused.value
    message = str(errors[0])
    assert "TS_PETS_TOKEN is not set" in message and "export TS_PETS_TOKEN=" in message
    assert message.startswith("toolscout did not start: config_error")
