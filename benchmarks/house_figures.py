"""The house figures of docs/architecture.md (issue 35), for any number of checkouts side by side.

How big the package is and how it is spread (modules, lines, median and largest module,
modules over 600 lines), how big the two core classes are, how flat the top level is, and
how often the tests reach past the public names. Everything is read from the files with
``ast`` (nothing is imported or run), so a checkout of any revision can be measured:

    .venv/bin/python benchmarks/house_figures.py                     # this checkout
    git worktree add /tmp/base 672a837
    .venv/bin/python benchmarks/house_figures.py /tmp/base .         # before | after
    .venv/bin/python benchmarks/house_figures.py --json /tmp/base .

What each figure counts (the definitions the table in docs/architecture.md uses):

- *modules*: ``.py`` files under ``src/toolscout``; *lines*: their physical lines.
- *public methods* of a class: functions defined in its body (properties included) whose
  name does not start with ``_``.
- *top-level modules*: ``.py`` files directly in ``src/toolscout`` other than ``__init__``;
  *top-level packages*: folders there with an ``__init__.py``.
- *private imports* in tests: import statements that take a private name from toolscout,
  either a name or a part of the module path starting with one ``_`` (``from toolscout.x
  import _y``, ``from toolscout.storage._codec import z``, ``import toolscout.storage._codec``).
- *private monkeypatches* in tests: ``monkeypatch.setattr``/``delattr``, ``mock.patch`` and
  ``patch.object`` calls whose attribute (the literal string argument, or the last part of
  a dotted target) starts with one ``_``.
- *test reach-ins*: private imports plus private monkeypatches.
- *private attribute uses* in tests: ``x._y`` anywhere in a test where ``x`` is not ``self``
  or ``cls`` (a test's own helper classes use their own private attributes freely).

The duplicate-pair count in the table is not computed here: it comes from a separate
clone detector, and the table gives its figure and options.
"""

from __future__ import annotations

import argparse
import ast
import json
import statistics
import sys
from pathlib import Path
from typing import Any

OVER = 600
CLASSES = {"Gateway": "gateway.py", "Session": "session.py"}
_PATCHERS = {"setattr", "delattr", "patch", "object"}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _lines(path: Path) -> int:
    return len(path.read_text(encoding="utf-8").splitlines())


def _class(tree: ast.Module, name: str) -> dict[str, int] | None:
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            public = [
                f.name
                for f in node.body
                if isinstance(f, ast.FunctionDef | ast.AsyncFunctionDef) and not f.name.startswith("_")
            ]
            return {"lines": (node.end_lineno or node.lineno) - node.lineno + 1, "public_methods": len(public)}
    return None


def _private_imports(tree: ast.AST) -> int:
    count = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and (node.module or "").split(".")[0] == "toolscout":
            private_module = any(_private(part) for part in (node.module or "").split("."))
            count += private_module or any(_private(alias.name) for alias in node.names)
        elif isinstance(node, ast.Import):
            count += any(
                alias.name.split(".")[0] == "toolscout" and any(_private(p) for p in alias.name.split("."))
                for alias in node.names
            )
    return count


def _private_attributes(tree: ast.AST) -> int:
    return sum(
        1
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and _private(node.attr)
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
    )


def _patched_attribute(call: ast.Call) -> str | None:
    """The attribute a monkeypatch or mock call replaces, when it is spelt as a literal."""
    func = call.func
    named_patch = isinstance(func, ast.Name) and func.id == "patch"
    if not named_patch and not (isinstance(func, ast.Attribute) and func.attr in _PATCHERS):
        return None
    if isinstance(func, ast.Attribute) and func.attr in {"setattr", "delattr"}:
        owner = func.value
        if not (isinstance(owner, ast.Name) and owner.id == "monkeypatch"):
            return None
    strings = [a.value for a in call.args[:2] if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    if not strings:
        return None
    # ``setattr(obj, "_name", v)`` names the attribute second; ``setattr("a.b._c", v)`` and
    # ``patch("a.b._c")`` name a dotted target first
    target = strings[-1] if len(call.args) >= 2 and isinstance(call.args[1], ast.Constant) and isinstance(call.args[1].value, str) else strings[0]
    return target.rsplit(".", 1)[-1]


def _private_patches(tree: ast.AST) -> int:
    return sum(
        1
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and (attr := _patched_attribute(node)) is not None and _private(attr)
    )


def figures(root: Path) -> dict[str, Any]:
    src = root / "src" / "toolscout"
    if not src.is_dir():
        raise SystemExit(f"{root}: no src/toolscout here (give the root of a checkout)")
    files = sorted(src.rglob("*.py"))
    sizes = {f.relative_to(src).as_posix(): _lines(f) for f in files}
    largest = max(sizes, key=lambda k: sizes[k])
    out: dict[str, Any] = {
        "modules": len(files),
        "lines": sum(sizes.values()),
        "median_module_lines": statistics.median(sizes.values()),
        "largest_module": f"{largest} ({sizes[largest]})",
        f"modules_over_{OVER}": sum(1 for n in sizes.values() if n > OVER),
        "top_level_modules": sum(1 for f in src.glob("*.py") if f.name != "__init__.py"),
        "top_level_packages": sum(1 for d in src.iterdir() if d.is_dir() and (d / "__init__.py").is_file()),
    }
    for cls, filename in CLASSES.items():
        found = _class(ast.parse((src / filename).read_text(encoding="utf-8")), cls)
        out[f"{cls}_lines"] = found["lines"] if found else None
        out[f"{cls}_public_methods"] = found["public_methods"] if found else None
    imports = patches = attributes = 0
    for test in sorted((root / "tests").rglob("*.py")):
        tree = ast.parse(test.read_text(encoding="utf-8"))
        imports += _private_imports(tree)
        patches += _private_patches(tree)
        attributes += _private_attributes(tree)
    out["test_private_imports"] = imports
    out["test_private_monkeypatches"] = patches
    out["test_reach_ins"] = imports + patches
    out["test_private_attribute_uses"] = attributes
    return out


def table(columns: dict[str, dict[str, Any]]) -> str:
    names = list(columns)
    rows = ["| figure | " + " | ".join(names) + " |", "|---|" + "---|" * len(names)]
    for key in next(iter(columns.values())):
        rows.append(f"| {key.replace('_', ' ')} | " + " | ".join(str(columns[n][key]) for n in names) + " |")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("roots", nargs="*", type=Path, help="checkouts to measure (default: this one)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a Markdown table")
    args = parser.parse_args(argv)
    roots = args.roots or [Path(__file__).resolve().parent.parent]
    columns = {str(r): figures(r.resolve()) for r in roots}
    print(json.dumps(columns, indent=2) if args.json else table(columns))
    return 0


if __name__ == "__main__":
    sys.exit(main())
