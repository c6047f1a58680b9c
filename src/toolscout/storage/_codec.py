"""Pure helpers every storage engine shares: tool rows, restoring tools, arrays as ``.npz``.

Why one module: the engines store the same records (``Tool.to_dict`` minus the schema, the
schema text verbatim) and the same array values, so a tool or an index snapshot written by
one engine reads back identically from another. Nothing here touches a database.
"""

from __future__ import annotations

import hashlib
import io
import json
import struct
import zipfile
import zlib
from collections.abc import Iterable, Mapping, Sequence
from functools import lru_cache
from typing import Any

import numpy as np
from numpy.lib import format as npy

from ..errors import StoreError
from ..model import (
    EMPTY_MAP,
    PROFILE_FIELDS,
    Annotations,
    DeferPolicy,
    Tool,
    compact_json,
    shared_profile,
)

Row = tuple[int, str, str, str, str]
"""``(pos, name, version, schema, record)``: one tool as every engine stores it."""


def check_value(value: object) -> bytes | str:
    if isinstance(value, bytes | str):
        return value
    if isinstance(value, bytearray | memoryview):
        return bytes(value)
    raise StoreError(f"store values are bytes or str, not {type(value).__name__}")


def tool_row(pos: int, tool: Tool) -> Row:
    record = tool.to_dict()
    del record["input_schema"], record["version"]
    return (pos, tool.name, tool.version, tool.schema_json, json.dumps(record, ensure_ascii=False))


DEFER_POLICIES = {p.value: p for p in DeferPolicy}
_RESTORED_SLOTS = frozenset({"_schema_json", "_output_json", "_version", "_profile", "description", "name", "original_name"})
FAST = frozenset(Tool.__slots__) == _RESTORED_SLOTS and PROFILE_FIELDS == (
    "source", "source_id", "origin", "category", "tags", "annotations", "permission", "searchable",
    "available", "platforms", "defer", "display", "descriptions", "meta", "kind",
)


def restore_tool(rec: dict[str, Any], schema: str, version: str) -> Tool:
    """Rebuild a Tool from a stored row without re-validating or re-serialising it.

    Rows were written from valid Tools, so this sets the slots directly (about 2x faster
    than ``Tool.from_dict``). If ``Tool`` gains a field this module does not know, ``FAST``
    is false and the checked constructor is used instead.
    """
    if not FAST:
        tool = Tool.from_dict(rec)
        object.__setattr__(tool, "_schema_json", schema)
        object.__setattr__(tool, "_version", version)
        return tool
    tool = _new_tool(Tool)
    get = rec.get
    output, ann = get("output_schema"), get("annotations")
    _set(tool, "name", rec["name"])
    _set(tool, "description", get("description") or "")
    _set(tool, "_schema_json", schema)
    _set(tool, "_output_json", compact_json(output) if output else None)
    _set(tool, "_version", version)
    _set(tool, "original_name", get("original_name"))
    source = get("source") or "python"
    _set(
        tool,
        "_profile",
        shared_profile(
            source,
            get("source_id"),
            get("origin") or source,
            get("category") or None,
            tuple(get("tags") or ()),
            shared_annotations(json.dumps(ann, sort_keys=True)) if ann else None,
            get("permission"),
            bool(get("searchable", True)),
            bool(get("available", True)),
            tuple(get("platforms") or ()),
            DEFER_POLICIES[get("defer") or "automatic"],
            get("display") or EMPTY_MAP,
            get("descriptions") or EMPTY_MAP,
            get("meta") or EMPTY_MAP,
            get("kind") or "tool",
        ),
    )
    return tool


_new_tool = object.__new__
_set = object.__setattr__


def tools_from_rows(rows: Sequence[tuple[str, str, str]], where: str, hint: str | None = None) -> list[Tool]:
    """``(version, schema, record)`` rows as Tools (one JSON parse for every record: 10k
    small ``json.loads`` calls cost twice as much)."""
    try:
        records = json.loads("[" + ",".join(r[2] for r in rows) + "]")
        return [restore_tool(rec, r[1], r[0]) for rec, r in zip(records, rows, strict=True)]
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise StoreError(f"store {where}: a tool record is malformed: {exc}", hint=hint, path=where) from exc


@lru_cache(maxsize=256)
def shared_annotations(key: str) -> Annotations | None:
    """Annotations are frozen and repeat a lot across tools: share one object per value."""
    return Annotations.from_mcp(json.loads(key))



# -- arrays ----------------------------------------------------------------------------
def decode_arrays(value: object) -> dict[str, Any] | None:
    """The arrays of an ``.npz`` value written by :func:`encode_arrays`; ``None`` if ``value`` is not
    bytes or does not parse (a damaged snapshot is a cache miss: the caller rebuilds)."""
    if not isinstance(value, bytes):
        return None
    try:
        found = _npz_views(value)
        if found is not None:
            return found
        with np.load(io.BytesIO(value), allow_pickle=False) as data:
            return {k: data[k] for k in data.files}
    except (ValueError, OSError, EOFError, zipfile.BadZipFile, struct.error):
        return None


def _npz_views(value: bytes) -> dict[str, Any] | None:
    """The arrays of an ``.npz`` value as read-only views of ``value`` (no copy), each
    member's CRC checked as ``np.load`` checks it; ``None`` if a member is not stored plain
    (compressed, encrypted), so the caller reads it with ``np.load``. Reading 1M tools'
    index snapshot this way skips copying ~400 MB."""
    out: dict[str, Any] = {}
    view = memoryview(value)
    with zipfile.ZipFile(io.BytesIO(value)) as archive:
        for info in archive.infolist():
            if info.compress_type != zipfile.ZIP_STORED or info.flag_bits & 1 or not info.filename.endswith(".npy"):
                return None
            at = info.header_offset
            if value[at : at + 4] != b"PK\x03\x04":
                raise zipfile.BadZipFile("bad local header")
            name_len, extra_len = struct.unpack("<HH", value[at + 26 : at + 30])
            start = at + 30 + name_len + extra_len
            member = view[start : start + info.file_size]
            if len(member) != info.file_size or zlib.crc32(member) != info.CRC:
                raise zipfile.BadZipFile(f"bad CRC for {info.filename}")
            header = io.BytesIO(member[: min(len(member), 1 << 16)])
            version = npy.read_magic(header)
            if version == (1, 0):
                shape, fortran, dtype = npy.read_array_header_1_0(header)
            elif version == (2, 0):
                shape, fortran, dtype = npy.read_array_header_2_0(header)
            else:
                return None
            if dtype.hasobject:
                raise ValueError("object arrays are not read")
            count = int(np.prod(shape, dtype=np.int64))
            if header.tell() + count * dtype.itemsize != len(member):
                raise ValueError(f"{info.filename} does not fit its header")
            flat = np.frombuffer(value, dtype, count, start + header.tell()) if count else np.empty(0, dtype)
            out[info.filename[:-4]] = flat.reshape(shape, order="F" if fortran else "C")
    return out


def encode_arrays(arrays: Mapping[str, Any], what: str = "arrays") -> bytes:
    """Named numpy arrays as one ``.npz`` value (numbers and strings only: no pickle)."""
    values = {k: np.asarray(v) for k, v in arrays.items()}
    odd = [k for k, v in values.items() if v.dtype.hasobject]
    if odd:
        raise StoreError(f"arrays for '{what}' must hold numbers or strings, not objects: {odd}")
    buffer = io.BytesIO()
    np.savez(buffer, **values)
    return buffer.getvalue()


def tools_digest(tools: Iterable[Tool]) -> str:
    """A hash of the tools' names and versions, in order: equal exactly when a search index
    built over one list is valid for the other."""
    h = hashlib.sha256()
    for tool in tools:
        h.update(f"{tool.name}\x1f{tool.version}\x1e".encode())
    return h.hexdigest()[:32]

