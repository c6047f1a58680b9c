"""The pieces around :class:`toolscout.session.Session`, one job each: the deferral rule
(:mod:`.deferral`), the bounded reveal set and its saved state (:mod:`.reveal`), rendered
definitions and stubs (:mod:`.render`), the three halves mixed into ``Session`` (the list
sent each turn, :mod:`.tool_list`; the call entries, :mod:`.handling`; the saved state and
the way back in, :mod:`.saved_state`), routing a call and what it answers
(:mod:`.dispatch`), and where sessions are kept between requests: the one contract and the
in-process store (:mod:`.store`), Redis for every worker and replica (:mod:`.redis`, merging
with :mod:`.state_merge`), and the approval-ticket store (:mod:`.tickets`).

Only the deferral rule is imported here: the modules below the session must not pull in
the stores, which import :mod:`toolscout.session` themselves."""

from .deferral import CONTEXT_WINDOWS, DeferRule, context_window

__all__ = ["CONTEXT_WINDOWS", "DeferRule", "context_window"]
