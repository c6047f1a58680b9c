"""``tail_logs``, declared in ``tools.yaml`` (``handler: mytools.ops:tail_logs``)."""

from __future__ import annotations

from pathlib import Path

LOGS = Path(__file__).resolve().parent.parent / "logs"


def tail_logs(service: str, lines: int = 20) -> str:
    """The last ``lines`` lines of ``logs/<service>.log`` (a sample stands in for journald)."""
    path = LOGS / f"{Path(service).name}.log"
    if not path.is_file():
        return f"no log for {service}"
    return "\n".join(path.read_text(encoding="utf-8").splitlines()[-max(lines, 0):])
