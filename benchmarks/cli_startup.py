"""CLI start-up before and after, in one run: ``toolscout --help``, completing a command name
and an option (what a shell's TAB runs), and ``toolscout search demo`` (the wall time a
person waits for one search), for an earlier revision and this checkout, alternately.

The earlier revision is checked out into a temporary worktree and run from its own sources
(``PYTHONPATH``), with this venv's interpreter and packages, so the two differ only in
toolscout's code. Each figure is the median of ``--rounds`` runs, the two versions taking turns
(a busy machine slows both alike); the machine's load average is printed beside them. Then
the modules that cost most to import for ``toolscout --help`` (``python -X importtime``).

    .venv/bin/python benchmarks/cli_startup.py --before 672a837 [--rounds 7] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import write_section

ROOT = Path(__file__).resolve().parents[1]
RUN = "import sys\nfrom toolscout.cli import app\nsys.argv = ['toolscout', *sys.argv[1:]]\napp()\n"
"""How the ``toolscout`` script starts (the console-script wrapper does the same)."""

CASES: list[tuple[str, list[str], dict[str, str]]] = [
    ("toolscout --help", ["--help"], {}),
    ("TAB: toolscout se<TAB> (command names)", [], {"_TOOLSCOUT_COMPLETE": "complete_bash", "COMP_WORDS": "toolscout se", "COMP_CWORD": "1"}),
    ("TAB: toolscout search --f<TAB> (options)", [], {"_TOOLSCOUT_COMPLETE": "complete_bash", "COMP_WORDS": "toolscout search --f", "COMP_CWORD": "2"}),
    ("toolscout search demo 'send an email'", ["search", "demo", "send an email"], {}),
]


def _run(src: Path, argv: list[str], extra: dict[str, str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(src), "COLUMNS": "80", **extra}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-c", RUN, *argv], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - started


def _heaviest(src: Path, top: int) -> list[tuple[str, float]]:
    """The ``top`` toolscout modules by cumulative import time for ``toolscout --help``."""
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", RUN, "--help"], env=env, capture_output=True, text=True, check=False
    )
    rows = []
    for line in done.stderr.splitlines():
        found = re.match(r"import time:\s+\d+ \|\s+(\d+) \|\s+(\S.*)$", line)
        if found and found.group(2).strip().startswith("toolscout"):
            rows.append((found.group(2).strip(), int(found.group(1)) / 1000))
    return sorted(rows, key=lambda r: -r[1])[:top]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default="672a837", help="The earlier git revision.")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--no-write", action="store_true", help="Print only; leave docs/benchmarks.md alone.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="toolscout-before-") as tmp:
        before = Path(tmp) / "tree"
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(before), args.before], check=True)
        try:
            versions = {f"before ({args.before})": before / "src", "after (this checkout)": ROOT / "src"}
            times: dict[tuple[str, str], list[float]] = {}
            loads = []
            for _ in range(args.rounds):
                loads.append(os.getloadavg()[0])
                for label, argv, extra in CASES:
                    for version, src in versions.items():
                        times.setdefault((label, version), []).append(_run(src, argv, extra))
            heaviest = {version: _heaviest(src, 8) for version, src in versions.items()}
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(before)], check=False)
    names = list(versions)
    lines = [
        f"Median wall time of {args.rounds} runs each, the versions alternating; 1-minute load average "
        f"during the run {min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs (a quiet machine is ~0).",
        "",
        f"| what runs | {names[0]} | {names[1]} | after / before |",
        "|---|---:|---:|---:|",
    ]
    for label, _argv, _extra in CASES:
        a, b = (statistics.median(times[(label, v)]) for v in names)
        lines.append(f"| {label} | {a:.2f} s | {b:.2f} s | {b / a:.2f} |")
    lines += ["", "Heaviest toolscout modules imported by `toolscout --help` (cumulative ms, `python -X importtime`):", ""]
    for version in names:
        shown = ", ".join(f"{name} {ms:.0f}" for name, ms in heaviest[version]) or "none"
        lines.append(f"- {version}: {shown}")
    body = "\n".join(lines)
    print(body)
    if not args.no_write:
        write_section("cli-startup", "CLI start-up and search wall time", f"python benchmarks/cli_startup.py --before {args.before}", body)


if __name__ == "__main__":
    main()
