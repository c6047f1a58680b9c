"""How tools are ranked: the search index and its modes (keyword, regex, semantic, hybrid),
the ranking signals applied after every mode, name resolution, and learning from usage.

The public face is the modules below (what docs/ names and a backend or a tool built on
toolscout imports); the others here (term kernels, fields, auto-cut, the usage prior's
parts, ...) are internal and may change in any release (docs/architecture.md, "What is
public")."""

__all__ = [  # the public modules, one job each (nothing is imported here: each loads on use)
    "analyzer",
    "base",
    "crosslingual",
    "dense",
    "hybrid",
    "index",
    "intent",
    "keyword",
    "language",
    "learning",
    "ranking",
    "regex",
    "resolve",
    "signals",
]
