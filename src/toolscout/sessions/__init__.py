"""The pieces around :class:`toolscout.session.Session`, one job each: the deferral rule
(:mod:`.deferral`), the bounded reveal set and its saved state (:mod:`.reveal`), rendered
definitions and stubs (:mod:`.render`), routing a call and what it answers
(:mod:`.dispatch`), and where sessions are kept between requests: the one contract and the
in-process store (:mod:`.store`), Redis for every worker and replica (:mod:`.redis`).

Only the deferral rule is imported here: the modules below the session must not pull in
the stores, which import :mod:`toolscout.session` themselves."""

from .deferral import CONTEXT_WINDOWS, DeferRule, context_window

__all__ = ["CONTEXT_WINDOWS", "DeferRule", "context_window"]
