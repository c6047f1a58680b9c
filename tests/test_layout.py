"""The package's layout shows its data flow: layers import one way, and no module imports
one that imports it back.

Every ``from .x import`` / ``import toolscout.x`` edge inside ``src/toolscout`` counts,
lazy (function-level) and type-only imports included: a cycle hidden in a function is
still two modules that each need the other, and a type-only import of a higher layer is
still knowledge that runs the wrong way.
"""

from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

from _paths import ROOT

SRC = ROOT / "src" / "toolscout"

# The layers, lowest first. A module may import modules of its own layer and of any layer
# below; importing a higher layer fails the test with the file and line. An entry names a
# module or a package (all its submodules); the longest entry that matches a module decides,
# so `toolscout.demo.runner` (runs a gateway) is a surface while the rest of `toolscout.demo`
# (the demo catalog) is a source. `toolscout` alone (the public facade) matches only itself.
# A new module must be placed here before this test passes, and every entry must name a
# module that exists. The flat top-level modules sit in the layer of the package DESIGN.md
# gives them (`access`, `accounting`): when those packages come, their modules move in
# there, and the layers stay where they are.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # what everything speaks: records, errors, names
    ("base", ("toolscout.errors", "toolscout.model", "toolscout._tool_fields", "toolscout.naming", "toolscout._sync", "toolscout.progress")),
    # one Store contract and its engines (SQLite, PostgreSQL)
    ("storage", ("toolscout.storage",)),
    # a request and a tool as they travel: parsed requests, wire formats
    ("requests, formats", ("toolscout.request", "toolscout.formats")),
    # who is calling and with what: the call context every handler receives, a source's result type
    ("context", ("toolscout.context", "toolscout.calls")),
    # what it cost: token counts, the session ledger
    ("accounting", ("toolscout.accounting",)),
    # who is calling and what they may do (principal, rules, approval, credentials, token
    # verification, audit), tool screening, and the one guard every operation runs through
    ("access", (
        "toolscout.access", "toolscout.security",
    )),
    # the pure in-memory catalog with change events
    ("catalog", ("toolscout.catalog_base",)),
    # where tools come from (the public Catalog with its loaders, open_catalog, the shared
    # catalog, the demo catalog) and how they are ranked (search, embedders, usage)
    ("sources, search", (
        "toolscout.sources", "toolscout.catalog", "toolscout.scaleout", "toolscout.demo",
        "toolscout.search", "toolscout.embed",
    )),
    # find and execute over a catalog, their results and meta-tool definitions, the namespace
    # browser and the cache of repeated finds; code mode (programs whose every tool call is
    # one guarded execute)
    ("gateway", (
        "toolscout.gateway", "toolscout.results", "toolscout.meta_tools", "toolscout.codemode",
        "toolscout.namespaces", "toolscout.find_cache", "toolscout._gateway",
    )),
    # a conversation over a gateway (`session`) and its pieces (`sessions`): the deferral rule,
    # and where sessions are kept between requests
    ("session", ("toolscout.session", "toolscout.sessions")),
    # the edges: protocols, the command line, provider adapters, reports
    ("surfaces", (
        "toolscout.server", "toolscout.cli", "toolscout.adapters", "toolscout.demo.runner", "toolscout.demo.view",
        "toolscout.eval", "toolscout",
    )),
)

# Imports of a higher layer that exist today in files other branches own; each is fixed
# there, then removed from this list (an entry that no longer occurs fails the test too).
# As "importing module -> imported module".
KNOWN_UPWARD: frozenset[str] = frozenset({
    # type-only: CallContext.approve is typed with approval's `Approve`, so the context knows
    # an access rule; the type belongs with the context (approval then imports it from there)
    "toolscout.context -> toolscout.access.approval",
})


def _module_name(path: Path) -> str:
    parts = ["toolscout", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path, modules: set[str]) -> set[str]:
    return {target for target, _line in _import_lines(path, modules)}


def _import_lines(path: Path, modules: set[str]) -> set[tuple[str, int]]:
    """``(module, line)`` for every toolscout module ``path`` imports."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out: set[tuple[str, int]] = set()
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
            # ``from . import formats`` imports the module formats, not the package's facade
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
        for target in targets:
            # the deepest toolscout module the import names
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != name and target.startswith("toolscout"):
                out.add((target, node.lineno))
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
    assert "toolscout.sources.functions" in graph["toolscout.catalog"]
    assert "toolscout.model" in graph["toolscout.catalog_base"]
    assert "toolscout.storage" in graph["toolscout.catalog_base"]  # a type-only import counts


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]


def test_no_module_imports_one_that_imports_it_back() -> None:
    cycles = _cycles(_graph())
    assert cycles == [], "import cycles:\n" + "\n".join(" -> ".join(c) for c in cycles)


# -- layers -------------------------------------------------------------------------------
def _layer_of(module: str) -> int | None:
    """The index in LAYERS of the longest entry naming ``module`` (None: not placed)."""
    best: tuple[int, int] | None = None
    for rank, (_label, entries) in enumerate(LAYERS):
        for entry in entries:
            hit = module == entry or (entry != "toolscout" and module.startswith(entry + "."))
            if hit and (best is None or len(entry) > best[0]):
                best = (len(entry), rank)
    return None if best is None else best[1]


def _upward(edges: list[tuple[str, str, str]]) -> list[str]:
    """``file:line: a (layer) -> b (layer)`` for each ``(module, imported, where)`` edge
    that runs from a lower layer to a higher one."""
    found = []
    for module, target, where in edges:
        low, high = _layer_of(module), _layer_of(target)
        if low is not None and high is not None and high > low:
            found.append(f"{where}: {module} ({LAYERS[low][0]}) imports {target} ({LAYERS[high][0]})")
    return found


def _edges() -> list[tuple[str, str, str]]:
    files = sorted(SRC.rglob("*.py"))
    modules = {_module_name(f) for f in files}
    edges = []
    for f in files:
        where = f.relative_to(SRC.parent).as_posix()
        for target, line in sorted(_import_lines(f, modules), key=lambda e: (e[1], e[0])):
            edges.append((_module_name(f), target, f"{where}:{line}"))
    return edges


def test_every_module_has_a_layer() -> None:
    unplaced = sorted(m for m in _graph() if _layer_of(m) is None)
    assert unplaced == [], "add these modules to LAYERS in tests/test_layout.py: " + ", ".join(unplaced)


def test_every_layer_entry_names_a_module() -> None:
    modules = set(_graph())
    entries = [entry for _label, names in LAYERS for entry in names]
    missing = [e for e in entries if e not in modules and not any(m.startswith(e + ".") for m in modules)]
    assert missing == [], "LAYERS names modules that do not exist: " + ", ".join(missing)
    assert len(entries) == len(set(entries)), "a module is placed twice"


def test_the_layer_table_orders_the_core() -> None:
    order = ["toolscout.model", "toolscout.storage.base", "toolscout.catalog_base", "toolscout.sources.open",
             "toolscout.gateway", "toolscout.session", "toolscout.server.app"]
    assert [_layer_of(m) for m in order] == sorted({_layer_of(m) for m in order})  # strictly rising
    assert _layer_of("toolscout.demo") < _layer_of("toolscout.demo.runner")  # type: ignore[operator]
    below_catalog = ["toolscout.request", "toolscout.context", "toolscout.accounting.ledger", "toolscout.access.visibility", "toolscout.catalog_base"]
    assert [_layer_of(m) for m in below_catalog] == sorted({_layer_of(m) for m in below_catalog})  # type: ignore[type-var]
    assert _layer_of("toolscout") == len(LAYERS) - 1 and _layer_of("toolscout_extra") is None


def test_an_upward_import_is_reported_with_its_place() -> None:
    edges = [("toolscout.catalog_base", "toolscout.sources.functions", "toolscout/catalog_base.py:12"),
             ("toolscout.gateway", "toolscout.catalog_base", "toolscout/gateway.py:30")]
    assert _upward(edges) == [
        "toolscout/catalog_base.py:12: toolscout.catalog_base (catalog) imports toolscout.sources.functions (sources, search)"
    ]


def test_layers_import_only_downwards() -> None:
    edges = _edges()
    unexpected = _upward([e for e in edges if f"{e[0]} -> {e[1]}" not in KNOWN_UPWARD])
    assert unexpected == [], "imports that run up the layers (see LAYERS):\n" + "\n".join(unexpected)
    still = {f"{module} -> {target}" for module, target, _where in edges}
    assert KNOWN_UPWARD - still == set(), "fixed: remove these from KNOWN_UPWARD"


def test_the_pure_catalog_loads_without_sources_search_or_storage() -> None:
    """The bottom catalog works with nothing above it imported: the package's facade
    (``toolscout/__init__``, which exports the loading ``Catalog``) is bypassed."""
    code = textwrap.dedent(
        f"""
        import importlib, json, sys, types
        package = types.ModuleType("toolscout")
        package.__path__ = [{str(SRC)!r}]
        sys.modules["toolscout"] = package
        base = importlib.import_module("toolscout.catalog_base")
        from toolscout.model import Tool
        events = []
        catalog = base.BaseCatalog()
        catalog.subscribe(lambda change: events.append([list(change.added), list(change.removed)]))
        catalog.add(Tool("send_email", "Send an email."), lambda args: "sent")
        catalog.remove("send_email")
        loaded = sorted(m for m in sys.modules if m.startswith("toolscout."))
        print(json.dumps({{"loaded": loaded, "events": events, "generation": catalog.generation}}))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    assert set(result["loaded"]) <= {"toolscout.catalog_base", "toolscout.errors", "toolscout.model", "toolscout._tool_fields"}, result["loaded"]
    assert result["events"] == [[["send_email"], []], [[], ["send_email"]]] and result["generation"] == 2


# -- imports inside functions -------------------------------------------------------------
# Function-level imports of toolscout's own modules, per file. Everything else is imported at
# the top: a lazy import never dodges an ordering problem. What stays lazy loads a command's
# own heavy stack (serve's MCP server, audit --config's upstreams, fastapi for the console and
# the HTTP API, rich for the demo's tables) that another command or the stdio path would pay
# for at start-up, and says so in a comment on the import; optional extras are third-party
# and name their extra. The count may only go down: the next test fails when one can drop.
ALLOWED_FUNCTION_IMPORTS: dict[str, int] = {
    "cli/_exits.py": 3,  # errors (pydantic) and formats, and _hints over errors: off --help and completion
    "cli/audit_command.py": 4,  # the screen; the MCP aggregator, tool-list cache and config loader
    "cli/console_command.py": 1,  # server.console (fastapi)
    "cli/demo_command.py": 1,  # demo.view (rich)
    "cli/install_command.py": 2,  # server.app and server.serve_config: the start-up check runs the serve stack
    "cli/serve_command.py": 3,  # server.serve_config, server.app (twice): the serve stack
    "server/app.py": 3,  # http_api, console and credentials_api (fastapi), off the stdio path
}


def _own_function_imports(path: Path) -> list[int]:
    """Lines of imports of toolscout modules that sit inside a function of ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    lines: set[int] = set()
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(fn):
            own = (isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").split(".")[0] == "toolscout")) or (
                isinstance(node, ast.Import) and any(a.name.split(".")[0] == "toolscout" for a in node.names)
            )
            if own:
                lines.add(node.lineno)
    return sorted(lines)


def _function_imports() -> dict[str, list[int]]:
    found = {f.relative_to(SRC).as_posix(): _own_function_imports(f) for f in sorted(SRC.rglob("*.py"))}
    return {f: lines for f, lines in found.items() if lines}


def test_the_function_import_counter_sees_nested_and_relative_imports(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "import json\nfrom .errors import ConfigError\n"
        "def f():\n    import yaml\n    from .model import Tool\n"
        "    async def g():\n        import toolscout.store\n"
    )
    assert _own_function_imports(source) == [5, 7]


def test_function_level_imports_of_own_modules_only_go_down() -> None:
    over = [
        f"{file}: {len(lines)} > {ALLOWED_FUNCTION_IMPORTS.get(file, 0)} at lines {lines}"
        for file, lines in _function_imports().items()
        if len(lines) > ALLOWED_FUNCTION_IMPORTS.get(file, 0)
    ]
    assert over == [], "import toolscout's modules at the top (only optional extras are lazy):\n" + "\n".join(over)


def test_the_allowance_is_no_larger_than_needed() -> None:
    counts = Counter({file: len(lines) for file, lines in _function_imports().items()})
    slack = {file: counts[file] for file, allowed in ALLOWED_FUNCTION_IMPORTS.items() if counts[file] < allowed}
    assert slack == {}, f"lower ALLOWED_FUNCTION_IMPORTS to these counts: {slack}"
