"""The gateway's internals: how a find runs (:mod:`.finding`), how a call runs under the
guard (:mod:`.execution`), and what a search that found nothing answers (:mod:`.no_match`).

Private (the ``_`` says so): :class:`toolscout.gateway.Gateway` is their one user and the
public face. Submodules are imported by name.
"""

__all__ = ["execution", "finding", "no_match"]
