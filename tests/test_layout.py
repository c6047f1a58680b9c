"""The package's layout shows its data flow: no module imports one that imports it back.

Every ``from .x import`` / ``import toolscout.x`` edge inside ``src/toolscout`` counts,
lazy (function-level) and type-only imports included: a cycle hidden in a function is
still two modules that each need the other.
"""

from __future__ import annotations

import ast
from pathlib import Path

from _paths import ROOT

SRC = ROOT / "src" / "toolscout"


def _module_name(path: Path) -> str:
    parts = ["toolscout", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[: len(anchor) - (node.level - 1)]
                base = ".".join([*anchor, base] if base else anchor)
            targets = [base, *(f"{base}.{a.name}" for a in node.names)]
        for target in targets:
            # the deepest toolscout module the import names
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name and target.startswith("toolscout"):
                out.add(target)
    return out


def _graph() -> dict[str, set[str]]:
    files = list(SRC.rglob("*.py"))
    modules = {_module_name(f) for f in files}
    graph = {_module_name(f): _imports(f, modules) for f in files}
    # A package's __init__ re-exporting its own submodules is not a cycle of the flow.
    for mod, deps in graph.items():
        graph[mod] = {d for d in deps if not mod.startswith(d + ".")}
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    found: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                found.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


def test_the_graph_sees_real_edges() -> None:
    graph = _graph()
    assert "toolscout.errors" in graph["toolscout.gateway"]
    assert "toolscout.store" in graph["toolscout.catalog"]  # a lazy import counts


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]


def test_no_module_imports_one_that_imports_it_back() -> None:
    cycles = _cycles(_graph())
    assert cycles == [], "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)
