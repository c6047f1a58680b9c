"""Optional embeddings (``pip install 'toolscout[embed]'``): one interface, several sources.

``load_embedder(spec)`` picks the model from a short string, so a config file or a CLI flag
can name it:

* ``"default"`` (or ``"minilm"``): all-MiniLM-L6-v2 int8 ONNX, shipped by the extra, offline;
* ``"multilingual"``: Universal Sentence Encoder multilingual v3 (``toolscout[multilingual]``),
  offline, for requests in other languages than the catalog's (16 languages);
  ``"multilingual-e5"``: multilingual-e5-small 4-bit from the same extra, ~100 languages, slower;
* ``"onnx:/path/model.onnx"``: your own ONNX encoder; ``tokenizer.json`` next to it (or
  ``tokenizer=...``), ``sha256=...`` to pin the model file;
* ``"fastembed:NAME"`` / ``"sentence-transformers:NAME"``: models those libraries download;
* ``"openai:MODEL"`` with ``base_url=...`` (default ``https://api.openai.com/v1``): any
  OpenAI-compatible embeddings endpoint.

Each backend imports its library (the extra it needs) only when it is chosen and first used.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ConfigError, EmbeddingUnavailable, MissingExtra
from .base import Embedder, normalize
from .cache import VectorCache
from .external import FastEmbedEmbedder, SentenceTransformerEmbedder
from .multilingual import multilingual_embedder
from .onnx import DEFAULT_MODEL_ID, OnnxEmbedder, default_embedder
from .quantized import default_query_embedder
from .remote import OpenAIEmbedder
from .static import StaticEmbedder
from .text import tool_text
from .use import use_embedder

__all__ = ["Embedder", "VectorCache", "load_embedder", "normalize", "tool_text"]


def load_embedder(spec: str | Embedder = "default", **kwargs: Any) -> Embedder:
    """An :class:`Embedder` for ``spec`` (an embedder passes through unchanged)."""
    if not isinstance(spec, str):
        return spec
    kind, _, arg = spec.partition(":")
    if kind in ("default", "minilm", ""):
        return default_embedder(**kwargs)
    if kind in ("multilingual", "use"):
        return use_embedder(**kwargs)
    if kind in ("multilingual-e5", "e5"):
        return multilingual_embedder(**kwargs)
    if kind == "onnx" and arg:
        model = Path(arg).expanduser()
        tokenizer = kwargs.pop("tokenizer", model.with_name("tokenizer.json"))
        return OnnxEmbedder(model, tokenizer, model_sha256=kwargs.pop("sha256", None), **kwargs)
    if kind == "fastembed" and arg:
        return FastEmbedEmbedder(arg, **kwargs)
    if kind in ("sentence-transformers", "st") and arg:
        return SentenceTransformerEmbedder(arg, **kwargs)
    if kind == "openai" and arg:
        return OpenAIEmbedder(kwargs.pop("base_url", "https://api.openai.com/v1"), arg, **kwargs)
    raise ConfigError(
        f"unknown embedding model {spec!r}",
        hint="Use 'default', 'multilingual', 'multilingual-e5', 'onnx:PATH', 'fastembed:NAME', 'sentence-transformers:NAME' or 'openai:MODEL'.",
    )


def load_query_encoder(spec: str | Embedder | None, model: Embedder, store: Any = None) -> Embedder | None:
    """The encoder for queries next to ``model`` (which embeds the tools), or ``None`` for
    ``model`` itself (same vector space either way; docs/embeddings.md#query-encoders).
    ``"blockwise"``: the default model with int8 products, activations quantized per block
    of 128 (about 1.5x faster, level with the model on every public set), or an error;
    ``"auto"``: that encoder when ``model`` is the default and it can be built, else
    ``None``; ``"int8"``: activations quantized per tensor (about 2x faster, 0.3 lower on
    metatool), or an error; ``"model"``: ``None``; ``"static"``: a wordpiece table distilled
    from ``model`` (an ONNX model; kept in ``store``), fastest and far less exact; an
    :class:`Embedder` or another spec for :func:`load_embedder` as given."""
    if spec is None or spec == "model":
        return None
    if not isinstance(spec, str):
        return spec
    if spec in ("auto", "int8", "blockwise"):
        if model.model_id != DEFAULT_MODEL_ID:
            if spec == "auto":
                return None
            raise ConfigError(f"query_encoder={spec!r} needs the default model for the tools")
        try:
            return default_query_embedder("int8" if spec == "int8" else "blockwise")
        except (MissingExtra, EmbeddingUnavailable):
            if spec == "auto":
                return None
            raise
    if spec == "static":
        if not isinstance(model, OnnxEmbedder):
            raise ConfigError("query_encoder='static' needs an ONNX model ('default' or 'onnx:PATH')")
        return StaticEmbedder.from_model(model, store)
    return load_embedder(spec)


__all__ += ["load_query_encoder"]
