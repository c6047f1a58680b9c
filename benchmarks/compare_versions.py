"""Before and after: `toolscout eval --compare` tables for an earlier version against this one.

For every set in ../shared/data, in one run: the earlier version (a git revision, checked out
into a temporary worktree and run from its own sources) ranks the queries with ``--type
hybrid --run-out``; this checkout then runs ``toolscout eval --type hybrid --compare
<that run file>`` (the paired table: nDCG@10 per split, delta, wins, losses, sign test) and
``toolscout eval --type keyword --compare <this version's hybrid run file>``. Every command
is printed as run, so a reader can repeat any row.

Vectors: both versions read the vector cache of benchmarks/hybrid_quality.py (the eval's
default cache path is pointed at it for the run), so tools are embedded once.

    .venv/bin/python benchmarks/compare_versions.py --before 9fc38d6 [--sets a,b] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import write_section
from search_quality import DEFAULT_DATA

ROOT = Path(__file__).resolve().parents[1]
BENCH_VECTORS = Path.home() / ".cache" / "toolscout-bench" / "vectors.db"
EVAL_VECTORS = Path.home() / ".cache" / "toolscout" / "eval-vectors.db"
# (set, extra eval options): metatool's first 2,000 queries (its 21k take too long twice),
# toollens's test split, the others whole.
SETS: list[tuple[str, list[str]]] = [
    ("toolpool", []),
    ("sealtools", []),
    ("stabletoolbench", []),
    ("apibench", []),
    ("metatool", ["--max-queries", "2000"]),
    ("toollens", ["--split", "test"]),
]
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def _toolscout(src: Path, args: list[str]) -> str:
    env = dict(os.environ, PYTHONPATH=str(src), COLUMNS="120", NO_COLOR="1", TERM="dumb")
    cmd = [sys.executable, "-c", "import sys; from toolscout.cli import app; sys.argv[0] = 'toolscout'; app()", *args]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed ({out.returncode}):\n{out.stderr[-2000:]}")
    return _ANSI.sub("", out.stdout)


def _paired_table(output: str) -> str:
    """The paired comparison table of ``eval --compare`` as markdown."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if "same queries (paired)" in line)
    rows = [ln for ln in lines[start + 1 :] if ln.strip().startswith(("┃", "│"))]
    cells = [[c.strip() for c in row.strip().strip("┃│").split("┃" if "┃" in row else "│")] for row in rows]
    header, body = cells[0], cells[1:]
    md = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    md += ["| " + " | ".join(r) + " |" for r in body]
    return "\n".join(md)


def _pointed_cache() -> Path | None:
    """Point the eval's vector cache at the benchmark cache; returns the moved-aside file."""
    EVAL_VECTORS.parent.mkdir(parents=True, exist_ok=True)
    aside = None
    if EVAL_VECTORS.is_symlink():
        EVAL_VECTORS.unlink()
    elif EVAL_VECTORS.exists():
        aside = EVAL_VECTORS.with_suffix(".db.aside")
        EVAL_VECTORS.rename(aside)
    EVAL_VECTORS.symlink_to(BENCH_VECTORS)
    return aside


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", required=True, help="git revision of the earlier version")
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--sets", default="")
    parser.add_argument("--no-write", action="store_true")
    args = parser.parse_args()
    wanted = set(filter(None, args.sets.split(",")))
    before = subprocess.run(["git", "rev-parse", "--short", args.before], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    after = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
    started = time.perf_counter()
    parts: list[str] = []
    aside = _pointed_cache()
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "before"
        subprocess.run(["git", "worktree", "add", "--detach", str(tree), before], cwd=ROOT, capture_output=True, check=True)
        try:
            for name, options in SETS:
                if wanted and name not in wanted:
                    continue
                d = str(args.data / name)
                old_runs, new_runs = Path(tmp) / f"{name}-before.jsonl", Path(tmp) / f"{name}-after.jsonl"
                _toolscout(tree / "src", ["eval", d, "--type", "hybrid", *options, "--run-out", str(old_runs)])
                hybrid = _toolscout(ROOT / "src", ["eval", d, "--type", "hybrid", *options, "--run-out", str(new_runs), "--compare", str(old_runs)])
                keyword = _toolscout(ROOT / "src", ["eval", d, "--type", "keyword", *options, "--compare", str(new_runs)])
                opts = " ".join(options)
                parts.append(
                    f"**{name}**: `toolscout eval {name} --type hybrid {opts} --compare {name}-before.jsonl` "
                    f"(hybrid of {after} against hybrid of {before})\n\n{_paired_table(hybrid)}\n\n"
                    f"`toolscout eval {name} --type keyword {opts} --compare {name}-after.jsonl` "
                    f"(keyword of {after} against hybrid of {after})\n\n{_paired_table(keyword)}"
                )
                print(parts[-1], "\n", flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True, check=False)
            EVAL_VECTORS.unlink(missing_ok=True)
            if aside is not None:
                aside.rename(EVAL_VECTORS)
    body = (
        f"Before = {before}, after = {after} (this checkout). nDCG@10 per split, delta = second "
        "column minus first, wins/losses = queries the second ranks better/worse, sign-test p. "
        "Both versions with the default model and the vectors cached by "
        "benchmarks/hybrid_quality.py.\n\n"
        + "\n\n".join(parts)
        + f"\n\nWhole run: {time.perf_counter() - started:.0f} s."
    )
    if not args.no_write:
        write_section(
            "compare-versions", "Before and after: eval --compare on every set",
            f"python benchmarks/compare_versions.py --before {before}", body,
        )


if __name__ == "__main__":
    main()
