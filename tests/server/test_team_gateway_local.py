"""docs/team-gateway.md on one machine (issue 34): the guide's tools and config, its local
issuer recipe (scripts/local_issuer.py, the oidc-provider set-up the tests use) and its
commands, run as written; the only changes are the ports (a test never assumes 9400 or 8765
are free). And ``serve`` warns at start-up when its issuer cannot be reached."""

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

from _paths import DOCS, ROOT
from _procs import free_port, stop, wait_http

TOOLSCOUT = str(Path(sys.executable).with_name("toolscout"))
GUIDE = (DOCS / "team-gateway.md").read_text(encoding="utf-8")
PACKAGE = ROOT / ".ci" / "node" / "node_modules" / "oidc-provider"


def _blocks(lang: str, text: str = GUIDE) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", text, re.S)


def _local_commands() -> list[list[str]]:
    section = GUIDE.split("### Try it on one machine", 1)[1]
    first = _blocks("bash", section)[0]
    return [shlex.split(line, comments=True) for line in first.splitlines() if line.strip()]


@pytest.fixture
def guide(tmp_path: Path) -> Path:
    """The guide's team_tools.py and team.json in a folder of their own, the gateway's port
    a free one."""
    (module,) = _blocks("python")
    (config_text,) = _blocks("json")
    (tmp_path / "team_tools.py").write_text(module)
    config = json.loads(config_text)
    config.update(port=free_port(), auditStdout=False)
    (tmp_path / "team.json").write_text(json.dumps(config))
    return tmp_path


def _env(folder: Path) -> dict[str, str]:
    return {**os.environ, "COLUMNS": "80", "NO_COLOR": "1", "XDG_CACHE_HOME": str(folder / "cache")}


def test_the_guide_runs_on_one_machine_with_the_local_issuer(guide: Path) -> None:
    if shutil.which("node") is None or not (PACKAGE / "package.json").exists():
        pytest.skip("needs Node and npm oidc-provider in .ci/node (run .ci/setup-mcp.sh)")
    start_issuer, start_gateway = _local_commands()
    assert start_issuer[:2] == ["python3", "scripts/local_issuer.py"] and start_gateway[:1] == ["toolscout"]
    issuer_port = free_port()
    issuer = subprocess.Popen(
        [sys.executable, str(ROOT / start_issuer[1]), *start_issuer[2:], "--port", str(issuer_port)],
        cwd=guide, env=_env(guide), stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )
    gateway = None
    try:
        assert issuer.stdout is not None
        printed = []
        for line in issuer.stdout:  # the script prints its clients, then how to serve
            printed.append(line)
            if line.startswith("Ctrl-C stops"):
                break
        secrets = {m.group(1): m.group(2) for m in re.finditer(r"^client (\S+) groups \S+ secret (\S+)$", "".join(printed), re.M)}
        assert set(secrets) == {"eve", "sam", "ada"}, printed
        local = json.loads((guide / "team.local.json").read_text())
        resource = local["auth"]["resource"]
        assert local["auth"]["issuer"] == f"http://127.0.0.1:{issuer_port}" and local["host"] == "127.0.0.1"
        gateway = subprocess.Popen(
            [TOOLSCOUT, *start_gateway[1:]], cwd=guide, env=_env(guide), stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )
        base = resource.removesuffix("/mcp")
        wait_http(gateway, f"{base}/.well-known/oauth-protected-resource", ready=lambda r: r.status_code == 200)

        def found(who: str) -> list[str]:
            token = httpx.post(
                f"http://127.0.0.1:{issuer_port}/token", auth=(who, secrets[who]), timeout=10,
                data={"grant_type": "client_credentials", "scope": "tools", "resource": resource},
            ).json()["access_token"]
            reply = httpx.post(f"{base}/v1/find", json={"query": "repository issue customer"},
                               headers={"Authorization": f"Bearer {token}"}, timeout=30)
            assert reply.status_code == 200, reply.text
            return [r["tool_name"] for r in reply.json()["tool_references"]]

        eve, sam = found("eve"), found("sam")
        assert any("issue" in n for n in eve) and not any("customer" in n for n in eve)
        assert sam == ["crm_lookup_customer"]
    finally:
        stop(*(p for p in (gateway, issuer) if p is not None))
    assert gateway is not None and gateway.stderr is not None
    assert "cannot be reached" not in gateway.stderr.read()  # its issuer answered: no warning


def test_serve_warns_at_start_up_when_its_issuer_cannot_be_reached(guide: Path) -> None:
    """The guide's placeholder issuer (or any that does not answer): said at start, not only
    as 401s and 503s later."""
    config = json.loads((guide / "team.json").read_text())
    closed = free_port()  # nothing listens there
    config["auth"]["issuer"] = f"http://127.0.0.1:{closed}"
    config["host"] = "127.0.0.1"
    (guide / "team.json").write_text(json.dumps(config))
    proc = subprocess.Popen([TOOLSCOUT, "serve", "-c", "team.json"], cwd=guide, env=_env(guide),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        wait_http(proc, f"http://127.0.0.1:{config['port']}/.well-known/oauth-protected-resource", ready=lambda r: r.status_code == 200)
    finally:
        stop(proc)
    assert proc.stderr is not None
    said = proc.stderr.read()
    assert f"warning: the issuer http://127.0.0.1:{closed} cannot be reached" in said
    assert "scripts/local_issuer.py" in said
