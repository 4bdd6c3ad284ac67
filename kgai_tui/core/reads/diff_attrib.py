"""Which decision produced each change of a diff, named from the time index.

A change between FROM and TO is caused by an event that TO's replay applies
(:mod:`kgai_tui.core.timeindex.causes` says which, by its canonical position):

* an element: the first event that brought it into existence (that one fixes its kind
  and name; stubs included);
* a prop ``(element, key)``: the last event that set that key;
* a link ``(from, kind, to)`` present at the end: the event that created it after its
  last retirement (re-adding a present link changes nothing, so it is not the cause);
* a link absent at the end: the event that last retired it.

:class:`Causes` is what :func:`~kgai_tui.core.reads.diff.diff_projections` asks;
:class:`IndexCauses` answers it from an index, and the test oracle by walking the
decoded events.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from kgai_tui.core.gosem.gotext import format_epoch
from kgai_tui.core.timeindex.causes import (
    EventFields,
    LinkKey,
    created_pos,
    link_pos,
    prop_set_pos,
)

if TYPE_CHECKING:
    from kgai_tui.core.timeindex.tables import IndexTables

__all__ = ["Causes", "IndexCauses", "LinkKey", "because"]

Obj = dict[str, Any]


def because(
    dec_id: str, title: str, author: str, stamp: int | None, rationale: str
) -> Obj:
    """A decision as a diff names it: ``{id, title, author, when, rationale}``
    (``when`` in RFC3339 UTC, ``""`` for Go's zero time, as every read shows it)."""
    return {
        "id": dec_id,
        "title": title,
        "author": author,
        "when": "" if stamp is None else format_epoch(stamp),
        "rationale": rationale,
    }


class Causes(Protocol):
    """The events behind the state at TO, as opaque event numbers."""

    def created(self, eid: str) -> int | None:
        """The event that brought the element into existence."""
        ...

    def prop_set(self, eid: str, key: str) -> int | None:
        """The event that last set the key (as the props blob stores it)."""
        ...

    def link_added(self, key: LinkKey) -> int | None:
        """The event that made the (alive) link alive."""
        ...

    def link_retired(self, key: LinkKey) -> int | None:
        """The event that last retired the (dead) link."""
        ...

    def because(self, events: Iterable[int]) -> dict[int, Obj]:
        """Each event's decision as :func:`because` names it."""
        ...


class IndexCauses:
    """:class:`Causes` at ``cut`` (Unix seconds), from a time index's histories."""

    def __init__(self, ix: IndexTables, cut: int) -> None:
        self._ix, self._cut = ix, cut

    def created(self, eid: str) -> int | None:
        """See :class:`Causes`."""
        return created_pos(self._ix, self._cut, eid)

    def prop_set(self, eid: str, key: str) -> int | None:
        """See :class:`Causes`."""
        return prop_set_pos(self._ix, self._cut, eid, key)

    def link_added(self, key: LinkKey) -> int | None:
        """See :class:`Causes`."""
        alive, pos = link_pos(self._ix, self._cut, key)
        return pos if alive else None

    def link_retired(self, key: LinkKey) -> int | None:
        """See :class:`Causes`."""
        alive, pos = link_pos(self._ix, self._cut, key)
        return None if alive else pos

    def because(self, events: Iterable[int]) -> dict[int, Obj]:
        """See :class:`Causes`."""
        return {
            pos: because(dec_id, title, author, stamp, rationale)
            for pos, (dec_id, title, rationale, author, stamp) in EventFields(self._ix)
            .of(events)
            .items()
        }
