"""What a search as of a moment may return: the decisions in force and the elements then.

A search ranks candidates by their keys (:func:`~kgai_tui.core.search.docs.decision_key`
for history documents, :func:`~kgai_tui.core.search.docs.live_key` for elements) and
drops those a moment does not allow. Two ways to know which are allowed:

* **listed**: every allowed key, from a projection at the cut (the explorer's slider
  or the whole store's time index): a set, built once and kept for that cut;
* **probed**: each candidate asked about when ranked, from the read model
  (:class:`~kgai_tui.core.model.moment_probe.MomentProbe`), so a search costs what
  it ranks rather than what the store holds. A key is a prefix of an id, so it is
  looked up by that prefix; after :data:`PROBE_BUDGET` distinct keys (a broad query
  at an early cut) the whole list is built once instead, as the listed way would.

Both give the same answer for every key: a key is allowed when some decision in
force (some element present) at the cut has that key.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Iterable
from typing import TYPE_CHECKING, Final

from kgai_tui.core.model.moment_probe import PROBE_FAILURES
from kgai_tui.core.search.docs import (
    decision_key,
    decision_key_prefix,
    element_key_prefixes,
    live_key,
)

if TYPE_CHECKING:
    from datetime import datetime
    from pathlib import Path

    from kgai_tui.core.engine.engine import Engine
    from kgai_tui.core.model.moment_probe import MomentProbe
    from kgai_tui.core.replay.projection_view import ProjectionView

__all__ = [
    "PROBE_BUDGET",
    "Keys",
    "Moment",
    "MomentCache",
    "listed_keys",
    "listed_moment",
    "probed_moment",
]

#: Distinct keys asked about one moment before it lists them all.
PROBE_BUDGET: Final = 4096


class Moment:
    """The allowed keys of a cut, for one search or kept for many."""

    def __init__(
        self,
        head_keys: Container[int],
        element_keys: Container[int],
        close: Callable[[], None] = lambda: None,
    ) -> None:
        """Wrap the two key containers; ``close`` lets go of what they read from."""
        self.head_keys = head_keys
        self.element_keys = element_keys
        self._close = close

    def close(self) -> None:
        """Let go of the model read a probed moment holds (a listed one holds none)."""
        self._close()


Keys = tuple[frozenset[int], frozenset[int]]


def listed_keys(heads: Iterable[str], elements: Iterable[str]) -> Keys:
    """The keys of the decisions in force and of the elements then, from their ids."""
    return (
        frozenset(decision_key(d) for d in heads),
        frozenset(live_key("element", e) for e in elements),
    )


def listed_moment(heads: Iterable[str], elements: Iterable[str]) -> Moment:
    """A moment from the ids of the decisions in force and of the elements then."""
    return Moment(*listed_keys(heads, elements))


class _Probed:
    """Keys asked about one at a time, remembered; listed whole past the budget,
    or when a question cannot be answered (a damaged model row)."""

    def __init__(
        self, ask: Callable[[int], bool], listing: Callable[[], frozenset[int]]
    ) -> None:
        self._ask = ask
        self._listing = listing
        self._known: dict[int, bool] = {}
        self._all: frozenset[int] | None = None

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, int):
            return False
        if self._all is not None:
            return key in self._all
        known = self._known.get(key)
        if known is None:
            if len(self._known) < PROBE_BUDGET:
                try:
                    known = self._known[key] = self._ask(key)
                    return known
                except PROBE_FAILURES:
                    pass
            self._all = self._listing()
            return key in self._all
        return known


def probed_moment(
    probe: MomentProbe, listing: Callable[[], Keys], close: Callable[[], None]
) -> Moment:
    """A moment answering each key from ``probe``; ``listing`` gives every key of
    the same cut when a search asks about too many (or the model fails it)."""
    listed: list[Keys] = []

    def whole() -> Keys:
        if not listed:
            listed.append(listing())
        return listed[0]

    def in_force(key: int) -> bool:
        return probe.decision_in_force(decision_key_prefix(key))

    odd: list[frozenset[int]] = []

    def present(key: int) -> bool:
        span = element_key_prefixes(key)
        if span is None:
            return False  # a decision's live key: never an element
        if not odd:  # elements whose ids the key does not spell: by their hash
            odd.append(frozenset(live_key("element", e) for e in probe.odd_elements()))
        return key in odd[0] or probe.element_present(*span)

    return Moment(
        _Probed(in_force, lambda: whole()[0]),
        _Probed(present, lambda: whole()[1]),
        close,
    )


class MomentCache:
    """The moments one search index was asked about: probed in the read model when
    it holds the log as it is and covers the cut, else listed from a projection at
    the cut (the caller's, or the whole store's time index) and kept (the last 16).
    """

    def __init__(self, root: Path | None, engine: Engine | None) -> None:
        """For the store at ``root``; ``engine``: the whole store, when the index
        was made from one (then the model is never asked)."""
        self._root = root
        self._engine = engine
        self._moments: dict[datetime, Moment] = {}

    def moment(self, cut: datetime) -> Moment:
        """Heads and elements at ``cut``. The caller closes it after its search."""
        found = self._moments.get(cut)
        if found is not None:
            return found
        probed = self._probed(cut)
        if probed is not None:
            return probed
        then, done = self._then(cut)
        try:
            return self.remember(cut, then)
        finally:
            done()

    def _probed(self, cut: datetime) -> Moment | None:
        """A moment asking a current read model about each candidate (never built
        or written here), or ``None``."""
        from kgai_tui.core.model.schema import model_enabled

        if self._root is None or self._engine is not None or not model_enabled():
            return None
        from kgai_tui.core.model.open import peek_model

        model = peek_model(self._root)
        if model is None:
            return None
        stamp = int(cut.timestamp())
        probe = model.moment_probe(stamp)
        if probe is None:
            model.close()
            return None

        def listing() -> Keys:
            keys = model.moment_keys(stamp)
            if keys is not None:
                return listed_keys(keys[1], keys[0])
            then, done = self._then(cut)
            try:
                return listed_keys(_heads_of(then), then.graph.nodes)
            finally:
                done()

        return probed_moment(probe, listing, model.close)

    def remember(self, cut: datetime, then: ProjectionView) -> Moment:
        """Keep the decisions in force and the elements of ``then``, the store at
        ``cut``."""
        found = self._moments.get(cut)
        if found is not None:
            return found
        moment = listed_moment(_heads_of(then), then.graph.nodes)
        if len(self._moments) >= 16:
            self._moments.pop(next(iter(self._moments)))
        self._moments[cut] = moment
        return moment

    def _then(self, cut: datetime) -> tuple[ProjectionView, Callable[[], None]]:
        """The store at ``cut`` and what to call once it is read: the as-of view of
        the whole store the index was made from, else of the time index read
        through the model (built from a replay of the log when never saved)."""
        from kgai_tui.core.reads.as_of import as_of_view

        if self._engine is not None:
            return as_of_view(self._engine, cut), _nothing
        if self._root is None:
            raise RuntimeError("as_of needs the engine of an in-memory index")
        from kgai_tui.core.model.read import read_store

        opened = read_store(self._root)
        try:
            return as_of_view(opened, cut), opened.close
        except BaseException:
            opened.close()
            raise


def _nothing() -> None:
    """Nothing to let go of."""


def _heads_of(then: ProjectionView) -> set[str]:
    """The ids of the decisions in force in a projection."""
    return {then.dec_id[i] for hs in then.heads.values() for i in hs}
