"""docs/team-gateway.md works as written: its tools module and config load, serve, and give
each group its own tools, checked against a real issuer (the only change: the issuer's and
the gateway's URLs, which are the reader's own)."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import pytest_asyncio
import uvicorn

from _oidc import Issuer, oidc_server
from _paths import DOCS
from _procs import free_port
from toolscout.server.app import build_app
from toolscout.server.serve_config import ServeConfig

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", (DOCS / "team-gateway.md").read_text(encoding="utf-8"), re.S)


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def issuer() -> Any:
    with oidc_server([{"id": "eve", "groups": ["engineering"]}, {"id": "sam", "groups": ["sales"]}]) as found:
        yield found


async def test_the_guide_serves_each_group_its_tools(issuer: Issuer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (module,) = _blocks("python")
    (config_text,) = _blocks("json")
    (tmp_path / "team_tools.py").write_text(module)
    config = json.loads(config_text)
    port = free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    config["auth"].update(issuer=issuer.url, resource=resource)
    config.update(host="127.0.0.1", port=port, store=str(tmp_path / "team.db"), auditStdout=False)
    path = tmp_path / "team.json"
    path.write_text(json.dumps(config))
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", [*sys.path])
    app = build_app(ServeConfig.load(path))
    server = uvicorn.Server(uvicorn.Config(app.asgi(), host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    task = asyncio.ensure_future(server.serve())
    try:
        while not server.started:
            if task.done():
                task.result()
            await asyncio.sleep(0.01)
        await app.aggregator.start(lazy=False)
        base = f"http://127.0.0.1:{port}"
        async with httpx.AsyncClient(timeout=30) as http:

            async def find(who: str) -> list[str]:
                token = issuer.token(who, resource)
                reply = await http.post(f"{base}/v1/find", json={"query": "repository issue customer", "limit": 10},
                                        headers={"Authorization": f"Bearer {token}"})
                return [r["tool_name"] for r in reply.json()["tool_references"]]

            eve, sam = await find("eve"), await find("sam")
            assert any("issue" in n for n in eve) and not any("customer" in n for n in eve)
            assert any("customer" in n for n in sam) and not any("issue" in n for n in sam)
            token = issuer.token("eve", resource)
            delete = next(t.name for t in app.gateway.catalog if "delete" in t.name)
            gated = await http.post(f"{base}/v1/call", json={"name": delete, "arguments": {"repository": "x"}},
                                    headers={"Authorization": f"Bearer {token}"})
            assert gated.json()["error"]["code"] == "approval_required"
            records = (await http.get(f"{base}/v1/audit", headers={"Authorization": f"Bearer {token}"})).json()["records"]
            assert records and {r["principal"] for r in records} == {"eve"}
    finally:
        server.should_exit = True
        await task
        await app.aggregator.aclose()
