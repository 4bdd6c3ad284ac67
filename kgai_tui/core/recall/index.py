"""The exact recall index: the same relevance floats as the scan, in milliseconds.

:class:`RecallIndex` scores every decision and element of a projection against a
topic and paths bit-identically to :func:`~kgai_tui.core.reads.context.relevance`,
and catches up with new events before every answer; :func:`recall_index_of` keeps
one per projection. How it stays exact: docs/performance.md, "The recall index".
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final

import numpy as np

from kgai_tui.core.heap import settle_heap
from kgai_tui.core.recall.fields import SparseRows
from kgai_tui.core.recall.scoring import (
    ABOUT_WEIGHT,
    DECISION_WEIGHT,
    decision_about_score,
)
from kgai_tui.core.recall.segments import (
    ElementPart,
    Elements,
    Segment,
    SegmentPart,
    element_part,
    segment_part,
)
from kgai_tui.core.recall.tiers import merged_tail
from kgai_tui.core.recall.tokens import F64, utf8

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection_view import ProjectionView

__all__ = [
    "ElementPart",
    "RecallIndex",
    "SegmentPart",
    "element_part",
    "recall_index_of",
    "segment_part",
]

#: Decisions appended since the last segment are scored by the reference function
#: until there are this many; then they become a segment of their own.
DELTA_MAX: Final = 512


# --------------------------------------------------------------------------- index


class RecallIndex:
    """Exact, incremental recall scores over one projection (see the module doc).

    Build once with :meth:`from_projection`; every query first catches up with
    events applied to the projection since (:meth:`refresh`), so it never answers
    for a stale state. Assumption (true of :mod:`kgai_tui.core.replay.projection`): a
    decision's title, rationale and summary never change once it is filled, shapes
    and elements only grow, and the projection changes only through ``apply``
    (which bumps ``applied_count``). Placeholder decisions (created empty by a
    ``supersedes``) are re-checked, and a decision that gains shapes is detected.
    """

    #: The per-decision scores of the last query, for :meth:`best_decision`.
    _last_scores: tuple[tuple[object, ...], list[F64 | SparseRows | None]] | None = None
    #: Element id -> position, for a stored index built on first use.
    _el_map: dict[str, int] | None = None

    def __init__(self, p: ProjectionView) -> None:
        """Index the whole projection (prefer :meth:`from_projection`)."""
        self._p = p
        self._frozen = False
        self._build()

    @classmethod
    def stored(
        cls,
        p: ProjectionView,
        elements: Elements,
        segments: Sequence[SegmentPart],
        stale: Iterable[int],
    ) -> RecallIndex:
        """An index answering for ``p`` from stored parts, for one query's snapshot.

        ``segments`` cover decisions up to some count; every decision past it, and
        the ``stale`` ones (their text or shapes changed since their segment was
        written), are scored by the reference function. It never refreshes: the
        projection it answers for is a snapshot too (the model on disk).
        """
        index = cls.__new__(cls)
        index._p = p
        index._frozen = True
        index._applied = p.applied_count
        index._elements = elements
        index._el_map = None  # built on first use: most queries never ask
        index._segments = [Segment.from_part(part) for part in segments]
        covered = sum(len(part.decs) for part in segments)
        index._n_dec = len(p.dec_id)
        stale_set = set(stale)
        if stale_set:  # a segment's decisions ascend: look each one up, no scan
            wanted = np.asarray(sorted(stale_set), dtype=np.int64)
            for seg in index._segments:
                at = np.searchsorted(seg.decs, wanted)
                hit = at < len(seg.decs)
                hit[hit] = seg.decs[at[hit]] == wanted[hit]
                for k in at[hit].tolist():
                    seg.kill(k)
        index._delta = sorted(stale_set | set(range(covered, index._n_dec)))
        return index

    @property
    def _el_of(self) -> dict[str, int]:
        """Element id -> position in the element fields."""
        if self._el_map is None:
            self._el_map = {e: k for k, e in enumerate(self._elements.ids)}
        return self._el_map

    @_el_of.setter
    def _el_of(self, value: dict[str, int]) -> None:
        self._el_map = value

    def parts(self) -> tuple[ElementPart, list[SegmentPart]]:
        """The index as stored parts (of a freshly built one: no delta, none dead)."""
        if self._delta or any(s.dead is not None for s in self._segments):
            raise ValueError("only a freshly built index is stored")
        return self._elements.part(), [s.part() for s in self._segments]

    @classmethod
    def from_projection(cls, p: ProjectionView) -> RecallIndex:
        """Build the index of a replayed projection."""
        return cls(p)

    @property
    def projection(self) -> ProjectionView:
        """The projection this index answers for."""
        return self._p

    def _build(self) -> None:
        p = self._p
        self._applied = p.applied_count
        self._elements = Elements(p)
        self._el_of = {e: k for k, e in enumerate(self._elements.ids)}
        n = len(p.dec_id)
        self._segments: list[Segment] = []
        if n:
            self._segments.append(Segment(p, np.arange(n, dtype=np.int64), self._el_of))
        self._n_dec = n
        self._delta: list[int] = []

    def nbytes(self) -> int:
        """Approximate bytes held by the index (arrays, vocabularies)."""
        return sum(s.nbytes() for s in self._segments) + self._elements.fields.nbytes()

    # ------------------------------------------------------------------ freshness

    def refresh(self) -> None:
        """Catch up with events applied to the projection since the last call.

        New decisions join a small delta scored by the reference function (and
        become a segment past :data:`DELTA_MAX`); decisions whose shapes grew or
        placeholders that got text leave their segment for the delta; elements are
        re-indexed when any changed. Cheap when nothing was applied.
        """
        p = self._p
        if self._frozen:
            return
        if p.applied_count == self._applied and len(p.dec_id) == self._n_dec:
            return
        self._applied = p.applied_count
        els = self._elements
        nodes = p.graph.nodes
        if len(nodes) != len(els.ids) or any(
            (a["kind"], a["name"], a["props"]) != old
            for a, old in zip(nodes.values(), els.attrs, strict=False)
        ):
            ids = list(nodes)
            if ids[: len(els.ids)] != els.ids:
                self._build()  # node order changed: start over
                return
            self._elements = Elements(p)
            self._el_of = {e: k for k, e in enumerate(self._elements.ids)}
        n = len(p.dec_id)
        self._delta.extend(range(self._n_dec, n))
        self._n_dec = n
        self._evict_changed()
        if len(self._delta) > DELTA_MAX:
            decs = np.asarray(sorted(set(self._delta)), dtype=np.int64)
            self._delta = []
            self._segments.append(Segment(p, decs, self._el_of))
            self._merge()

    def _evict_changed(self) -> None:
        """Move segment decisions whose text or shapes changed to the delta."""
        p = self._p
        title, rat, summ, shapes = (
            p.dec_title,
            p.dec_rationale,
            p.dec_summary,
            p.dec_shapes,
        )
        for seg in self._segments:
            still: list[int] = []
            for k in seg.placeholders:
                i = int(seg.decs[k])
                if title[i] or rat[i] or summ[i]:
                    seg.kill(k)
                    self._delta.append(i)
                elif seg.dead is None or not seg.dead[k]:
                    still.append(k)
            seg.placeholders = still
        actual = sum(map(len, p.el_shapes.values()))
        expected = sum(s.shape_total for s in self._segments) + sum(
            len(shapes[i]) for i in set(self._delta)
        )
        if actual == expected:
            return
        for seg in self._segments:
            now = np.fromiter(
                (len(shapes[i]) for i in seg.decs.tolist()),
                dtype=np.int64,
                count=len(seg.decs),
            )
            for k in np.flatnonzero(now != seg.shape_lens).tolist():
                if seg.dead is None or not seg.dead[k]:
                    seg.kill(k)
                    self._delta.append(int(seg.decs[k]))

    def _merge(self) -> None:
        """Merge the newest segments into one as
        :func:`~kgai_tui.core.recall.tiers.merged_tail` says."""
        k = merged_tail([len(s.decs) for s in self._segments])
        if k == 1:
            return
        rest = self._segments[-k:]
        decs = np.sort(np.concatenate([s.live() for s in rest]))
        self._segments[-k:] = [Segment(self._p, decs, self._el_of)]

    # ------------------------------------------------------------------ queries

    def _boost_array(self, q_toks: Sequence[str]) -> F64:
        p = self._p
        out = np.zeros(len(self._elements.ids), dtype=np.float64)
        if not q_toks:
            return out
        scores = [seg.decision_scores(q_toks) for seg in self._segments]
        # Kept for best_decision: the hints of a thin answer ask right after.
        self._last_scores = (self._scores_key(q_toks), scores)
        for seg, seg_score in zip(self._segments, scores, strict=True):
            seg.boost_into(seg_score, out)
        if not self._delta:
            return out
        el_of = self._el_of
        p.prefetch(self._delta)  # a model on disk: a few queries, not one each
        for i in sorted(set(self._delta)):
            shaped = p.dec_shapes[i]
            if not shaped:
                continue
            score = decision_about_score(
                q_toks, p.dec_title[i], p.dec_rationale[i], p.dec_summary[i]
            )
            if score <= 0:
                continue
            for e in shaped:
                k = el_of[e]
                if score > out[k]:
                    out[k] = score
        return out

    def _scores_key(self, q_toks: Sequence[str]) -> tuple[object, ...]:
        """What the per-decision scores depend on: the query and the segments."""
        return (tuple(q_toks), self._applied, tuple(map(id, self._segments)))

    def best_decision(
        self, q_toks: Sequence[str], eid: str, at: int | None = None
    ) -> int | None:
        """The decision shaping ``eid`` that scores best for ``q_toks`` (its index).

        The score is ``decision_about_score``, the one the boost keeps; among equal
        scores the newest wins (lamport descending, then id), so the choice does not
        depend on how the decisions are split into segments. None when no decision
        shaping the element scores above 0. ``at``: the element's position in the
        ids of :meth:`relevance_array`, when the caller has it (checked; it spares
        mapping every element id).
        """
        self.refresh()
        ids = self._elements.ids
        if at is not None and 0 <= at < len(ids) and ids[at] == eid:
            k: int | None = at
        else:
            k = self._el_of.get(eid)
        if k is None or not q_toks:
            return None
        last = self._last_scores
        if last is not None and last[0] == self._scores_key(q_toks):
            scores: list[F64 | SparseRows | None] = last[1]
        else:
            scores = [seg.decision_scores(q_toks) for seg in self._segments]
        found: list[tuple[float, int]] = []
        for seg, score in zip(self._segments, scores, strict=True):
            if score is None:
                continue
            local = seg.decisions_of(k)
            if not len(local):
                continue
            got = score.at(local) if isinstance(score, SparseRows) else score[local]
            top = float(got.max())
            if top > 0:
                found += [(top, int(i)) for i in seg.decs[local[got == top]].tolist()]
        p = self._p
        delta = sorted(set(self._delta))
        if delta:
            p.prefetch(delta)
        for i in delta:
            if eid in p.dec_shapes[i]:
                score_i = decision_about_score(
                    q_toks, p.dec_title[i], p.dec_rationale[i], p.dec_summary[i]
                )
                if score_i > 0:
                    found.append((score_i, i))
        if not found:
            return None
        top = max(s for s, _ in found)
        tied = [i for s, i in found if s == top]
        p.prefetch(tied)
        # Newest: the largest lamport, then the smallest id (ids of that lamport only).
        lam = p.dec_lamport
        lams = [lam[i] for i in tied]
        newest = max(lams)
        dec_ids = p.dec_id
        return min(
            (i for i, at in zip(tied, lams, strict=True) if at == newest),
            key=dec_ids.__getitem__,
        )

    def elements_named(self, token: str) -> list[str]:
        """The elements whose name holds ``token`` (a tokenizer token) exactly."""
        self.refresh()
        els = self._elements
        rows = els.named(utf8(token))
        return [els.ids[k] for k in rows.tolist()]

    def boost(self, q_toks: Sequence[str]) -> dict[str, float]:
        """Equal to ``decision_boost(p, q_toks)``: element -> best decision score.

        Keys are the elements some shaping decision scores above 0 for; the dict
        order may differ from the scan's.
        """
        self.refresh()
        arr = self._boost_array(q_toks)
        ids = self._elements.ids
        hit = np.flatnonzero(arr > 0).tolist()
        return dict(zip([ids[k] for k in hit], arr[hit].tolist(), strict=True))

    def relevance_array(
        self, paths: Sequence[str], q_toks: Sequence[str]
    ) -> tuple[list[str], F64]:
        """Element ids in graph node order and their relevance, as an array.

        ``rel[k] == relevance(p, ids[k], paths, q_toks, decision_boost(p, q_toks))``.
        The list is the index's own: do not mutate it.
        """
        self.refresh()
        els = self._elements
        rel = els.path_scores(paths)
        if q_toks:
            about = els.about(q_toks)
            if about is not None:
                rel = rel + ABOUT_WEIGHT * about
            boost = self._boost_array(q_toks)
            rel = rel + DECISION_WEIGHT * boost
        return els.ids, rel

    def relevances(
        self, paths: Sequence[str], q_toks: Sequence[str]
    ) -> dict[str, float]:
        """Every element id in ``p.graph.nodes`` -> its exact ``relevance``."""
        ids, rel = self.relevance_array(paths, q_toks)
        return dict(zip(ids, rel.tolist(), strict=True))


_BUILT: weakref.WeakKeyDictionary[ProjectionView, RecallIndex] = (
    weakref.WeakKeyDictionary()
)


def recall_index_of(p: ProjectionView) -> RecallIndex:
    """The recall index of a projection, built on its first use and kept with it."""
    index = _BUILT.get(p)
    if index is None:
        index = _BUILT[p] = RecallIndex.from_projection(p)
        settle_heap(p.applied_count)
    return index
