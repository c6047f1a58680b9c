"""One conversation's view of the catalog: what the model has been shown (seed 003).

A :class:`Session` decides, turn by turn, which tool definitions go into the next request
and handles whatever tool call comes back. The tool list is *append-only*: meta-tools,
then pinned (never-defer) tools, then tools in the order ``find_tools`` revealed them, so
the bytes of earlier tools never change and provider prompt caches survive.

Deferral follows seed 003. Below ``threshold`` visible tools (default 15) every tool is
sent as is and no meta-tool is added. ``threshold="auto"`` (or ``"auto:N%"``) decides by
cost instead: defer once the visible tools' definitions would take more than 10% (N%) of
the model's context window (:mod:`toolscout.sessions.deferral`). At or above it, tools whose policy is
``automatic`` or ``always`` are withheld until found; ``never`` tools and names in
``never_defer`` are always sent. ``always`` tools are withheld even below the threshold.

Versions: each find result carries every tool's ``version``. If a revealed tool changes in
the catalog, the next list carries the new schema in the same position (the model must see
what will validate its call) and the ledger notes ``schema_changed``. Removed tools leave
the list (``removed``).

The reveal set is bounded (``max_revealed``): past it the least recently used revealed
tool is dropped (ledger event ``evicted``); it can simply be found again. Dropping one
tool breaks the cached prefix once, which is cheaper than an unbounded list.

Native deferral (OpenAI ``tool_search``, Anthropic ``tool_reference``) is different: the
provider keeps a loaded tool in the conversation, so eviction cannot take it away. Native
adapters call :meth:`Session.mark_loaded` for the tools they load, and the session runs
those whatever its reveal set holds.
"""

from __future__ import annotations

import uuid
import warnings
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from .accounting.ledger import Ledger
from .codemode.runner import DEFAULT_LIMITS, EXECUTE_NAME, CodeLimits
from .context import CallContext
from .model import DeferPolicy, Tool
from .sessions.deferral import DeferRule
from .sessions.deferral import context_window as deferral_window
from .sessions.dispatch import SearchCounter, ToolOutcome
from .sessions.handling import CallEntries
from .sessions.render import ToolRenderer
from .sessions.reveal import RevealSet
from .sessions.saved_state import SavedState, StoreLink
from .sessions.tool_list import ToolList

if TYPE_CHECKING:
    from .access.approval import Approve
    from .gateway import Gateway

__all__ = ["Session", "StoreLink", "ToolOutcome"]

DEFAULT_THRESHOLD = 15
DEFAULT_MAX_REVEALED = 128
DEFAULT_REPEAT_LIMIT = 3


class Session(ToolList, SavedState, CallEntries):
    """The reveal set, schema cache and ledger of one conversation over a :class:`Gateway`.

    Every surface uses this one model: the library, the provider adapters and the MCP
    server (one session per stateful connection). ``allow`` scopes the session (a user's
    permissions): tools it rejects are never found, revealed or run. ``call_tool=True``
    adds the ``call_tool`` meta-tool for hosts that cannot change their tool list between
    turns; ``use_tool=True`` adds RFC 0001's ``use_tool`` (find and run in one step).
    ``progressive=False`` never reveals (a stateless client: every call goes through
    ``call_tool``). ``code_mode=True`` (or a :class:`~toolscout.codemode.runner.CodeLimits`)
    adds the ``execute`` meta-tool: a Python program that calls tools, run in a sandbox
    (:mod:`toolscout.codemode.runner`); :meth:`preselect` reveals a request's likely tools
    before the first turn. ``store`` (a :class:`~toolscout.sessions.store.SessionStore`, e.g.
    :class:`~toolscout.sessions.redis.RedisSessionStore`) keeps the state outside this
    process: loaded now, refreshed before each handled call and saved after it, so another
    worker or replica continues the conversation with what it revealed. ``approve``
    (``approve(tool, arguments)``, sync or async) is this conversation's approver for
    calls whose kind needs approval (:mod:`toolscout.access.approval`): every adapter's calls
    go through it.

    A session adds only its reveal set, deferral and ledger to the gateway: each handled
    call becomes one :class:`~toolscout.context.CallContext` (:meth:`context`: the edge's,
    plus this session's id, permissions and approver) and goes to the gateway's one find
    or execute entry, which also records usage for learning under this session's id.
    """

    def __init__(
        self,
        gateway: Gateway,
        *,
        session_id: str | None = None,
        threshold: int | str = DEFAULT_THRESHOLD,
        never_defer: Iterable[str] = (),
        max_revealed: int = DEFAULT_MAX_REVEALED,
        repeat_limit: int = DEFAULT_REPEAT_LIMIT,
        call_tool: bool = False,
        use_tool: bool = False,
        progressive: bool = True,
        allow: Callable[[Tool], bool] | None = None,
        store: StoreLink | None = None,
        approve: Approve | None = None,
        stubs: bool = False,
        model: str | None = None,
        context_window: int | None = None,
        auto_pin: int = 0,
        code_mode: bool | CodeLimits = False,
    ) -> None:
        self.gateway = gateway
        self.code_mode: CodeLimits | None = (code_mode if isinstance(code_mode, CodeLimits) else DEFAULT_LIMITS) if code_mode else None
        """Code mode's limits when it is on (``code_mode=True``: the defaults): the
        ``execute`` meta-tool runs a Python program that calls tools (docs/code-mode.md)."""
        self.approve = approve
        self.stubs = stubs
        """Send deferred tools as stubs (name and one line, no parameters) instead of
        withholding them (seed 003's stub mode); see :meth:`listed`."""
        self.id = session_id or uuid.uuid4().hex
        self.threshold = threshold
        self.defer_rule = DeferRule.parse(threshold)
        """``threshold`` parsed: a tool count, or a share of the context window."""
        self.context_window = context_window or deferral_window(model)
        """Tokens of the model's context (``context_window``, else looked up from ``model``):
        what a budget rule takes its share of."""
        self.auto_pin = max(0, int(auto_pin))
        """Pin this many of the gateway's most-used tools (learned usage) at the session's
        start, and keep tools this session calls repeatedly from eviction (0: off)."""
        self._auto_pinned: tuple[str, ...] = ()
        self.never_defer = frozenset(never_defer)
        unknown = sorted(n for n in self.never_defer if gateway.catalog.get(n) is None)
        if unknown:  # a typo would silently defer the tool the caller meant to pin
            warnings.warn(f"never_defer names no tool in the catalog: {', '.join(unknown)}", UserWarning, stacklevel=2)
        self.max_revealed = max(1, max_revealed)
        self.repeat_limit = max(1, repeat_limit)
        self.call_tool = call_tool
        self.use_tool = use_tool
        self.progressive = progressive
        self.allow = allow
        self.ledger = Ledger()
        self.format: str | None = None
        """The host format this session's tools were last listed in: texts the model reads
        name tools as that format does (its wire names)."""
        self.reveals = RevealSet(self.max_revealed)
        """What this conversation revealed (and a provider loaded), bounded by ``max_revealed``."""
        self._pinned: list[str] = []
        self._pinned_set: frozenset[str] = frozenset()
        self._generation = -1
        self._visible_count = 0
        self._active = False
        self._over = False
        self.searches = SearchCounter()
        """How often each search ran (a repeat is pointed out to the model)."""
        self._renderer = ToolRenderer(lambda: self.gateway.find_name)
        self._meta_cache: dict[str, list[dict[str, Any]]] = {}
        self._list_memo: tuple[Any, ...] | None = None  # the last list built, and what it was built from
        self._ctx: tuple[Any, Any, CallContext] | None = None
        self.store = store
        self._stored: Any = None  # the store's bookkeeping (revision, state last synced)
        if store is not None:
            store.attach(self)

    # -- what is visible --------------------------------------------------------------
    @property
    def meta_names(self) -> tuple[str, ...]:
        """The meta-tools this session offers, in list order."""
        return (
            self.gateway.find_name,
            *(("call_tool",) if self.call_tool else ()),
            *(("use_tool",) if self.use_tool else ()),
            *((EXECUTE_NAME,) if self.code_mode else ()),
        )

    def _permitted(self, tool: Tool) -> bool:
        return self.gateway.visibility.admits(tool, self.allow)

    def _pinned_by_policy(self, tool: Tool) -> bool:
        return tool.defer is DeferPolicy.NEVER or tool.name in self.never_defer or tool.name in self._auto_pinned

    @property
    def auto_pinned(self) -> tuple[str, ...]:
        """The tools :attr:`auto_pin` pinned (also in the ledger, as ``auto_pinned``)."""
        self._sync()
        return self._auto_pinned

    def _choose_auto_pins(self, visible: list[Tool]) -> None:
        """Seed 001's "keep hot tools loaded": the most-used tools the learner knows (by
        distinct sessions that called them successfully), fixed for this session so its list
        stays append-only."""
        learner = self.gateway.learner
        if learner is None:
            return
        names = {t.name for t in visible if t.defer is not DeferPolicy.ALWAYS}
        hot = [n for n in learner.hot_tools(self.auto_pin * 4) if n in names][: self.auto_pin]
        self._auto_pinned = tuple(hot)
        if hot:
            self.ledger.note("auto_pinned", tools=list(hot))

    def _sync(self) -> None:
        """Catch up with catalog changes (cheap when nothing changed)."""
        catalog = self.gateway.catalog
        if catalog.generation == self._generation:
            return
        first = self._generation < 0
        self._generation = catalog.generation
        visible = [t for t in catalog if self._permitted(t)]
        self._visible_count = len(visible)
        self._over = self.defer_rule.exceeded(
            len(visible), lambda: self.baseline_tokens(self.format or "generic"), self.context_window
        )
        self._active = self._over or any(t.defer is DeferPolicy.ALWAYS for t in visible)
        if first and self.auto_pin:
            self._choose_auto_pins(visible)
        pinned = [
            t.name
            for t in visible
            if self._pinned_by_policy(t) or (t.defer is DeferPolicy.AUTOMATIC and not self._over)
        ]
        known = set(self._pinned)
        # Keep earlier pinned tools where they were; new pinned ones go after them.
        wanted = set(pinned)
        self._pinned = [n for n in self._pinned if n in wanted] + [n for n in pinned if n not in known]
        self._pinned_set = frozenset(self._pinned)
        for name in list(self.reveals.revealed):
            tool = catalog.get(name)
            if tool is None or not self._permitted(tool):
                self.reveals.drop(name)
                self.ledger.note("removed", tool=name)
            elif name in self._pinned_set:
                self.reveals.drop(name)
        for name in list(self.reveals.loaded):
            tool = catalog.get(name)
            if tool is None or not self._permitted(tool):
                self.reveals.unload(name)
        for name in [*self._pinned, *self.reveals.revealed]:
            tool = catalog.get(name)
            old = self.reveals.versions.get(name)
            if tool is not None and old is not None and old != tool.version:
                self.ledger.note("schema_changed", tool=name, old=old, new=tool.version)
            if tool is not None:
                self.reveals.versions[name] = tool.version

    @property
    def over_threshold(self) -> bool:
        """Whether the visible tools are past the deferral rule (count or budget)."""
        self._sync()
        return self._over

    @property
    def deferring(self) -> bool:
        """True when search is active: some tools are withheld until found."""
        self._sync()
        return self._active

    @property
    def pinned(self) -> tuple[str, ...]:
        """Tools always sent in full (all visible tools when deferral is off)."""
        self._sync()
        return tuple(self._pinned)

    @property
    def revealed(self) -> tuple[str, ...]:
        """Tools found in this session, in the order they were added to the list."""
        self._sync()
        return tuple(self.reveals.revealed)

    def shows_any(self, names: Iterable[str]) -> bool:
        """Whether any of ``names`` is in this session's list (no catalog sync: cheap enough
        to ask of every session on every catalog change)."""
        if self.stubs and self.progressive:  # every visible tool is listed, as a stub or in full
            return True
        return any(n in self.reveals.revealed or n in self._pinned_set for n in names)

    def is_callable(self, name: str) -> bool:
        """Whether the model has this tool's schema (pinned, revealed, or loaded by the
        provider through :meth:`mark_loaded`) right now."""
        self._sync()
        return name in self.reveals.revealed or name in self._pinned_set or name in self.reveals.loaded

    @property
    def loaded(self) -> tuple[str, ...]:
        """Tools the provider holds from native loading (:meth:`mark_loaded`), oldest first."""
        self._sync()
        return tuple(self.reveals.loaded)

    def mark_loaded(self, *names: str) -> None:
        """Record that the provider now holds these tools' schemas for the rest of the
        conversation (a native ``tool_search_output`` or ``tool_reference`` loaded them).

        Only native adapters call this. Such a tool stays callable after the reveal set
        evicts it: the model still has its schema, so refusing the call would be an error
        the provider never causes. Kept in :meth:`state` (saved at once with a ``store``).
        """
        if self._mark_loaded(*names) and self.store is not None:
            self.store.save(self)

    def _mark_loaded(self, *names: str) -> bool:
        self._sync()
        added = False
        for name in names:
            tool = self.gateway.catalog.get(name)
            if tool is not None and self._permitted(tool) and name not in self._pinned_set and name not in self.reveals.loaded:
                self.reveals.load(name)
                added = True
        return added

    def deferred(self) -> list[Tool]:
        """Visible tools whose schemas are withheld (for native deferral: ``defer_loading``)."""
        self._sync()
        if not self._active:
            return []
        return [t for t in self.gateway.catalog if t.name not in self._pinned_set and self._permitted(t)]

    # -- revealing --------------------------------------------------------------------
    def reveal(self, *names: str) -> tuple[str, ...]:
        """Add tools to the list (after those already there); returns the newly added.
        With a ``store``, the change is saved at once."""
        added = self._reveal(*names)
        if self.store is not None and added:
            self.store.save(self)
        return added

    def _reveal(self, *names: str) -> tuple[str, ...]:
        self._sync()
        if not self.progressive:
            return ()
        for name in names:  # refresh first, so a batch never evicts its own members
            self.reveals.touch(name)
        catalog = self.gateway.catalog
        tools = (t for t in map(catalog.get, names) if t is not None and self._permitted(t) and t.name not in self._pinned_set)
        added, evicted = self.reveals.add(tools, set(names), self._hot)
        for victim in evicted:
            self.ledger.note("evicted", tool=victim)
        return tuple(added)

    def loaded_for_find(self) -> frozenset[str]:
        """Tools the model holds now, which a search lists as loaded (all of them when
        nothing is deferred)."""
        self._sync()
        return self._pinned_set.union(self.reveals.revealed, self.reveals.loaded) if self._active else self._pinned_set

    def add_found(self, names: Iterable[str]) -> tuple[str, ...]:
        """Reveal what a search found (saved with the call that found it)."""
        return self._reveal(*names)

    def touch(self, name: str, *, succeeded: bool = False) -> None:
        """The model is calling ``name`` (``succeeded``: the call ran): it is the most
        recently used, and with ``auto_pin`` a tool called twice is kept from eviction."""
        if succeeded:
            if self.auto_pin:
                self.reveals.called(name)
            return
        self.reveals.touch(name)

    def _hot(self, name: str) -> bool:
        """A tool this session called at least twice (kept from eviction with ``auto_pin``)."""
        return bool(self.auto_pin) and self.reveals.calls.get(name, 0) >= 2

    def preselect(self, message: str, k: int = 3, *, context: CallContext | None = None) -> tuple[str, ...]:
        """Reveal the tools ``message`` (the user's request) most likely needs before the
        model's first turn, so a clear request costs no ``find_tools`` round trip.

        At most ``k`` tools, fewer when the ranking's auto-cut sees a clear winner (a
        clear request gets one tool, a vague one several). They join the list like found
        tools (append-only, never twice), and later ``find_tools`` calls add to them.
        Returns the names added; nothing (never an error) for an empty message or one
        that matches nothing. With a ``store``, the change is saved at once."""
        if not isinstance(message, str) or not message.strip() or k < 1:
            return ()
        self._sync()
        if not self._active:  # nothing is withheld: every tool is already listed
            return ()
        found = self.gateway.find({"query": message, "limit": min(k, self.gateway.max_limit)}, self.context(context))
        if found.error is not None:
            return ()
        return self.reveal(*(t.name for t in found.found[:k]))
