"""A catalog as columns: the snapshot the SQLite engine writes next to its rows.

A catalog saved as columns loads without decoding a row per tool: each text field is its
distinct values (one UTF-8 buffer and their end offsets, in characters) and one code per
tool (-1: None), and the shared fields are the distinct profiles (JSON) and a code per
tool. Equal texts (a schema many tools share) are stored, and loaded, once. 1M tools load
in about 2 s of CPU instead of about 25 s of row decoding.

Descriptions and schema texts of tools that mostly have their own stay in the columns until
first read (:class:`~toolscout.model.DeferredTool`, :class:`_DeferredTexts`). Pure: the
engine stores :func:`tool_columns` as arrays and hands them back to :func:`tools_from_columns`.
"""

from __future__ import annotations

import gc
import json
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from itertools import chain, repeat
from operator import attrgetter
from typing import Any

import numpy as np

from ..model import DEFERRED_SLOTS, EMPTY_MAP, DeferredTool, Tool, shared_profile
from ._codec import DEFER_POLICIES, shared_annotations

_new_tool = object.__new__

_TEXT_SLOTS = ("name", "description", "_schema_json", "_output_json", "original_name", "_version")


def _text_column(name: str, values: Iterable[str | None], n: int) -> dict[str, Any]:
    table: dict[str, int] = {}
    codes = np.fromiter((-1 if v is None else table.setdefault(v, len(table)) for v in values), np.int32, n)
    texts = list(table)
    data = "".join(texts).encode()
    ends = np.cumsum(np.fromiter(map(len, texts), np.int64, len(texts)))
    out = {f"{name}.text": np.frombuffer(data, np.uint8), f"{name}.ends": ends, f"{name}.codes": codes}
    if name in DEFERRED_SLOTS:  # read a text at a time (_DeferredTexts): where each ends in bytes
        same = len(data) == (int(ends[-1]) if len(ends) else 0)  # ASCII: bytes are characters
        out[f"{name}.byte_ends"] = ends if same else np.cumsum(np.fromiter(map(len, map(str.encode, texts)), np.int64, len(texts)))
    return out


def _text_values(arrays: Mapping[str, Any], name: str, n: int) -> list[Any]:
    raw = np.ascontiguousarray(arrays[f"{name}.text"], np.uint8)
    ends_array = np.asarray(arrays[f"{name}.ends"], np.int64)
    texts: list[Any] = []
    if len(ends_array) > 1 and int(ends_array[-1]) == len(raw):  # as many bytes as characters: ASCII
        # A NUL after each text and one split, no slice objects (1M versions: 0.21 -> 0.13 s)
        texts = np.insert(raw, ends_array[:-1], 0).tobytes().decode("ascii").split("\x00")
        if len(texts) != len(ends_array):
            texts = []  # a text holds NUL: slice instead
    codes = np.asarray(arrays[f"{name}.codes"], np.int64)
    if not texts:
        text = str(memoryview(raw), "utf-8")
        ends = ends_array.tolist()
        if ends and ends[-1] != len(text):
            raise ValueError(f"column {name} does not fit")
        texts = list(map(text.__getitem__, map(slice, [0, *ends[:-1]], ends)))
        del text
    if len(codes) != n or (len(codes) and int(codes.max()) >= len(texts)):
        raise ValueError(f"column {name} does not fit")
    if len(texts) == n and bool((codes == np.arange(n)).all()):
        return texts  # every value distinct (names)
    texts.append(None)
    return list(map(texts.__getitem__, np.where(codes < 0, len(texts) - 1, codes).tolist()))


def _profile_record(p: Any) -> dict[str, Any]:
    return {
        "source": p.source,
        "source_id": p.source_id,
        "origin": p.origin,
        "category": p.category,
        "tags": list(p.tags),
        "annotations": p.annotations.to_mcp() if p.annotations else None,
        "permission": p.permission,
        "searchable": p.searchable,
        "available": p.available,
        "platforms": list(p.platforms),
        "defer": p.defer.value,
        "display": dict(p.display),
        "descriptions": dict(p.descriptions),
        "meta": dict(p.meta),
        "kind": p.kind,
    }


def tool_columns(tools: list[Tool]) -> dict[str, Any]:
    n = len(tools)
    out: dict[str, Any] = {}
    for slot in _TEXT_SLOTS:
        values = (t.version for t in tools) if slot == "_version" else map(attrgetter(slot), tools)
        out.update(_text_column(slot, values, n))
    seen: dict[int, int] = {}
    records: list[dict[str, Any]] = []
    codes = np.empty(n, np.int32)
    for i, tool in enumerate(tools):
        p = tool._profile
        code = seen.get(id(p))
        if code is None:
            code = seen[id(p)] = len(records)
            records.append(_profile_record(p))
        codes[i] = code
    out["profiles"] = np.frombuffer(json.dumps(records, ensure_ascii=False).encode(), np.uint8)
    out["profile.codes"] = codes
    return out


_BLOCK = 128
"""Deferred tools are filled a block of this many consecutive rows at a time: the first
read costs ~50 µs, and a pass that reads every tool (an index build) pays ~0.5 µs a tool,
not the ~4 µs of filling tools one by one."""


class _DeferredTexts:
    """The description and schema texts of a store's tools, read a block of tools at a time.

    Holds, for each of :data:`~toolscout.model.DEFERRED_SLOTS`, its column's UTF-8 bytes
    (copied out of the stored value, which is then freed), where each distinct text ends
    in them and each tool's code. A distinct text is decoded once and shared by the tools
    holding it, as a whole-column load shares it. A filled block drops its tools and they
    drop their block, so this goes once every block is filled (or its tools are gone)."""

    def __init__(self, arrays: Mapping[str, Any], n: int) -> None:
        self._lock = threading.Lock()
        self._columns = []
        for slot in DEFERRED_SLOTS:
            data = bytes(arrays[f"{slot}.text"])
            ends = np.asarray(arrays[f"{slot}.byte_ends"], np.int64)
            chars = np.asarray(arrays[f"{slot}.ends"], np.int64)
            codes = np.array(arrays[f"{slot}.codes"], np.int32)
            if len(codes) != n or len(ends) != len(chars) or (len(ends) and int(ends[-1]) != len(data)):
                raise ValueError(f"column {slot} does not fit")
            if len(codes) and (int(codes.max()) >= len(ends) or int(codes.min()) < -1):
                raise ValueError(f"column {slot} does not fit")
            inner = ends[ends < len(data)]  # each text starts on a character (not a UTF-8 continuation byte)
            if len(inner) and bool((np.frombuffer(data, np.uint8)[inner] & 0xC0 == 0x80).any()):
                raise ValueError(f"column {slot} does not fit")
            starts = memoryview(np.concatenate([np.zeros(1, np.int64), ends]))  # indexing gives ints
            self._columns.append((memoryview(data), starts, codes, [None] * len(ends)))

    def fill(self, block: _TextBlock) -> None:
        """Set the texts of ``block``'s tools (once: a block already filled is left)."""
        with self._lock:
            tools = block.tools
            if tools is None:
                return
            start = block.start
            for (data, starts, codes, decoded), slot in zip(self._columns, DEFERRED_SLOTS, strict=True):
                values: list[str | None] = []
                for code in codes[start : start + len(tools)].tolist():
                    if code < 0:
                        values.append("" if slot == "description" else None)
                        continue
                    text = decoded[code]
                    if text is None:
                        text = decoded[code] = str(data[starts[code] : starts[code + 1]], "utf-8")
                    values.append(text)
                deque(map(Tool.__dict__[slot].__set__, tools, values), maxlen=0)
            deque(map(_DEFERRED_TEXTS.__delete__, tools), maxlen=0)  # after the texts: see DeferredTool
            block.tools = None


class _TextBlock:
    """Up to ``_BLOCK`` consecutive deferred tools, filled together (``DeferredTool._texts``)."""

    __slots__ = ("start", "texts", "tools")

    def __init__(self, texts: _DeferredTexts, start: int, tools: list[Tool]) -> None:
        self.texts, self.start, self.tools = texts, start, tools

    def fill(self) -> None:
        self.texts.fill(self)


_DEFERRED_TEXTS = DeferredTool.__dict__["_texts"]
_DEFER_BYTES = 64


def _defer(arrays: Mapping[str, Any], n: int) -> bool:
    """Whether to leave the texts in the columns: when the columns say where each text ends
    in bytes (saves before they did: read now) and the distinct descriptions hold at least
    ``_DEFER_BYTES`` a tool, i.e. most tools have their own. Decoding a few shared texts is
    cheap, and a deferred tool costs ~16 bytes (its slot, its place in a block) until read."""
    return all(f"{s}.byte_ends" in arrays for s in DEFERRED_SLOTS) and len(arrays["description.text"]) >= _DEFER_BYTES * n


def tools_from_columns(arrays: Mapping[str, Any]) -> list[Tool]:
    """The tools :func:`tool_columns` wrote: slots filled a column at a time (map over
    slot setters: no Python code runs per tool). Descriptions and schema texts are left in
    the columns until a tool's are first read (:class:`~toolscout.model.DeferredTool`),
    if the columns say where each ends in bytes (saves before they did: read now)."""
    enabled = gc.isenabled()
    gc.disable()  # 1M new objects, none garbage: collections would only walk them (~0.3 s)
    try:
        return _make_tools(arrays)
    finally:
        if enabled:
            gc.enable()


def _make_tools(arrays: Mapping[str, Any]) -> list[Tool]:
    n = len(arrays["profile.codes"])
    profiles = [
        shared_profile(
            r["source"],
            r["source_id"],
            r["origin"],
            r["category"],
            tuple(r["tags"]),
            shared_annotations(json.dumps(r["annotations"], sort_keys=True)) if r["annotations"] else None,
            r["permission"],
            bool(r["searchable"]),
            bool(r["available"]),
            tuple(r["platforms"]),
            DEFER_POLICIES[r["defer"]],
            r["display"] or EMPTY_MAP,
            r["descriptions"] or EMPTY_MAP,
            r["meta"] or EMPTY_MAP,
            r["kind"],
        )
        for r in json.loads(arrays["profiles"].tobytes().decode())
    ]
    deferred = _DeferredTexts(arrays, n) if _defer(arrays, n) else None
    tools = list(map(_new_tool, repeat(Tool if deferred is None else DeferredTool, n)))
    for slot in _TEXT_SLOTS:
        if deferred is None or slot not in DEFERRED_SLOTS:
            deque(map(Tool.__dict__[slot].__set__, tools, _text_values(arrays, slot, n)), maxlen=0)
    if deferred is not None:
        blocks = [_TextBlock(deferred, start, tools[start : start + _BLOCK]) for start in range(0, n, _BLOCK)]
        owners = chain.from_iterable(map(repeat, blocks, map(len, map(attrgetter("tools"), blocks))))
        deque(map(_DEFERRED_TEXTS.__set__, tools, owners), maxlen=0)
        del blocks
    codes = arrays["profile.codes"].tolist()
    deque(map(Tool.__dict__["_profile"].__set__, tools, map(profiles.__getitem__, codes)), maxlen=0)
    return tools
