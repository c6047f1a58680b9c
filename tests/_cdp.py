"""Headless Chromium driven over the DevTools protocol: open a page, run JavaScript in it
(clicks, form input, reading what is shown), take screenshots. For tests of pages that need
interaction, where ``--dump-dom`` only shows the first render.

Debian's ``chromium`` binary; the protocol over one WebSocket (``websockets``). Waiting is
done inside the page (:meth:`Page.until` polls a condition in the browser), never by
sleeping in the test.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import json
import re
import subprocess
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
from websockets.asyncio.client import ClientConnection, connect

FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--no-first-run",
    "--hide-scrollbars", "--disable-extensions", "--disable-sync", "--mute-audio",
)  # fmt: skip


class Page:
    """One browser tab."""

    def __init__(self, ws: ClientConnection) -> None:
        self._ws = ws
        self._ids = itertools.count(1)

    async def send(self, method: str, **params: Any) -> dict[str, Any]:
        ident = next(self._ids)
        await self._ws.send(json.dumps({"id": ident, "method": method, "params": params}))
        while True:
            message = json.loads(await asyncio.wait_for(self._ws.recv(), 60))
            if message.get("id") == ident:
                if "error" in message:
                    raise RuntimeError(f"{method}: {message['error']}")
                return message.get("result", {})

    async def eval(self, expression: str) -> Any:
        """The value of ``expression`` (a promise is awaited), as JSON."""
        out = await self.send("Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True)
        if "exceptionDetails" in out:
            raise RuntimeError(f"{expression[:80]}: {out['exceptionDetails']}")
        return out.get("result", {}).get("value")

    async def until(self, condition: str, budget_ms: int = 20_000) -> None:
        """Wait, inside the page, until ``condition`` (a JS expression) is true."""
        ok = await self.eval(
            "new Promise((done) => { const t0 = performance.now(); (function check() {"
            f" let v = false; try {{ v = !!({condition}); }} catch (e) {{}}"
            f" if (v) done(true); else if (performance.now() - t0 > {budget_ms}) done(false);"
            " else setTimeout(check, 25); })(); })"
        )
        assert ok, f"the page never reached: {condition}"

    async def goto(self, url: str) -> None:
        await self.send("Page.navigate", url=url)

    async def text(self, selector: str = "body") -> str:
        """What ``selector``'s element shows (``innerText``), whitespace collapsed."""
        value = await self.eval(f"(document.querySelector({json.dumps(selector)}) || {{}}).innerText || ''")
        return " ".join(str(value).split())

    async def screenshot(self, path: Path, *, full: bool = True) -> None:
        params: dict[str, Any] = {"format": "png", "captureBeyondViewport": full}
        if full:
            size = await self.eval("({w: document.documentElement.scrollWidth, h: document.documentElement.scrollHeight})")
            params["clip"] = {"x": 0, "y": 0, "width": size["w"], "height": min(size["h"], 4000), "scale": 1}
        path.write_bytes(base64.b64decode((await self.send("Page.captureScreenshot", **params))["data"]))


@asynccontextmanager
async def browser(chromium: str, profile: Path, *, width: int = 1280, height: int = 900) -> AsyncIterator[Page]:
    """A headless Chromium with one blank tab; stopped (by its pid) on exit."""
    proc = await asyncio.create_subprocess_exec(
        chromium, *FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
        "--remote-debugging-port=0", "about:blank",
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        assert proc.stderr is not None
        endpoint = None
        while endpoint is None:
            line = await asyncio.wait_for(proc.stderr.readline(), 60)
            assert line, "chromium exited before it listened"
            found = re.search(rb"DevTools listening on (ws://[^\s]+)", line)
            if found:
                endpoint = found.group(1).decode()
        drain = asyncio.ensure_future(proc.stderr.read())  # a full pipe would stall the browser
        port = re.search(r":(\d+)/", endpoint).group(1)  # type: ignore[union-attr]
        async with httpx.AsyncClient() as http:
            targets = (await http.get(f"http://127.0.0.1:{port}/json/list")).json()
        tab = next(t for t in targets if t.get("type") == "page")
        async with connect(tab["webSocketDebuggerUrl"], max_size=64 * 1024 * 1024) as ws:
            page = Page(ws)
            await page.send("Page.enable")
            yield page
        drain.cancel()
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()
