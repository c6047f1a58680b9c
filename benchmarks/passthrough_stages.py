"""Where the time of one proxied ``tools/call`` goes, stage by stage, for each tree in ``--trees``.

The same set-up as benchmarks/passthrough_http.py (an SDK client, the streamable HTTP echo
upstream, ``toolscout serve --transport http`` of each tree in front of it, one direct call
then one through each tree's gateway, the order rotating call by call), with the gateway started
through benchmarks/_passthrough_probe.py, which marks the stage boundaries inside it. Per
call, from the marks (medians over all calls; the stages' medians need not add up to the
total's):

    outside the gateway      the client's SDK and the client -> gateway HTTP leg, both ways
    HTTP in -> SDK           toolscout's ASGI layers (host/origin, identity, mounts, owners),
                             and the wait for the client's request body (a second segment)
    SDK -> handler           the SDK server's transport, parse and dispatch
    handler -> upstream      session, guard (visibility, validation, approval, credentials)
    upstream round trip      the gateway's SDK client, the gateway -> upstream HTTP leg, the upstream
    upstream -> handler out  screening, audit, learning, result shaping
    handler out -> answer    the SDK server's result validation, serialisation and framing

    python benchmarks/passthrough_stages.py --trees /tmp/base/src src --rounds 3 --calls 100 --write

``--write`` puts the table in docs/benchmarks.md (section ``passthrough-stages``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np

from passthrough_http import MODES, gateways_in_front, interleaved, tree_label

BENCH = Path(__file__).resolve().parent
PROBE = BENCH / "_passthrough_probe.py"
STAGES = (
    "outside the gateway (client SDK, client <-> gateway HTTP)",
    "HTTP in -> SDK server (ASGI layers; the client's request body arriving)",
    "SDK server in -> toolscout handler",
    "handler -> upstream call",
    "upstream round trip (the gateway's upstream client, HTTP, the upstream)",
    "upstream back -> handler out",
    "handler out -> answer sent",
)


def _stages(via_ms: float, marks: list[float]) -> list[float]:
    request_in, sdk_in, handler_in, upstream_out, upstream_back, handler_out, answer_out = marks
    return [
        via_ms - (answer_out - request_in) * 1e3,
        (sdk_in - request_in) * 1e3,
        (handler_in - sdk_in) * 1e3,
        (upstream_out - handler_in) * 1e3,
        (upstream_back - upstream_out) * 1e3,
        (handler_out - upstream_back) * 1e3,
        (answer_out - handler_out) * 1e3,
    ]


async def _marks(proc: subprocess.Popen[Any], out: Path, n: int) -> list[list[float]]:
    out.unlink(missing_ok=True)
    proc.send_signal(signal.SIGUSR1)
    for _ in range(400):  # until the gateway has written them (bounded)
        if out.exists():
            try:
                return json.loads(out.read_text())[-n:]  # type: ignore[no-any-return]
            except ValueError:
                pass  # still being written
        await asyncio.sleep(0.02)
    raise RuntimeError("the probed gateway never wrote its marks")


async def main_async(trees: list[Path], rounds: int, calls: int) -> dict[str, dict[str, dict[str, float]]]:
    def probed(i: int, d: Path, args: list[str]) -> list[str]:
        return [sys.executable, str(PROBE), str(d / f"marks-{i}.json"), *args]

    samples: dict[tuple[int, str], list[list[float]]] = {}
    directs: dict[tuple[int, str], list[float]] = {}
    vias: dict[tuple[int, str], list[float]] = {}
    async with gateways_in_front(trees, probed) as (up, gateways):
        for _ in range(rounds):
            for label, mode in MODES.items():
                direct, via, _ = await interleaved(up, [url for url, _ in gateways], mode, calls)
                for i, ((_, proc), v) in enumerate(zip(gateways, via, strict=True)):
                    marks = await _marks(proc, Path(proc.args[2]), calls)  # probed()'s marks file
                    if len(marks) != calls:
                        raise RuntimeError(f"{len(marks)} complete marks for {calls} calls")
                    samples.setdefault((i, label), []).extend(_stages(x, m) for x, m in zip(v, marks, strict=True))
                    directs.setdefault((i, label), []).extend(direct)
                    vias.setdefault((i, label), []).extend(v)
    result: dict[str, dict[str, dict[str, float]]] = {}
    for key, rows in samples.items():
        i, mode = key
        stages = np.array(rows)
        row = {"direct p50": float(np.median(directs[key])), "via p50": float(np.median(vias[key]))}
        row["overhead p50"] = row["via p50"] - row["direct p50"]
        row.update({name: float(np.median(stages[:, k])) for k, name in enumerate(STAGES)})
        result.setdefault(f"{tree_label(trees[i])} ({trees[i]})", {})[mode] = row
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trees", nargs="+", type=Path, default=[BENCH.parent / "src"], help="source dirs to compare")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=100, help="interleaved calls per round and mode (one direct, one per tree)")
    parser.add_argument("--write", action="store_true", help="write the table to docs/benchmarks.md")
    args = parser.parse_args()
    out = asyncio.run(main_async(args.trees, args.rounds, args.calls))
    for tree, modes in out.items():
        for label, row in modes.items():
            print(f"\n{tree} ({label} client), ms per call, medians")
            for name, value in row.items():
                print(f"  {name:60} {value:7.2f}")
    if args.write:
        import os

        from _report import write_section

        columns = [(tree, label) for tree, modes in out.items() for label in modes]
        names = list(next(iter(next(iter(out.values())).values())))
        head = "| stage (ms, medians) | " + " | ".join(f"{tree} {label}" for tree, label in columns) + " |"
        lines = [head, "|---" * (len(columns) + 1) + "|"]
        lines += ["| " + name + " | " + " | ".join(f"{out[t][m][name]:.2f}" for t, m in columns) + " |" for name in names]
        body = (
            f"Per stage of one proxied `tools/call` (benchmarks/_passthrough_probe.py's clock marks in each gateway), "
            f"{args.rounds} rounds x {args.calls} calls per client mode, calls rotating across the trees; the stages' "
            f"medians need not add up to the total's; load average {os.getloadavg()[0]:.1f} at the end.\n\n" + "\n".join(lines) + "\n"
        )
        command = "python benchmarks/passthrough_stages.py --trees " + " ".join(str(t) for t in args.trees)
        command += f" --rounds {args.rounds} --calls {args.calls} --write"
        write_section("passthrough-stages", "MCP pass-through over HTTP: one proxied call by stage (issue 36)", command, body)


if __name__ == "__main__":
    main()
