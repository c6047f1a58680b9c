"""Optional embeddings (``pip install 'toolscout[embed]'``): one interface, several sources.

``load_embedder(spec)`` picks the model from a short string, so a config file or a CLI flag
can name it:

* ``"default"`` (or ``"minilm"``): all-MiniLM-L6-v2 int8 ONNX, shipped by the extra, offline;
* ``"multilingual"``: multilingual-e5-small 4-bit (``toolscout[multilingual]``), offline, for
  requests in other languages than the catalog's;
* ``"onnx:/path/model.onnx"``: your own ONNX encoder; ``tokenizer.json`` next to it (or
  ``tokenizer=...``), ``sha256=...`` to pin the model file;
* ``"fastembed:NAME"`` / ``"sentence-transformers:NAME"``: models those libraries download;
* ``"openai:MODEL"`` with ``base_url=...`` (default ``https://api.openai.com/v1``): any
  OpenAI-compatible embeddings endpoint.

Heavy imports happen only inside the chosen branch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import ConfigError
from .base import Embedder, normalize
from .cache import VectorCache
from .text import tool_text

__all__ = ["Embedder", "VectorCache", "load_embedder", "normalize", "tool_text"]


def load_embedder(spec: str | Embedder = "default", **kwargs: Any) -> Embedder:
    """An :class:`Embedder` for ``spec`` (an embedder passes through unchanged)."""
    if not isinstance(spec, str):
        return spec
    kind, _, arg = spec.partition(":")
    if kind in ("default", "minilm", ""):
        from .onnx import default_embedder

        return default_embedder(**kwargs)
    if kind in ("multilingual", "e5"):
        from .multilingual import multilingual_embedder

        return multilingual_embedder(**kwargs)
    if kind == "onnx" and arg:
        from .onnx import OnnxEmbedder

        model = Path(arg).expanduser()
        tokenizer = kwargs.pop("tokenizer", model.with_name("tokenizer.json"))
        return OnnxEmbedder(model, tokenizer, model_sha256=kwargs.pop("sha256", None), **kwargs)
    if kind == "fastembed" and arg:
        from .external import FastEmbedEmbedder

        return FastEmbedEmbedder(arg, **kwargs)
    if kind in ("sentence-transformers", "st") and arg:
        from .external import SentenceTransformerEmbedder

        return SentenceTransformerEmbedder(arg, **kwargs)
    if kind == "openai" and arg:
        from .remote import OpenAIEmbedder

        return OpenAIEmbedder(kwargs.pop("base_url", "https://api.openai.com/v1"), arg, **kwargs)
    raise ConfigError(
        f"unknown embedding model {spec!r}",
        hint="Use 'default', 'multilingual', 'onnx:PATH', 'fastembed:NAME', 'sentence-transformers:NAME' or 'openai:MODEL'.",
    )
