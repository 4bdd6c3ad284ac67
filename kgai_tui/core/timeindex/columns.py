"""Cut-independent columns of a time index: the as-of read without a graph.

Elements numbered in id order, names ranked, links and head steps as flat numpy
arrays, so names, links and heads at a cut come from a few vectorised passes. Built
from the index's ``touch``, ``links`` and ``versions``, dropped when those change.
"""

from __future__ import annotations

from array import array
from itertools import chain
from typing import Any, Final, Protocol

import numpy as np
import numpy.typing as npt

Ints = npt.NDArray[np.int64]
Objs = npt.NDArray[np.object_]

_AFTER_ALL: Final = np.iinfo(np.int64).max  # "no earlier touch" (never <= a cut)


class ColumnSource(Protocol):
    """What the columns are built from (the time index's tables)."""

    touch: dict[str, list[Any]]
    links: dict[tuple[str, str, str], list[Any]]
    versions: dict[str, tuple[array[int], array[int]]]


def _objs(values: list[Any]) -> Objs:
    """A 1-D object array of ``values`` (``np.array`` would nest tuples)."""
    out: Objs = np.empty(len(values), dtype=object)
    out[:] = values
    return out


def _ints(values: Any) -> Ints:
    return np.asarray(values, dtype=np.int64).reshape(-1)


def _joined(runs: list[array[int]]) -> Ints:
    """The ``q`` arrays end to end, as one int64 array."""
    return np.frombuffer(b"".join(r.tobytes() for r in runs), dtype=np.int64)


class IndexColumns:
    """Elements, links and head steps of a time index, in id order."""

    def __init__(self, ix: ColumnSource) -> None:
        """Flatten the index (per element and link, and one copy of the head steps: ~80 ms at 1M)."""
        eids = sorted(ix.touch)
        n = len(eids)
        self.eids: Objs = _objs(eids)
        # Touches: each element's record lows in list order (their times fall), so
        # the first included one is the one whose predecessor is after the cut.
        lows = [ix.touch[e] for e in eids]
        counts = _ints([len(x) >> 2 for x in lows])
        self.t_el: Ints = np.repeat(np.arange(n, dtype=np.int64), counts)
        self.t_time = _ints(list(chain.from_iterable(x[0::4] for x in lows)))
        firsts = np.cumsum(counts) - counts
        prev = np.empty_like(self.t_time)
        prev[1:] = self.t_time[:-1]
        prev[firsts[counts > 0]] = _AFTER_ALL
        self.t_prev: Ints = prev
        self.t_kind: Objs = _objs(list(chain.from_iterable(x[2::4] for x in lows)))
        t_name = list(chain.from_iterable(x[3::4] for x in lows))
        names = sorted(set(t_name))
        rank = {s: i for i, s in enumerate(names)}
        self.names: Objs = _objs(names)
        self.t_rank: Ints = _ints([rank[s] for s in t_name])
        # Links: every kept op (time, is add), grouped by link in its list order.
        number = {e: i for i, e in enumerate(eids)}
        keys = list(ix.links)
        ops = list(ix.links.values())
        sizes = _ints([(len(o) - 2) >> 2 for o in ops])
        self.l_link: Ints = np.repeat(np.arange(len(keys), dtype=np.int64), sizes)
        self.l_time = _ints(list(chain.from_iterable(o[2::4] for o in ops)))
        adds = list(chain.from_iterable(o[4::4] for o in ops))
        self.l_add = np.asarray(adds, dtype=np.bool_)
        # A link only ever retired names ends that may never be touched: number ``n``,
        # an element that is never present.
        self.l_from = _ints([number.get(k[0], n) for k in keys])
        self.l_to = _ints([number.get(k[1], n) for k in keys])
        kinds = sorted({k[2] for k in keys})
        krank = {s: i for i, s in enumerate(kinds)}
        self.kinds: Objs = _objs(kinds)
        self.l_kind: Ints = _ints([krank[k[2]] for k in keys])
        # Head steps: each element's (times, values) run, end to end in id order
        # (one 16 MB copy at 1M: a search over all elements is then ~1 ms, not ~10).
        empty = array("q")
        steps = [ix.versions.get(e, (empty, empty)) for e in eids]
        self.v_end: Ints = np.cumsum(_ints([len(t) for t, _ in steps]))
        self.v_start: Ints = self.v_end - _ints([len(t) for t, _ in steps])
        self.v_time: Ints = _joined([t for t, _ in steps])
        self.v_val: Ints = _joined([v for _, v in steps])

    def elements_at(self, cut: int) -> Ints:
        """Per element (and one never present), its first included touch, else -1.

        A touch is an index into the ``t_*`` columns.
        """
        chosen = np.flatnonzero((self.t_time <= cut) & (self.t_prev > cut))
        entry = np.full(len(self.eids) + 1, -1, dtype=np.int64)
        entry[self.t_el[chosen]] = chosen
        return entry

    def names_at(self, entry: Ints) -> list[str]:
        """The names of the elements present (``entry`` from :meth:`elements_at`), sorted."""
        ranks = np.sort(self.t_rank[entry[entry >= 0]])
        names: list[str] = self.names[ranks].tolist()
        return names

    def links_at(self, cut: int, entry: Ints) -> list[dict[str, str]]:
        """``{from, kind, to}`` (names) of the links alive at the cut, sorted so."""
        inc = np.flatnonzero(self.l_time <= cut)
        if not len(inc):
            return []
        link = self.l_link[inc]
        last = np.flatnonzero(np.append(link[1:] != link[:-1], True))
        alive = link[last[self.l_add[inc[last]]]]
        ends = entry[self.l_from[alive]], entry[self.l_to[alive]]
        if (ends[0] < 0).any() or (ends[1] < 0).any():
            raise AssertionError("a link alive before its ends were touched")
        rf, rt = self.t_rank[ends[0]], self.t_rank[ends[1]]
        rk = self.l_kind[alive]
        order = np.lexsort((rt, rk, rf))
        return [
            {"from": f, "kind": k, "to": t}
            for f, k, t in zip(
                self.names[rf[order]].tolist(),
                self.kinds[rk[order]].tolist(),
                self.names[rt[order]].tolist(),
                strict=True,
            )
        ]

    def heads_at(self, cut: int) -> tuple[Ints, Ints]:
        """``(elements, values)`` of the elements with a head at the cut, in id order.

        A value is a decision's global index, or ``-2 - i`` for ``ix.vmulti[i]``.
        """
        # A binary search per element, all at once: the first step after the cut.
        lo, hi, times = self.v_start.copy(), self.v_end.copy(), self.v_time
        top = len(times) - 1
        while (active := lo < hi).any():
            mid = (lo + hi) >> 1
            early = times[np.minimum(mid, top)] <= cut
            lo = np.where(active & early, mid + 1, lo)
            hi = np.where(active & ~early, mid, hi)
        last = lo - 1
        has = np.flatnonzero(last >= self.v_start)
        vals = self.v_val[last[has]]
        keep = vals != -1
        return has[keep], vals[keep]
