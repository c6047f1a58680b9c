"""Set retrieval before and after: complete@10, coverage@10, R@1, nDCG@10, in one run.

Each named version (``label=git revision``; ``HEAD`` is this checkout's working tree) is
checked out into a temporary worktree and ranks every set's queries with its own sources
(``toolscout eval --type MODE --run-out``); the run files are then scored here by this
checkout's metrics, so an older version needs none of them. Versions run set by set,
alternately, so a busy machine slows them alike. Rows: single- and multi-tool requests,
and each origin of the pooled set (``toolpool``'s ``split``).

    .venv/bin/python benchmarks/set_retrieval.py --version before=672a837 --version after=HEAD \
        [--mode keyword] [--sets a,b] [--section set-retrieval] [--no-write] [--learn-train]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _report import DATA, write_section
from _trees import checked_out

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from toolscout.eval.compare import report_from_runs  # noqa: E402
from toolscout.eval.runner import EvalReport, Metrics  # noqa: E402

# metatool: every 10th query (its 21k twice take too long); toollens: its test split.
SETS: list[tuple[str, list[str], dict[str, object]]] = [
    ("toolpool", [], {}),
    ("sealtools", [], {}),
    ("stabletoolbench", [], {}),
    ("apibench", [], {}),
    ("metatool", ["--max-queries", "2000"], {"max_queries": 2000}),
    ("toollens", ["--split", "test"], {"split": "test"}),
]


def _rank(src: Path, directory: Path, mode: str, options: list[str], out: Path) -> float:
    env = dict(os.environ, PYTHONPATH=str(src), COLUMNS="160", NO_COLOR="1", TERM="dumb")
    cmd = [sys.executable, "-c", "import sys; from toolscout.cli import app; sys.argv[0] = 'toolscout'; app()",
           "eval", str(directory), "--type", mode, *options, "--json", "--run-out", str(out)]
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[3:])} failed ({done.returncode}):\n{done.stderr[-2000:]}")
    return time.perf_counter() - started


def _cells(m: Metrics | None) -> list[str]:
    if m is None or not m.queries:
        return ["-"] * 4
    return [f"{m.r1:.2f}", f"{m.ndcg10:.2f}", f"{m.complete10:.2f}", f"{m.coverage10:.2f}"]


def _table(name: str, reports: dict[str, EvalReport]) -> str:
    labels = list(reports)
    head = ["rows", "queries"] + [f"{col} {label}" for col in ("R@1", "nDCG@10", "complete@10", "coverage@10") for label in labels]
    md = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    first = reports[labels[0]]
    rows: list[tuple[str, dict[str, Metrics | None]]] = [("all", {k: r.overall for k, r in reports.items()})]
    for size in ("single", "multi"):
        if size in first.sizes:
            rows.append((f"{size}-tool", {k: r.sizes.get(size) for k, r in reports.items()}))
    if name == "toolpool":
        for split in sorted(first.splits):
            rows.append((f"origin {split}", {k: r.splits.get(split) for k, r in reports.items()}))
    for label, by in rows:
        cells = {k: _cells(m) for k, m in by.items()}
        n = next((m.queries for m in by.values() if m is not None), 0)
        md.append("| " + " | ".join([label, str(n)] + [cells[k][i] for i in range(4) for k in labels]) + " |")
    return "\n".join(md)


def _train_log(directory: Path, out: Path) -> Path:
    """A usage log (``{"query", "called", "session"}`` per line) of ``directory``'s train split,
    in a temporary file (never in the repository)."""
    with (directory / "queries.jsonl").open(encoding="utf-8") as src, out.open("w", encoding="utf-8") as dst:
        for line in src:
            q = json.loads(line)
            if q.get("split") == "train":
                dst.write(json.dumps({"query": q["query"], "called": q["relevant"], "session": f"train-{q['id']}"}) + "\n")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--version", action="append", required=True, help="label=revision (HEAD: this working tree)")
    parser.add_argument("--mode", default="keyword")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--sets", default="")
    parser.add_argument("--section", default="set-retrieval")
    parser.add_argument("--title", default="Set retrieval: complete@10 and coverage@10 before and after")
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument(
        "--learn-train", action="store_true",
        help="a set ranked on its test split first learns from a usage log made of its train split "
             "(each train request calling its labelled tools, one session each)",
    )
    args = parser.parse_args()
    if not args.data.is_dir():
        print(f"no data at {args.data}: skipped")
        return
    wanted = set(filter(None, args.sets.split(",")))
    versions = dict(v.split("=", 1) for v in args.version)
    parts: list[str] = []
    started = time.perf_counter()
    with checked_out(versions) as sources, tempfile.TemporaryDirectory() as tmp:
        for name, options, selection in SETS:
            if (wanted and name not in wanted) or not (args.data / name).is_dir():
                continue
            reports: dict[str, EvalReport] = {}
            seconds: dict[str, float] = {}
            if args.learn_train and selection.get("split") == "test":
                options = [*options, "--learn", str(_train_log(args.data / name, Path(tmp) / f"{name}-train-log.jsonl"))]
            for label, src in sources.items():
                out = Path(tmp) / f"{name}-{label}.jsonl"
                seconds[label] = _rank(src, args.data / name, args.mode, options, out)
                reports[label] = report_from_runs(args.data / name, out, **selection)
            timing = ", ".join(f"{k} {v:.0f} s" for k, v in seconds.items())
            opts = " ".join(o if not o.endswith("-train-log.jsonl") else "TRAIN-LOG" for o in options)
            parts.append(f"**{name}** (`toolscout eval {name} --type {args.mode} {opts}`; {timing})\n\n{_table(name, reports)}")
            print(parts[-1], "\n", flush=True)
    shown = " ".join(f"--version {k}={v}" for k, v in versions.items())
    body = (
        f"Mode {args.mode}. Versions: {', '.join(f'{k} = {v}' for k, v in versions.items())}. Percentages; "
        "complete@10 = requests whose every needed tool is in the top 10, coverage@10 = needed tools in the "
        "top 10 (per request, averaged). Each version ranks with its own sources; the run files are scored by "
        "this checkout.\n\n" + "\n\n".join(parts) + f"\n\nWhole run: {time.perf_counter() - started:.0f} s."
    )
    if not args.no_write:
        learn = " --learn-train" if args.learn_train else ""
        if args.learn_train:
            body = ("TRAIN-LOG: a usage log written to a temporary file from the set's train split (one session per "
                    "request, calling its labelled tools); the test split is then ranked after replaying it.\n\n" + body)
        write_section(args.section, args.title, f"python benchmarks/set_retrieval.py {shown} --mode {args.mode}{learn}", body)


if __name__ == "__main__":
    main()
