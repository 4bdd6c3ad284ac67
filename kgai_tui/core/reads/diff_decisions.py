"""The two decision sections of a diff, made a block of rows at a time.

A week of a million-decision store records 568k decisions and supersedes as many:
held as row objects, those lists took 1.2 GB and 12 s to make. Here their order
is :func:`~kgai_tui.core.reads.kg.history_ranks` (two integer columns sorted by
numpy), and their rows are read, encoded and let go a block at a time
(:class:`~kgai_tui.core.gosem.gojson.Blocks`). The bytes are those of the lists:
history order (recorded time, no time last; lamport; id), each superseded
decision's ``by`` in history order too.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple

import numpy as np

from kgai_tui.core.gosem.gojson import Blocks
from kgai_tui.core.gosem.gotext import format_epoch
from kgai_tui.core.heap import trim_heap
from kgai_tui.core.reads.diff_attrib import because
from kgai_tui.core.reads.kg import history_ranks
from kgai_tui.core.replay.projection_view import element_label

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from kgai_tui.core.replay.projection_view import Field, ProjectionView

__all__ = ["BLOCK", "DecisionChanges", "decision_sections"]

#: Rows read and encoded together.
BLOCK: Final = 2048
#: What names a decision in a row (:func:`~kgai_tui.core.reads.diff_attrib.because`
#: adds the rationale).
_NAMED: Final[tuple[Field, ...]] = ("id", "title", "author", "time")

Obj = dict[str, Any]


class DecisionChanges(NamedTuple):
    """The decisions a diff lists, as view indices of TO."""

    #: Recorded in the window.
    recorded: Sequence[int] | NDArray[np.int64]
    #: Per supersedes edge that appeared in the window: the superseded decision,
    superseded: Sequence[int] | NDArray[np.int64]
    #: and the decision superseding it (the same length).
    by: Sequence[int] | NDArray[np.int64]


def _in_history_order(
    after: ProjectionView, changes: DecisionChanges
) -> tuple[NDArray[np.int64], ...]:
    """The recorded decisions in history order; the superseded ones in history
    order with where their superseders start and end in ``by`` (each one's
    superseders in history order too): ``(recorded, superseded, starts, ends, by)``."""
    recorded = np.asarray(changes.recorded, dtype=np.int64)
    gone = np.asarray(changes.superseded, dtype=np.int64)
    by = np.asarray(changes.by, dtype=np.int64)
    wanted = np.unique(np.concatenate((recorded, gone, by)))
    ranks = history_ranks(after, wanted)

    def rank(vs: NDArray[np.int64]) -> NDArray[np.int64]:
        return ranks[np.searchsorted(wanted, vs)]

    rows_recorded = recorded[np.argsort(rank(recorded), kind="stable")]
    edges = np.lexsort((rank(by), rank(gone)))  # superseded first, then its by
    gone, by = gone[edges], by[edges]
    keys, starts, counts = np.unique(gone, return_index=True, return_counts=True)
    keys_order = np.argsort(rank(keys), kind="stable")
    keys, starts = keys[keys_order], starts[keys_order]
    return rows_recorded, keys, starts, starts + counts[keys_order], by


def decision_sections(after: ProjectionView, changes: DecisionChanges) -> Obj:
    """``decisions_recorded`` and ``decisions_superseded`` of ``changes``, each a
    :class:`Blocks` whose rows are read from ``after`` when they are encoded."""
    rows_recorded, keys, starts, ends, by = _in_history_order(after, changes)
    # What ranking read and sorted was freed in the middle of the heap, where
    # glibc keeps it: handed back before the other sections are made (a
    # whole-range diff at 1M: 74 MB).
    trim_heap()
    labels: dict[str, str] = {}

    def named(eid: str) -> str:
        got = labels.get(eid)
        if got is None:
            got = labels[eid] = element_label(after, eid)
        return got

    def recorded_blocks() -> Iterator[list[Obj]]:
        for at in range(0, len(rows_recorded), BLOCK):
            vs = rows_recorded[at : at + BLOCK].tolist()
            yield [
                {
                    "id": dec_id,
                    "title": title,
                    "author": author,
                    "when": "" if stamp is None else format_epoch(stamp),
                    "rationale": rationale,
                    "elements": sorted(
                        [labels[e] if e in labels else named(e) for e in shapes]
                    ),
                }
                for dec_id, title, author, stamp, rationale, shapes in (
                    after.decision_fields(vs, (*_NAMED, "rationale", "shapes"))
                )
            ]

    def superseded_blocks() -> Iterator[list[Obj]]:
        for at in range(0, len(keys), BLOCK):
            olist = keys[at : at + BLOCK].tolist()
            lo, hi = int(starts[at]), int(ends[min(at + BLOCK, len(keys)) - 1])
            # Each read on its own: each is a dense run of rows (one range scan),
            # their union seldom is.
            slist = sorted(set(by[lo:hi].tolist()))
            fields = dict(zip(olist, after.decision_fields(olist, _NAMED), strict=True))
            by_named = {
                s: because(*f)
                for s, f in zip(
                    slist,
                    after.decision_fields(slist, (*_NAMED, "rationale")),
                    strict=True,
                )
            }
            rows = []
            for o, first, last in zip(
                olist,
                starts[at : at + BLOCK].tolist(),
                ends[at : at + BLOCK].tolist(),
                strict=True,
            ):
                dec_id, title, author, stamp = fields[o]
                rows.append(
                    {
                        "id": dec_id,
                        "title": title,
                        "author": author,
                        "when": "" if stamp is None else format_epoch(stamp),
                        "by": [by_named[s] for s in by[first:last].tolist()],
                    }
                )
            yield rows

    return {
        "decisions_recorded": Blocks(len(rows_recorded), recorded_blocks),
        "decisions_superseded": Blocks(len(keys), superseded_blocks),
    }
