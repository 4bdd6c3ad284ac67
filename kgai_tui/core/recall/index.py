"""The exact recall index: the same relevance floats as the scan, in milliseconds.

:class:`RecallIndex` scores every decision and element of a projection against a
topic and paths bit-identically to :func:`~kgai_tui.core.reads.context.relevance`,
and catches up with new events before every answer; :func:`recall_index_of` keeps
one per projection. How it stays exact: docs/performance.md, "The recall index".
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from kgai_tui.core.heap import settle_heap
from kgai_tui.core.recall.fields import Fields, SparseRows
from kgai_tui.core.recall.mapped import let_go
from kgai_tui.core.recall.scoring import (
    ABOUT_WEIGHT,
    DECISION_WEIGHT,
    PATH_WEIGHT,
    decision_about_score,
    glob_match,
    split_paths,
)
from kgai_tui.core.recall.tokens import F64, I32, I64, utf8
from kgai_tui.core.wire.props import parse_props

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection import Projection

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
#: Beyond this many segments, all but the largest are merged into one.
SEGMENTS_MAX: Final = 6
#: A query scores a segment's decisions sparsely while its postings hold at most
#: max(_SPARSE_MIN, decisions / _SPARSE_SHARE) entries; past that, dense arrays.
_SPARSE_MIN: Final = 4096
_SPARSE_SHARE: Final = 16
#: Scored rows whose shaped elements are gathered (and let go of) at a time.
_GATHER: Final = 8192


@dataclass(slots=True)
class SegmentPart:
    """A segment's arrays and postings, to keep in a file and answer from again."""

    decs: I64
    shape_lens: I64
    el_ids: I64
    el_starts: I64
    el_decs: I32
    placeholders: list[int]
    fields: Fields
    shape_total: int | None = None  # sum(shape_lens), kept so a load need not sum
    # Each decision's shaped element positions, in decision order (``dec_els[
    # dec_ptr[k]:dec_ptr[k + 1]]``); files written before them have neither.
    dec_ptr: I64 | None = None
    dec_els: I32 | None = None


@dataclass(slots=True)
class ElementPart:
    """The element fields (name, kind, props) and stored paths, by graph position."""

    ids: list[str]
    attrs: list[tuple[str, str, str]]
    paths: list[tuple[int, list[str]]]
    fields: Fields


class _Segment:
    """A frozen set of decisions with their text postings and shaped elements."""

    def __init__(self, p: Projection, decs: I64, el_of: dict[str, int]) -> None:
        """Index decisions ``decs`` (global indices, ascending) of ``p``."""
        self.decs = decs
        idx = decs.tolist()
        title, rat, summ = p.dec_title, p.dec_rationale, p.dec_summary
        titles = [title[i] for i in idx]
        rs = [rat[i] + " " + summ[i] for i in idx]
        self.fields = Fields([(3.0, titles), (1.0, rs)], len(idx))
        del titles, rs
        shapes = p.dec_shapes
        lens = np.fromiter(
            (len(shapes[i]) for i in idx), dtype=np.int64, count=len(idx)
        )
        self.shape_lens: I64 = lens
        self.shape_total = int(lens.sum())
        flat = np.fromiter(
            (el_of[e] for i in idx for e in shapes[i]),
            dtype=np.int64,
            count=self.shape_total,
        )
        self.dec_ptr: I64 | None = np.zeros(len(idx) + 1, dtype=np.int64)
        np.cumsum(lens, out=self.dec_ptr[1:])
        self.dec_els: I32 | None = flat.astype(np.int32)
        local = np.repeat(np.arange(len(idx), dtype=np.int64), lens)
        order = np.argsort(flat, kind="stable")
        flat, local = flat[order], local[order]
        if len(flat):
            edges = np.flatnonzero(np.diff(flat)) + 1
            starts = np.concatenate(([0], edges))
        else:
            starts = np.zeros(0, dtype=np.int64)
        self.el_ids: I64 = flat[starts]
        self.el_starts: I64 = starts
        self.el_decs: I32 = local.astype(np.int32)
        self.dead: npt.NDArray[np.bool_] | None = None
        self.n_dead = 0
        self.placeholders = [
            k for k, i in enumerate(idx) if not (title[i] or rat[i] or summ[i])
        ]

    def nbytes(self) -> int:
        """Approximate bytes held."""
        return int(
            self.fields.nbytes()
            + self.decs.nbytes
            + self.shape_lens.nbytes
            + self.el_ids.nbytes
            + self.el_starts.nbytes
            + self.el_decs.nbytes
            + (0 if self.dec_ptr is None else self.dec_ptr.nbytes)
            + (0 if self.dec_els is None else self.dec_els.nbytes)
        )

    def decisions_of(self, k: int) -> I32:
        """The local positions of the decisions shaping element position ``k``."""
        j = int(np.searchsorted(self.el_ids, k))
        if j >= len(self.el_ids) or int(self.el_ids[j]) != k:
            return np.zeros(0, dtype=np.int32)
        end = int(self.el_starts[j + 1]) if j + 1 < len(self.el_starts) else None
        return self.el_decs[int(self.el_starts[j]) : end]

    def part(self) -> SegmentPart:
        """This segment as stored parts."""
        return SegmentPart(
            self.decs,
            self.shape_lens,
            self.el_ids,
            self.el_starts,
            self.el_decs,
            list(self.placeholders),
            self.fields,
            self.shape_total,
            self.dec_ptr,
            self.dec_els,
        )

    @classmethod
    def from_part(cls, part: SegmentPart) -> _Segment:
        """A segment answering from stored parts."""
        seg = cls.__new__(cls)
        seg.decs, seg.fields = part.decs, part.fields
        seg.shape_lens = part.shape_lens
        # Summing reads the whole array (80 MB of a mapped file at 10M decisions).
        seg.shape_total = (
            int(part.shape_lens.sum())
            if part.shape_total is None
            else int(part.shape_total)
        )
        seg.el_ids, seg.el_starts, seg.el_decs = (
            part.el_ids,
            part.el_starts,
            part.el_decs,
        )
        seg.dec_ptr, seg.dec_els = part.dec_ptr, part.dec_els
        seg.dead = None
        seg.n_dead = 0
        seg.placeholders = list(part.placeholders)
        return seg

    def kill(self, local: int) -> None:
        """Stop answering for one decision (it moved to the delta)."""
        if self.dead is None:
            self.dead = np.zeros(len(self.decs), dtype=np.bool_)
        if not self.dead[local]:
            self.dead[local] = True
            self.n_dead += 1
            self.shape_total -= int(self.shape_lens[local])

    def live(self) -> I64:
        """The global indices of the decisions this segment still answers for."""
        return self.decs if self.dead is None else self.decs[~self.dead]

    def decision_scores(self, q_toks: Sequence[str]) -> F64 | SparseRows | None:
        """Every decision's score by local position (0 for dead ones; None: all 0).

        When the query's postings are few (a name, an id), only the decisions they
        hold are scored (:class:`SparseRows`): the same values, without arrays as
        long as the segment (80 MB each at 10M decisions) or a pass over it.
        """
        if self.dec_ptr is not None:
            budget = max(_SPARSE_MIN, len(self.decs) // _SPARSE_SHARE)
            sparse = self.fields.sparse_score(q_toks, budget)
            if sparse is not None:
                if self.dead is not None and len(sparse.rows):
                    alive = ~self.dead[sparse.rows]
                    sparse = SparseRows(sparse.rows[alive], sparse.vals[alive])
                return sparse
        score = self.fields.score(q_toks)
        if score is not None and self.dead is not None:
            score[self.dead] = 0.0
        return score

    def boost_into(self, score: F64 | SparseRows | None, out: F64) -> None:
        """Raise ``out[element]`` to this segment's best decision score."""
        if score is None or not len(self.el_ids):
            return
        if isinstance(score, SparseRows):
            self._boost_sparse(score, out)
            return
        per_el = np.maximum.reduceat(score[self.el_decs], self.el_starts)
        np.maximum(out[self.el_ids], per_el, out=per_el)
        out[self.el_ids] = per_el

    def _boost_sparse(self, score: SparseRows, out: F64) -> None:
        """Each scored decision raises the elements it shapes: the same maximum
        as the dense walk over every element's decisions (a decision scoring 0
        cannot raise ``out``, which starts at 0 and only grows)."""
        ptr, dec_els = self.dec_ptr, self.dec_els
        if ptr is None or dec_els is None or not len(score.rows):
            return
        # The rows ascend: a chunk reads one stretch of each array, let go once
        # read (:mod:`kgai_tui.core.recall.mapped`), so a query scoring rows
        # spread over the whole segment holds one stretch at a time.
        for at in range(0, len(score.rows), _GATHER):
            rows = score.rows[at : at + _GATHER]
            starts = ptr[rows]
            counts = ptr[rows + 1] - starts
            n = int(counts.sum())
            if n:
                first = np.repeat(starts - (np.cumsum(counts) - counts), counts)
                els = dec_els[first + np.arange(n)]
                vals = score.vals[at : at + _GATHER]
                np.maximum.at(out, els, np.repeat(vals, counts))
                let_go(dec_els, int(starts[0]), int(starts[-1] + counts[-1]))
            let_go(ptr, int(rows[0]), int(rows[-1]) + 2)


class _Elements:
    """Element fields (name 3, kind 2, props 1) and stored paths, by position."""

    def __init__(self, p: Projection) -> None:
        """Index every element of the graph in node order."""
        nodes = p.graph.nodes
        self.ids: list[str] = list(nodes)
        self.attrs: list[tuple[str, str, str]] = [
            (a["kind"], a["name"], a["props"]) for a in (nodes[e] for e in self.ids)
        ]
        n = len(self.ids)
        self.fields = Fields(
            [
                (3.0, [a[1] for a in self.attrs]),
                (2.0, [a[0] for a in self.attrs]),
                (1.0, [a[2] for a in self.attrs]),
            ],
            n,
        )
        self.paths: list[tuple[int, list[str]]] = []
        for k, (_, _, blob) in enumerate(self.attrs):
            if "paths" in blob:
                stored = split_paths(parse_props(blob).get("paths", ""))
                if stored:
                    self.paths.append((k, stored))

    def part(self) -> ElementPart:
        """These element fields as stored parts."""
        return ElementPart(self.ids, self.attrs, self.paths, self.fields)

    @classmethod
    def from_part(cls, part: ElementPart) -> _Elements:
        """Element fields answering from stored parts."""
        els = cls.__new__(cls)
        els.ids, els.attrs, els.paths, els.fields = (
            part.ids,
            part.attrs,
            part.paths,
            part.fields,
        )
        return els

    def path_scores(self, paths: Sequence[str]) -> F64:
        """``PATH_WEIGHT`` per query path any stored path of the element globs."""
        out = np.zeros(len(self.ids), dtype=np.float64)
        if not paths:
            return out
        memo: dict[tuple[str, str], bool] = {}
        for k, stored in self.paths:
            score = 0.0
            for query in paths:
                for s in stored:
                    hit = memo.get((s, query))
                    if hit is None:
                        hit = memo[(s, query)] = glob_match(s, query)
                    if hit:
                        score += PATH_WEIGHT
                        break
            out[k] = score
        return out


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

    def __init__(self, p: Projection) -> None:
        """Index the whole projection (prefer :meth:`from_projection`)."""
        self._p = p
        self._frozen = False
        self._build()

    @classmethod
    def stored(
        cls,
        p: Projection,
        elements: ElementPart,
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
        index._elements = _Elements.from_part(elements)
        index._el_map = None  # built on first use: most queries never ask
        index._segments = [_Segment.from_part(part) for part in segments]
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
    def from_projection(cls, p: Projection) -> RecallIndex:
        """Build the index of a replayed projection."""
        return cls(p)

    @property
    def projection(self) -> Projection:
        """The projection this index answers for."""
        return self._p

    def _build(self) -> None:
        p = self._p
        self._applied = p.applied_count
        self._elements = _Elements(p)
        self._el_of = {e: k for k, e in enumerate(self._elements.ids)}
        n = len(p.dec_id)
        self._segments: list[_Segment] = []
        if n:
            self._segments.append(
                _Segment(p, np.arange(n, dtype=np.int64), self._el_of)
            )
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
            self._elements = _Elements(p)
            self._el_of = {e: k for k, e in enumerate(self._elements.ids)}
        n = len(p.dec_id)
        self._delta.extend(range(self._n_dec, n))
        self._n_dec = n
        self._evict_changed()
        if len(self._delta) > DELTA_MAX:
            decs = np.asarray(sorted(set(self._delta)), dtype=np.int64)
            self._delta = []
            self._segments.append(_Segment(p, decs, self._el_of))
            if len(self._segments) > SEGMENTS_MAX:
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
        """Merge every segment but the largest into one."""
        self._segments.sort(key=lambda s: len(s.decs), reverse=True)
        keep, rest = self._segments[0], self._segments[1:]
        decs = np.sort(np.concatenate([s.live() for s in rest]))
        self._segments = [keep, _Segment(self._p, decs, self._el_of)]

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
        ids = p.dec_id
        return min(
            (i for i, at in zip(tied, lams, strict=True) if at == newest),
            key=ids.__getitem__,
        )

    def elements_named(self, token: str) -> list[str]:
        """The elements whose name holds ``token`` (a tokenizer token) exactly."""
        self.refresh()
        els = self._elements
        rows = els.fields.rows_with(utf8(token), 0)
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
            about = els.fields.score(q_toks)
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


_BUILT: weakref.WeakKeyDictionary[Projection, RecallIndex] = weakref.WeakKeyDictionary()


def element_part(p: Projection) -> ElementPart:
    """The element fields of a projection (its graph), as stored parts."""
    return _Elements(p).part()


def segment_part(p: Projection, decs: I64, elements: ElementPart) -> SegmentPart:
    """A segment over decisions ``decs`` of ``p`` (ascending), as stored parts."""
    el_of = {e: k for k, e in enumerate(elements.ids)}
    return _Segment(p, decs, el_of).part()


def recall_index_of(p: Projection) -> RecallIndex:
    """The recall index of a projection, built on its first use and kept with it."""
    index = _BUILT.get(p)
    if index is None:
        index = _BUILT[p] = RecallIndex.from_projection(p)
        settle_heap(p.applied_count)
    return index
