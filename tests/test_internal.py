"""Internal is visibly internal (docs/architecture.md, "What is public"): a ``_``-prefixed
module is private to the package that holds it, a ``_``-prefixed name to the module that
defines it, and a package says what it offers in its ``__init__``'s ``__all__``.

Read from the sources with ``ast``: nothing is imported. Each list of exceptions holds what
exists today in files other work owns; an entry that no longer occurs fails the test, so the
lists only shrink.
"""

from __future__ import annotations

import ast
from pathlib import Path

from _paths import ROOT

SRC = ROOT / "src" / "toolscout"

# Packages whose __init__ does not yet say what they offer.
WITHOUT_ALL: frozenset[str] = frozenset()

# Private names imported from another module, as "importer -> module.name".
PRIVATE_NAME_IMPORTS: frozenset[str] = frozenset({
    "toolscout.sources.mcp.offline -> toolscout.sources.mcp.aggregator._to_tool",
})


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _module_name(path: Path) -> str:
    parts = ["toolscout", *path.relative_to(SRC).with_suffix("").parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _from_imports(path: Path) -> list[tuple[str, ast.ImportFrom]]:
    """``(absolute module, node)`` for each ``from ... import`` of a toolscout module in ``path``."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.ImportFrom):
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            base = ".".join([*anchor, base] if base else anchor)
        if base.split(".")[0] == "toolscout":
            out.append((base, node))
    return out


def _modules() -> set[str]:
    return {_module_name(f) for f in SRC.rglob("*.py")}


def _private_module_imports() -> list[str]:
    """Imports of a ``_`` module (or a module inside a ``_`` package) from outside the package holding it."""
    modules = _modules()
    found = []
    for path in sorted(SRC.rglob("*.py")):
        importer = _module_name(path)
        for base, node in _from_imports(path):
            for alias in node.names:
                target = f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                parts = target.split(".")
                for i, part in enumerate(parts):
                    owner = ".".join(parts[:i])
                    if _private(part) and not (importer == owner or importer.startswith(owner + ".")):
                        found.append(f"{path.relative_to(SRC.parent)}:{node.lineno}: {importer} -> {target}")
    return found


def _private_name_imports() -> set[str]:
    modules = _modules()
    found = set()
    for path in sorted(SRC.rglob("*.py")):
        for base, node in _from_imports(path):
            for alias in node.names:
                if _private(alias.name) and f"{base}.{alias.name}" not in modules:
                    found.add(f"{_module_name(path)} -> {base}.{alias.name}")
    return found


def test_the_scanner_resolves_relative_imports(tmp_path: Path) -> None:
    assert "toolscout.sources.mcp.aggregator._to_tool" in {i.split(" -> ")[1] for i in _private_name_imports()}
    assert any(target == "toolscout.storage._codec" for target in (
        f"{base}.{a.name}" for base, node in _from_imports(SRC / "storage" / "sqlite.py") for a in node.names
    ))


def test_a_private_module_is_imported_only_inside_its_package() -> None:
    assert _private_module_imports() == []


def test_a_private_name_stays_in_its_module() -> None:
    found = _private_name_imports()
    assert found - PRIVATE_NAME_IMPORTS == set(), "import a public name instead (or make it public)"
    assert PRIVATE_NAME_IMPORTS - found == set(), "fixed: remove these from PRIVATE_NAME_IMPORTS"


def test_every_package_says_what_it_offers() -> None:
    packages = {_module_name(f): f for f in SRC.rglob("__init__.py")}
    declared = {
        name
        for name, path in packages.items()
        if any(
            isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets)
            for node in ast.parse(path.read_text(encoding="utf-8")).body
        )
    }
    # a private package (``demo._spec``) is internal as a whole
    public = {name for name in packages if not any(_private(p) for p in name.split("."))}
    assert public - declared - WITHOUT_ALL == set(), "add __all__ to these packages' __init__"
    assert WITHOUT_ALL & declared == set(), "fixed: remove these from WITHOUT_ALL"
