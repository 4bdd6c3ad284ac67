"""The event behind each element, prop and link at a cut (the "why" of a diff).

A replay as of a cut applies the events recorded by then in canonical order; the
event that gave a thing its state then is:

* an element: the first applied event that touched it (it fixes the kind and name;
  a stub's too);
* a prop ``(element, key)``: the last applied event that set the key;
* a link ``(from, kind, to)`` alive then: the add that made it alive after its last
  retirement (re-adding a live link changes nothing); a link not alive: the
  retirement that last ended it.

The index already keeps these histories for the as-of reads, so each answer is a
lookup (a bisection, or a walk over one link's runs), never a pass over the log.
An answer is the event's position in canonical order; :class:`EventFields` reads
that event's decision fields.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING, Final

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Iterable

    from kgai_tui.core.timeindex.keys import Carry
    from kgai_tui.core.timeindex.tables import IndexTables, Rec

LinkKey = tuple[str, str, str]  # (from id, link kind, to id)
#: Decisions whose fields are read together.
_BLOCK: Final = 4096
#: A decision as an event recorded it: (id, title, rationale, author, time).
Named = tuple[str, str, str, str, "int | None"]


def _named(f: Rec) -> tuple[str, str, str, int | None]:
    """Title, rationale, author and time of a decision's final fields."""
    return f[0], f[1], f[2], f[5]


def created_pos(ix: IndexTables, cut: int, eid: str) -> int | None:
    """The first event applied by ``cut`` that touched ``eid``."""
    lows = ix.touch.get(eid)
    if lows is None or lows[-4] > cut:
        return None
    i = 0
    while lows[i] > cut:  # records are in event order, each earlier than the last
        i += 4
    return ix.touch_pos[lows[i + 1]]


def prop_set_pos(ix: IndexTables, cut: int, eid: str, key: str) -> int | None:
    """The last event applied by ``cut`` that set ``key`` (as stored) on ``eid``."""
    hist = ix.props.get(eid, {}).get(key)
    if hist is None:
        return None
    times, seqs, _, sufmin = hist
    i = bisect_right(times if sufmin is None else sufmin, cut) - 1
    if i < 0:
        return None
    return bisect_right(ix.prop_start, seqs[i]) - 1


def link_pos(ix: IndexTables, cut: int, key: LinkKey) -> tuple[bool, int | None]:
    """Whether the link is alive at ``cut``, and the event that made it so (the
    add after its last retirement; else the retirement that last ended it)."""
    f, kind, t = key
    ops = ix.links.get((f, t, kind))
    alive, pos = False, None
    if ops is None:
        return alive, pos
    # Runs of one op keep their first entry and any earlier in time: the first
    # included entry of each run is held, and only it can change the state.
    for i in range(2, len(ops), 4):
        if ops[i] <= cut and ops[i + 2] != alive:
            alive, pos = ops[i + 2], ops[i + 1]
    return alive, pos


class EventFields:
    """The decision an event (by canonical position) recorded, with its own fields.

    A decision's first event is found by bisecting its creating positions; a later
    event with the same decision id (or one after a reference made a stub) is one
    of the index's carrying entries.
    """

    def __init__(self, ix: IndexTables) -> None:
        self._ix = ix
        cpos = np.frombuffer(ix.d_cpos, dtype=np.int64)
        self._g = np.flatnonzero(cpos >= 0)
        self._pos = cpos[self._g]  # increasing: decisions are created in event order
        self._carried: dict[int, tuple[int, Carry]] | None = None

    def of(self, positions: Iterable[int]) -> dict[int, Named]:
        """The decision the event at each position recorded, with the fields that
        event gave it (only positions that recorded one).

        A decision created by its own event has its final fields. On disk they
        are read together and kept nowhere: a whole-range diff at 1M names tens
        of thousands, and their rows, kept, were 78 MB of its peak."""
        wanted = np.asarray(sorted(set(positions)), dtype=np.int64)
        j = np.searchsorted(self._pos, wanted)
        j[j == len(self._pos)] = 0
        own = self._pos[j] == wanted if len(self._pos) else wanted < 0
        found = dict(zip(wanted[own].tolist(), self._g[j[own]].tolist(), strict=True))
        ix = self._ix
        carried: dict[int, tuple[int, Carry]] = {}
        rest = wanted[~own].tolist()
        if rest:
            if self._carried is None:
                self._carried = {
                    c[0]: (g, c) for g, cs in ix.d_carry.items() for c in cs
                }
            carried = {p: self._carried[p] for p in rest if p in self._carried}
        gs = [*found.values(), *(g for g, _ in carried.values())]
        if ix.shared is not None:
            named = []
            for at in range(0, len(gs), _BLOCK):  # not every row read at once
                named += ix.shared.decision_fields(
                    gs[at : at + _BLOCK], ("id", "title", "rationale", "author", "time")
                )
        else:
            named = [(ix.d_id[g], *_named(ix.fields(g))) for g in gs]
        out: dict[int, Named] = dict(zip(found, named[: len(found)], strict=True))
        for (pos, (_, c)), (dec_id, *_) in zip(
            carried.items(), named[len(found) :], strict=True
        ):
            out[pos] = (dec_id, c[2], c[3], c[4], c[10])
        return out
