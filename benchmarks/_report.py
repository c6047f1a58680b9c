"""Write one benchmark's figures into docs/benchmarks.md, between markers of its own.

Each benchmark owns a section ``<!-- begin:NAME -->`` ... ``<!-- end:NAME -->``, so several
benchmarks can refresh their own figures without touching the others'.
"""

from __future__ import annotations

import os
import platform
import re
import time
from pathlib import Path

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"
DATA = Path(os.environ.get("TOOLSCOUT_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
"""The public evaluation sets (``../shared/data`` beside the clone, or ``$TOOLSCOUT_DATA``)."""
SETS = ("toolpool", "sealtools", "stabletoolbench", "apibench", "metatool", "toollens")
HEADER = "# Benchmarks\n\nFigures written by the scripts in `benchmarks/`; each section names its command.\n"


def machine() -> str:
    return f"{platform.python_implementation()} {platform.python_version()}, {os.cpu_count()} CPUs, {platform.machine()}"


def write_section(name: str, title: str, command: str, body: str) -> None:
    """Replace (or append) the section ``name`` in docs/benchmarks.md."""
    stamp = time.strftime("%Y-%m-%d")
    block = (
        f"<!-- begin:{name} -->\n## {title}\n\n"
        f"Command: `{command}` ({stamp}, {machine()})\n\n{body.strip()}\n<!-- end:{name} -->"
    )
    text = DOC.read_text() if DOC.exists() else HEADER
    pattern = re.compile(rf"<!-- begin:{re.escape(name)} -->.*?<!-- end:{re.escape(name)} -->", re.S)
    text = pattern.sub(lambda _: block, text) if pattern.search(text) else text.rstrip() + "\n\n" + block + "\n"
    DOC.parent.mkdir(parents=True, exist_ok=True)
    DOC.write_text(text)
    print(f"wrote section '{name}' to {DOC}")


def replicate(tools: list, n: int) -> list:
    """``n`` tools from ``tools``, repeating them with ``__r<k>`` name suffixes (the 100k sets)."""
    out = list(tools[:n])
    k = 1
    while len(out) < n:
        out.extend(t.replace(name=f"{t.name}__r{k}") for t in tools[: n - len(out)])
        k += 1
    return out


def fmt_metrics(report) -> str:  # type: ignore[no-untyped-def]
    """``R@1 / R@5 / nDCG@10`` of an eval report, for the tables."""
    m = report.overall
    return f"{m.r1:.1f} / {m.r5:.1f} / {m.ndcg10:.1f}"


def query_encoder(name: str) -> object:
    """A ``query_encoder=`` option by name; ``blockwise-unfused`` is the blockwise encoder
    without its graph fusion (not a user option: the benchmarks compare the two)."""
    if name == "blockwise-unfused":
        from toolscout.embed.quantized import default_query_embedder

        return default_query_embedder("blockwise", fused=False)
    return name
