"""The explorer's timeline at a cut, from the model's present timeline: no walk.

Walked over an as-of view whose decision columns are the read model's rows, the
timeline fetches and keeps every decision row (over ten seconds and two gigabytes
at a million decisions). But a decision with its final fields at the cut sorts
and filters at the cut as it does now, so the present's answers, which the model
gives in a few streamed queries, need only be cut down:

* the order: the present's order (final fields) kept to the decisions that exist
  at the cut, less those whose fields differ then (the view's patch), which are
  put back where their fields at the cut sort them;
* writers, authors: from their start times (:class:`CutCounts`);
* a writer or author filter: the present's, over the decisions with final
  fields; the patched ones by their fields then;
* a kind filter, the statuses: from the element graph, heads, shapers and
  supersessions at the cut.

Every answer equals the walk's over the same view (a property test holds them to
it), in the view's numbering.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

    from kgai_tui.core.reads.store import TimelineReads
    from kgai_tui.core.reads.timeline import Filters
    from kgai_tui.core.timeindex.keys import Carry
    from kgai_tui.core.timeindex.view import AsOfView

__all__ = ["MomentTimeline"]

Key = tuple[bool, int, int, str]


class MomentTimeline:
    """:class:`~kgai_tui.core.reads.store.TimelineReads` of an as-of view whose
    index shares the model's decision rows."""

    def __init__(self, view: AsOfView, present: TimelineReads) -> None:
        """The view at the cut, and the model's timeline now."""
        self._view = view
        self._present = present

    # ------------------------------------------------------------------ numbering

    def _g(self, rows: npt.ArrayLike) -> npt.NDArray[np.int64]:
        """Index decisions of view decisions."""
        num = self._view.num
        v = np.asarray(rows, dtype=np.int64)
        if not num.strays:
            return v
        strays = np.asarray(num.strays, dtype=np.int64)
        return np.where(v < num.k, v, strays[np.clip(v - num.k, 0, None)])

    def _v(self, gs: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """View decisions of index decisions that exist at the cut."""
        num = self._view.num
        if not num.strays:
            return gs
        strays = np.asarray(num.strays, dtype=np.int64)
        return np.where(gs < num.k, gs, num.k + np.searchsorted(strays, gs))

    def _fields(self) -> dict[int, Carry | None]:
        """Index decision to its fields at the cut, of the patched ones."""
        return {g: fields for g, (fields, _) in self._view.patched.items()}

    def _key(self, g: int) -> Key:
        """A decision's place in the timeline by its final fields."""
        ix = self._view.ix
        stamp = ix.d_time[g]
        return (stamp is None, stamp or 0, ix.d_lamport[g], ix.d_id[g])

    # ------------------------------------------------------------------ reads

    def timeline_columns(
        self,
    ) -> tuple[array[int], frozenset[int], list[str], list[str], list[str]]:
        """The order, heads, writers, authors and kinds at the cut."""
        view, cut = self._view, self._view.cut
        present = np.frombuffer(self._present.timeline_columns()[0], dtype=np.int64)
        exist = np.frombuffer(
            view.ix.d_exist, dtype=np.int64, count=len(view.ix.d_exist)
        )
        fields = self._fields()
        kept = exist[present] <= cut if len(present) else np.zeros(0, dtype=bool)
        if fields:
            kept &= ~np.isin(present, np.fromiter(fields, dtype=np.int64))
        base = present[kept]
        moved = sorted(
            ((f[10] is None, f[10] or 0, f[7], view.ix.d_id[g]), g)
            for g, f in fields.items()
            if f is not None and f[9]
        )
        if moved:
            at = [self._place(base, key) for key, _ in moved]
            base = np.insert(base, at, [g for _, g in moved])
        order = array("q", self._v(base).tobytes())
        heads = frozenset(v for held in view.heads.values() for v in held)
        counts, patched = view.counts(), list(fields.values())
        return (
            order,
            heads,
            sorted(counts.writers(cut, patched)),
            sorted(counts.authors(cut, patched)),
            self._kinds(),
        )

    def _place(self, base: npt.NDArray[np.int64], key: Key) -> int:
        """Where a decision of timeline key ``key`` goes in ``base`` (keys unique)."""
        return bisect_left(base, key, key=lambda g: self._key(int(g)))

    def _recorded(self, v: int) -> bool:
        """Whether view decision ``v`` is recorded at the cut."""
        view = self._view
        g = view.num.g_of(v)
        patch = view.patched.get(g)
        if patch is not None:
            return patch[0] is not None and bool(patch[0][9])
        return g not in view.counts().stubs

    def _kinds(self) -> list[str]:
        """Kinds at the cut of the elements a recorded decision shapes then."""
        view = self._view
        found: set[str] = set()
        for eid, attrs in view.graph.nodes(data=True):
            kind = str(attrs.get("kind", ""))
            if (
                kind
                and kind not in found
                and any(map(self._recorded, view.num.shapers(eid)))
            ):
                found.add(kind)
        return sorted(found)

    def timeline_keep(
        self, order: Sequence[int], heads: frozenset[int], filters: Filters
    ) -> array[int]:
        """The decisions of ``order`` passing ``filters`` at the cut, order kept
        (the walk's meaning of each, :meth:`KgView.select`)."""
        writer, author, kind, status = filters
        view = self._view
        rows = np.asarray(order, dtype=np.int64)
        gs = self._g(rows)
        keep = np.ones(len(rows), dtype=bool)
        fields = self._fields()
        moved = np.isin(gs, np.fromiter(fields, dtype=np.int64)) if fields else None
        if writer is not None or author is not None:
            final = gs if moved is None else gs[~moved]
            by = (writer, author, None, None)
            passed = self._present.timeline_keep(array("q", final.tobytes()), heads, by)
            ok = np.isin(gs, np.asarray(passed, dtype=np.int64))
            if moved is not None:
                for i in np.nonzero(moved)[0].tolist():
                    f = fields[int(gs[i])]
                    ok[i] = (
                        f is not None
                        and (writer is None or f[8] == writer)
                        and (author is None or f[4] == author)
                    )
            keep &= ok
        if kind is not None:
            shaping: set[int] = set()
            for eid, attrs in view.graph.nodes(data=True):
                if attrs.get("kind", "") == kind:
                    shaping.update(view.num.shapers(eid))
            keep &= np.isin(rows, np.fromiter(shaping, dtype=np.int64))
        if status == "head":
            keep &= np.isin(rows, np.fromiter(heads, dtype=np.int64))
        elif status in ("superseded", "dead"):
            replaced = view.counts().superseded_from[gs] <= view.cut
            if status == "dead":
                replaced = ~replaced
            keep &= replaced & ~np.isin(rows, np.fromiter(heads, dtype=np.int64))
        return array("q", rows[keep].tobytes())

    def timeline_stamps(self, rows: Iterable[int]) -> array[int]:
        """The recorded times at the cut of ``rows`` (those with one), ascending."""
        gs = self._g(list(rows))
        fields = self._fields()
        if not fields:
            return self._present.timeline_stamps(gs.tolist())
        moved = np.isin(gs, np.fromiter(fields, dtype=np.int64))
        times = list(self._present.timeline_stamps(gs[~moved].tolist()))
        for g in gs[moved].tolist():
            f = fields[g]
            if f is not None and f[10] is not None:
                times.append(f[10])
        return array("q", sorted(times))
