"""The console's call panel and score parts in a real browser (headless Chromium driven over
the DevTools protocol: tests/_cdp.py): a form generated from the tool's schema, the call
through ``/v1/call``, an approval prompt for a gated tool, the result as the page shows it;
each hit's score parts adding up to its score; a 200k-character description that stays
inside its panel. Screenshots of the search and call panels go to ``docs/`` when
``TOOLSCOUT_SCREENSHOTS`` names a folder."""

from __future__ import annotations

import os
import re
import shutil
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest
import pytest_asyncio

from _cdp import Page, browser
from _fake_embed import FakeEmbedder
from mcp_fixtures.asgi import serving
from toolscout.catalog import Catalog
from toolscout.gateway import Gateway
from toolscout.search.hybrid import enable_hybrid
from toolscout.server.console import local_app
from toolscout.session import Session

module_loop = pytest.mark.asyncio(loop_scope="module")
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
needs_chromium = pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed (.ci/setup-services.sh)")
TOKEN = "console-call-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
LONG = "Summarise a report. " + "x" * 200_000  # one 200k-character word: nothing to break it at
DELETED: list[str] = []


def _catalog() -> Catalog:
    cat = Catalog()

    def add_numbers(a: int, b: int, note: str = "") -> int:
        """Add two integers and return their sum.

        Args:
            a: The first integer.
            b: The second integer.
            note: Anything to remember.
        """
        return a + b

    def delete_account(user: str, permanent: bool = False) -> str:
        """Delete a user's account.

        Args:
            user: Whose account.
            permanent: Skip the 30-day grace period.
        """
        DELETED.append(user)
        return f"deleted {user}"

    def summarise(text: str) -> str:
        return text[:10]

    def send_message(channel: str, text: str) -> str:
        """Post a chat message to a channel so the team sees it."""
        return "posted"

    def send_email(to: str, subject: str) -> str:
        """Send an email message to a recipient."""
        return "sent"

    cat.add_function(add_numbers, category="math")
    cat.add_function(delete_account, permission="dangerous", category="admin")
    cat.add_function(summarise, description=LONG)
    cat.add_function(send_message, category="chat")
    cat.add_function(send_email, category="mail")
    return cat


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def site() -> AsyncIterator[tuple[str, Gateway]]:
    gateway = Gateway(_catalog(), learn=True)
    enable_hybrid(gateway.index, FakeEmbedder(dim=256), query_encoder=None)  # a stand-in model: "auto" is hybrid
    for i in range(5):  # learned usage: send_email lifted for "send a message"
        session = Session(gateway, session_id=f"s{i}", threshold=1)
        assert session.handle("find_tools", {"query": "send a message", "limit": 10}).ok
        assert session.handle("send_email", {"to": "a@b.c", "subject": "hi"}).ok
    async with serving(local_app(gateway, token=TOKEN)) as url:
        yield url, gateway


def page_url(url: str, **params: str) -> str:
    return f"{url}/ui/#{urlencode({'token': TOKEN, **params})}"


@pytest_asyncio.fixture(loop_scope="module", scope="module")
async def tab(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Page]:
    assert CHROMIUM is not None
    async with browser(CHROMIUM, tmp_path_factory.mktemp("cdp") / uuid.uuid4().hex[:8]) as page:
        yield page


async def open_view(tab: Page, url: str) -> None:
    await tab.eval("document.documentElement.dataset.state = 'navigating'")  # a new hash only redraws
    await tab.goto(url)
    await tab.until("document.documentElement.dataset.state === 'ready'")


def shots() -> Path | None:
    folder = os.environ.get("TOOLSCOUT_SCREENSHOTS")
    return Path(folder) if folder else None


@module_loop
@needs_chromium
async def test_the_call_panel_builds_a_form_from_the_schema_and_shows_the_result(site: tuple[str, Gateway], tab: Page) -> None:
    url, _ = site
    await open_view(tab, page_url(url, view="call", tool="add_numbers"))
    fields = await tab.eval("[...document.querySelectorAll('[data-arg]')].map((e) => [e.dataset.arg, e.dataset.kind, e.type])")
    assert fields == [["a", "integer", "number"], ["b", "integer", "number"], ["note", "string", "text"]]
    shown = await tab.text("main")
    assert "a * integer" in shown and "The first integer." in shown and "note string" in shown
    await tab.eval("document.documentElement.dataset.call = '';"  # another test's call may have left its state
                   "document.querySelector('[data-arg=a]').value = '20'; document.querySelector('[data-arg=b]').value = '22';"
                   "document.querySelector('#run').click()")
    await tab.until("document.documentElement.dataset.call === 'ok'")
    result = await tab.text(".call-result")
    assert result.startswith("Result ok add_numbers") and " 42" in f" {result}"
    if shots():
        await tab.screenshot(shots() / "console-call.png")  # type: ignore[operator]
    # a missing argument: the gateway's own error, each pointer shown
    await tab.eval("document.documentElement.dataset.call = ''; document.querySelector('[data-arg=a]').value = '';"
                   "document.querySelector('[data-arg=b]').value = '';document.querySelector('#run').click()")
    await tab.until("document.documentElement.dataset.call === 'error'")
    error = await tab.text(".call-result")
    assert "invalid_arguments" in error and "/a" in error


@module_loop
@needs_chromium
async def test_a_gated_tool_asks_for_approval_and_runs_only_once_approved(site: tuple[str, Gateway], tab: Page) -> None:
    url, _ = site
    DELETED.clear()  # another test of this module may have deleted someone already
    await open_view(tab, page_url(url, view="call", tool="delete_account"))
    assert "needs approval" in await tab.text("main")
    await tab.eval("document.querySelector('[data-arg=user]').value = 'mallory'; document.querySelector('#run').click()")
    await tab.until("document.documentElement.dataset.call === 'approval'")
    assert "Approve this call? delete_account is dangerous" in await tab.text(".approval")
    assert DELETED == []  # asked first: nothing ran
    await tab.eval("document.querySelector('#deny').click()")
    await tab.until("document.documentElement.dataset.call === 'error'")
    assert "approval_denied" in await tab.text(".call-result") and DELETED == []
    await tab.eval("document.documentElement.dataset.call = ''; document.querySelector('#run').click()")
    await tab.until("document.documentElement.dataset.call === 'approval'")
    await tab.eval("document.querySelector('#approve').click()")
    await tab.until("document.documentElement.dataset.call === 'ok'")
    assert "deleted mallory" in await tab.text(".call-result") and DELETED == ["mallory"]


@module_loop
async def test_v1_runs_a_gated_tool_only_with_the_callers_approval(site: tuple[str, Gateway]) -> None:
    url, gateway = site
    gateway.approve_kinds = frozenset({"dangerous"})
    try:
        async with httpx.AsyncClient(headers=AUTH) as http:
            call = {"name": "delete_account", "arguments": {"user": "eve"}}
            assert (await http.post(f"{url}/v1/call", json=call)).json()["error"]["code"] == "approval_required"
            no = (await http.post(f"{url}/v1/call", json={**call, "approved": False})).json()
            assert no["error"]["code"] == "approval_denied" and "eve" not in DELETED
            yes = (await http.post(f"{url}/v1/call", json={**call, "approved": True})).json()
            assert yes["ok"] and "eve" in DELETED
            odd = await http.post(f"{url}/v1/call", json={**call, "approved": "yes"})
            assert odd.status_code == 422  # a boolean, never a truthy string
    finally:
        gateway.approve_kinds = None


@module_loop
@needs_chromium
@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
async def test_every_rows_score_parts_add_up_to_its_score(site: tuple[str, Gateway], tab: Page, mode: str) -> None:
    url, _ = site
    await open_view(tab, page_url(url, view="search", q="send a message", type=mode, limit="5"))
    rows = await tab.eval(
        "[...document.querySelectorAll('article.hit')].map((card) => ({"
        " head: card.querySelector('.hit-head').innerText,"
        " parts: [...card.querySelectorAll('table.summary tr[data-part]')].map((r) => [r.dataset.part, r.cells[1].innerText]),"
        " total: card.querySelector('table.summary tr.total').cells[1].innerText }))"
    )
    assert rows
    for row in rows:
        score = float(re.search(r"score (\d+\.\d{3})", row["head"]).group(1))  # type: ignore[union-attr]
        assert float(row["total"]) == pytest.approx(score, abs=1.5e-3)
        assert sum(float(v) for _, v in row["parts"]) == pytest.approx(score, abs=1e-3 * len(row["parts"]) + 1e-3)
    names = {name for row in rows for name, _ in row["parts"]}
    assert {"usage", "keyword"} <= names  # the learned boost is a named part
    if mode == "hybrid":
        assert "semantic" in names
    if shots() and mode == "hybrid":
        await tab.screenshot(shots() / "console-search.png")  # type: ignore[operator]


@module_loop
@needs_chromium
async def test_a_200k_character_description_stays_inside_its_panel(site: tuple[str, Gateway], tab: Page) -> None:
    url, _ = site
    for view in ({"view": "catalog", "tool": "summarise"},):  # the call panel shows it with the same rule
        await open_view(tab, page_url(url, **view))
        box = await tab.eval(
            "(() => { const d = document.querySelector('.description'); const r = d.getBoundingClientRect();"
            " return {page: document.documentElement.scrollWidth, view: innerWidth, right: r.right, height: r.height,"
            " scrolls: d.scrollHeight > d.clientHeight, length: d.textContent.length}; })()"
        )
        assert box["length"] >= 200_000  # all of it is there, scrolled
        assert box["page"] <= box["view"] and box["right"] <= box["view"], box  # nothing sticks out sideways
        assert box["height"] < 600 and box["scrolls"], box
