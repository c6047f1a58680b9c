"""The pieces around :class:`toolscout.session.Session`: its deferral rule
(:mod:`.deferral`) and where sessions are kept between requests (:mod:`.redis`).

Nothing is imported here that imports :mod:`toolscout.session`, so the session can use the
pieces below it without a cycle."""

from .deferral import CONTEXT_WINDOWS, DeferRule, context_window

__all__ = ["CONTEXT_WINDOWS", "DeferRule", "context_window"]
