"""Screenshots of the web console for docs/console.md, at 1280 and 800 px wide: the catalog
table and a search, over ``toolscout console demo``, in headless Chromium (Debian's
``chromium``; ``.ci/setup-services.sh`` installs it). Also checks what the pictures should
show: no table header wraps and no cell splits a word.

    .venv/bin/python scripts/console_screenshots.py [--out docs/img]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from _cdp import browser  # noqa: E402  (the tests' DevTools driver)

TOKEN = "screenshots-token-0123456789abcdef"
VIEWS = {
    "catalog": "#view=catalog",
    "search": "#view=search&q=create+an+issue+in+a+repository&type=keyword&limit=3",
}
BROKEN = """
(() => {
  const out = [];
  for (const cell of document.querySelectorAll("th, td")) {
    const style = getComputedStyle(cell);
    if (cell.tagName === "TH" && cell.getClientRects().length && cell.offsetHeight > 2 * parseFloat(style.lineHeight || 16)) {
      out.push("header wraps: " + cell.innerText);
    }
    const range = document.createRange();
    const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const text = n.textContent;
      let i = 0;
      for (const word of text.split(/([\\s\\-\\/]+)/)) {  // a line may break after a hyphen or slash
        if (word.trim().length > 3) {
          range.setStart(n, i); range.setEnd(n, i + word.length);
          const tops = new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top)));
          if (tops.size > 1) out.push("word split: " + word);
        }
        i += word.length;
      }
    }
  }
  return out;
})()
"""
"""The page's own account of broken words: a header on more than one line, or a word whose
letters sit on two lines."""


async def shoot(url: str, out: Path, width: int, profile: Path) -> list[str]:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "headless Chromium is not installed (.ci/setup-services.sh)"
    problems = []
    async with browser(chromium, profile, width=width, height=900) as page:
        await page.send("Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1, mobile=False)
        await page.goto(f"{url}/ui/#token={TOKEN}")
        await page.until("document.documentElement.dataset.state === 'ready'")
        for name, fragment in VIEWS.items():
            await page.eval(f"location.hash = {fragment!r}")
            await page.until(f"document.documentElement.dataset.view === {name!r} && document.documentElement.dataset.state === 'ready' && document.querySelector('main table')")
            problems += [f"{width}px {name}: {p}" for p in await page.eval(BROKEN)]
            await page.screenshot(out / f"console-{name}-{width}.png", full=False)
    return problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "img")
    args = parser.parse_args()
    toolscout = str(Path(sys.executable).with_name("toolscout"))
    proc = subprocess.Popen([toolscout, "console", "demo", "--port", "0", "--token", TOKEN], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = line.split(": ", 1)[1].split("/ui/")[0]
        with tempfile.TemporaryDirectory() as tmp:
            problems = []
            for width in (1280, 800):
                problems += asyncio.run(shoot(url, args.out, width, Path(tmp) / f"profile-{width}"))
    finally:
        proc.terminate()
        proc.wait(10)
    for p in problems:
        print(p)
    print(f"screenshots in {args.out}; {len(problems)} broken words")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
