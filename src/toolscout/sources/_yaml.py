"""YAML read as JSON data, for declaration files and OpenAPI documents.

PyYAML's safe loader, with three differences that matter when the result must be JSON:

* dates and times stay the text they were written as: JSON has no date type, and a
  schema's ``default: 2024-01-01`` or ``example: 2024-01-01`` means that string;
* a mapping key written as a scalar stays its text: ``on:``, ``no:``, ``null:`` or ``1:``
  are property names, not ``True``, ``False``, ``None`` or ``1`` (JSON keys are strings);
* aliases may neither make the document recursive (``&a [*a]``) nor expand it beyond
  ``1M + 10 x`` its own node count (a "billion laughs" file is a few hundred bytes, and
  every JSON encoding of it would take the process down);
* nesting is bounded: libyaml (used when PyYAML has it, and ten times faster) stops at
  1000 levels; the pure-Python fallback stops at ``MAX_DEPTH``, because its composer is
  recursive and its scanner slows down with the depth of flow collections.

Problems are ``yaml.YAMLError``s with a mark, so callers report them like syntax errors.
"""

from __future__ import annotations

from collections.abc import Hashable
from typing import Any

import yaml
from yaml.composer import ComposerError
from yaml.constructor import ConstructorError

__all__ = ["JsonLoader", "PyJsonLoader", "load_yaml"]

MAX_EXPANSION = 1_000_000
EXPANSION_RATIO = 10
MAX_DEPTH = 200


class _JsonData:
    """What makes a safe loader's output JSON data (see the module docstring)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: yaml.Node | None, index: Any) -> yaml.Node:
        """(Only the pure-Python composer calls this; libyaml has its own limit.)"""
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise ComposerError(
                    None, None, f"the document nests deeper than {MAX_DEPTH} levels", self.peek_event().start_mark
                )
            return super().compose_node(parent, index)  # type: ignore[no-any-return]
        finally:
            self._depth -= 1

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[Any, Any]:
        if not isinstance(node, yaml.MappingNode):
            raise ConstructorError(None, None, f"expected a mapping node, but found {node.id}", node.start_mark)
        self.flatten_mapping(node)
        mapping: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            if isinstance(key_node, yaml.ScalarNode):
                key: Any = key_node.value
            else:
                key = self.construct_object(key_node, deep=deep)
                if not isinstance(key, Hashable):
                    raise ConstructorError(
                        "while constructing a mapping", node.start_mark, "found unhashable key", key_node.start_mark
                    )
            mapping[key] = self.construct_object(value_node, deep=deep)
        return mapping


def _timestamp_as_text(loader: Any, node: yaml.Node) -> str:
    return str(loader.construct_scalar(node))


class PyJsonLoader(_JsonData, yaml.SafeLoader):
    """The pure-Python variant (PyYAML built without libyaml)."""


PyJsonLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_text)

if hasattr(yaml, "CSafeLoader"):

    class JsonLoader(_JsonData, yaml.CSafeLoader):  # type: ignore[misc]
        """The libyaml variant."""

    JsonLoader.add_constructor("tag:yaml.org,2002:timestamp", _timestamp_as_text)
else:  # pragma: no cover - PyYAML without libyaml
    JsonLoader = PyJsonLoader  # type: ignore[misc]


def load_yaml(text: str, *, loader_class: type[Any] | None = None) -> tuple[Any, yaml.Node | None]:
    """The data of a one-document YAML text, and its node tree (for line numbers)."""
    try:
        loader = (loader_class or JsonLoader)(text)
    except UnicodeEncodeError as exc:  # libyaml wants UTF-8: a lone surrogate cannot be
        raise ValueError(f"the text is not valid Unicode: {exc.reason}") from None
    try:
        root = loader.get_single_node()
        if root is None:
            return None, None
        if "&" in text:  # no anchor, no alias: a plain tree, nothing to check
            check_aliases(root)
        return loader.construct_document(root), root
    finally:
        loader.dispose()


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return []


def check_aliases(root: yaml.Node) -> None:
    """Refuse a node graph with a cycle, or whose tree (aliases expanded) is too big.

    Iterative depth-first walk: a node started and not finished is on the current path,
    so meeting it again is a cycle; sizes are summed bottom-up, once per distinct node.
    """
    size: dict[int, int] = {}
    open_: set[int] = set()
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, finished = stack.pop()
        key = id(node)
        if finished:
            open_.discard(key)
            size[key] = 1 + sum(size[id(c)] for c in _children(node))
            continue
        if key in size:
            continue
        open_.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in open_:
                raise ConstructorError(
                    None, None, "an alias refers to a node that contains it (a recursive document)", child.start_mark
                )
            if id(child) not in size:
                stack.append((child, False))
    limit = MAX_EXPANSION + EXPANSION_RATIO * len(size)
    if size[id(root)] > limit:
        raise ConstructorError(
            None,
            None,
            f"aliases expand the document to {size[id(root)]:,} nodes (more than {limit:,})",
            root.start_mark,
        )
