"""The recall index's parts: one element part and segments over decision ranges.

A :class:`Segment` holds the fields of a contiguous range of decisions (their
postings, exact per-decision scores and the elements each shapes); the
:class:`Elements` part holds every element's fields and paths. Both are built from
a projection, kept as arrays (:class:`SegmentPart`, :class:`ElementPart`) in the
model's recall files and answered from again; :mod:`kgai_tui.core.recall.index`
combines them into exact relevance scores.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

import numpy as np
import numpy.typing as npt

from kgai_tui.core.recall.fields import Fields, SparseRows
from kgai_tui.core.recall.mapped import let_go
from kgai_tui.core.recall.scoring import (
    PATH_WEIGHT,
    glob_match,
    props_paths,
)
from kgai_tui.core.recall.tokens import F64, I32, I64

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection_view import ProjectionView

__all__ = [
    "TEXT_RUN",
    "ElementPart",
    "Elements",
    "Segment",
    "SegmentPart",
    "element_fields",
    "element_part",
    "segment_part",
    "stored_paths",
]

#: A query scores a segment's decisions sparsely while its postings hold at most
#: max(_SPARSE_MIN, decisions / _SPARSE_SHARE) entries; past that, dense arrays.
_SPARSE_MIN: Final = 4096
_SPARSE_SHARE: Final = 16
#: Scored rows whose shaped elements are gathered (and let go of) at a time.
_GATHER: Final = 8192
#: Decisions whose texts a segment's build makes and tokenizes at a time.
TEXT_RUN: Final = 1 << 16


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


class Segment:
    """A frozen set of decisions with their text postings and shaped elements."""

    def __init__(self, p: ProjectionView, decs: I64, el_of: dict[str, int]) -> None:
        """Index decisions ``decs`` (global indices, ascending) of ``p``."""
        self.decs = decs
        idx = decs.tolist()
        title, rat, summ = p.dec_title, p.dec_rationale, p.dec_summary

        runs = range(0, len(idx), TEXT_RUN)

        def titles() -> Iterator[list[str]]:
            for a in runs:
                yield [title[i] for i in idx[a : a + TEXT_RUN]]

        def rationales() -> Iterator[list[str]]:
            for a in runs:
                yield [rat[i] + " " + summ[i] for i in idx[a : a + TEXT_RUN]]

        # A run of texts at a time: whole columns were most of what the recall
        # build added at 10M (3.8 GB), once its token arrays were made compact.
        self.fields = Fields.chunked([(3.0, titles()), (1.0, rationales())], len(idx))
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
    def from_part(cls, part: SegmentPart) -> Segment:
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


class Elements:
    """Element fields (name 3, kind 2, props 1) and stored paths, by position."""

    def __init__(self, p: ProjectionView) -> None:
        """Index every element of the graph in node order."""
        nodes = p.graph.nodes
        self.ids: list[str] = list(nodes)
        self.attrs: list[tuple[str, str, str]] = [
            (a["kind"], a["name"], a["props"]) for a in (nodes[e] for e in self.ids)
        ]
        self.fields = element_fields(self.attrs)
        self.paths = stored_paths(self.attrs, range(len(self.attrs)))

    def part(self) -> ElementPart:
        """These element fields as stored parts."""
        return ElementPart(self.ids, self.attrs, self.paths, self.fields)

    @classmethod
    def from_part(cls, part: ElementPart) -> Elements:
        """Element fields answering from stored parts."""
        els = cls.__new__(cls)
        els.ids, els.attrs, els.paths, els.fields = (
            part.ids,
            part.attrs,
            part.paths,
            part.fields,
        )
        return els

    def about(self, q_toks: Sequence[str]) -> F64 | None:
        """Per element, how well its name, kind and props match ``q_toks``."""
        return self.fields.score(q_toks)

    def named(self, qb: bytes) -> I32:
        """The positions (ascending) of the elements whose name holds ``qb``."""
        return self.fields.rows_with(qb, 0)

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


def element_fields(attrs: Sequence[tuple[str, str, str]]) -> Fields:
    """The fields of elements ``(kind, name, props)``: name 3, kind 2, props 1."""
    return Fields(
        [
            (3.0, [a[1] for a in attrs]),
            (2.0, [a[0] for a in attrs]),
            (1.0, [a[2] for a in attrs]),
        ],
        len(attrs),
    )


def stored_paths(
    attrs: Sequence[tuple[str, str, str]], positions: Sequence[int]
) -> list[tuple[int, list[str]]]:
    """``(position, paths)`` of the elements whose props store paths; ``attrs[i]``
    is the element at ``positions[i]``."""
    out: list[tuple[int, list[str]]] = []
    for k, (_, _, blob) in zip(positions, attrs, strict=True):
        if "paths" in blob:
            stored = props_paths(blob)
            if stored:
                out.append((k, stored))
    return out


def element_part(p: ProjectionView) -> ElementPart:
    """The element fields of a projection (its graph), as stored parts."""
    return Elements(p).part()


def segment_part(
    p: ProjectionView, decs: I64, element_ids: Sequence[str]
) -> SegmentPart:
    """A segment over decisions ``decs`` of ``p`` (ascending), as stored parts;
    ``element_ids`` in the element part's order (graph order)."""
    el_of = {e: k for k, e in enumerate(element_ids)}
    return Segment(p, decs, el_of).part()
