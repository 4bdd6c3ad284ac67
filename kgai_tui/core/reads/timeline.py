"""Every recorded decision in time order, filtered: what the explorer's timeline reads.

Over a replayed projection this is a pass over the decision columns. A projection
with ``timeline_reads`` (the read model now; a moment whose time index shares the
model's rows) answers from its rows instead, without holding a million decision rows
to compute a list of integers. Both give the same answer.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kgai_tui.core.reads.view import KgView

__all__ = ["Filters", "TimelineColumns", "timeline_columns", "timeline_select"]

Filters = tuple[str | None, str | None, str | None, str | None]
"""Writer, author, element kind and status (``None``: any)."""


@dataclass(frozen=True, slots=True)
class TimelineColumns:
    """What every filter of one projection starts from."""

    order: Sequence[int]  # every recorded decision: time (none last), lamport, id
    heads: frozenset[int]  # every decision in force on some element
    writers: list[str]
    authors: list[str]
    kinds: list[str]


def timeline_columns(v: KgView) -> TimelineColumns:
    """Order and filter choices over every decision (O(decisions): run in a worker)."""
    stored = v.projection.timeline_reads
    if stored is not None:
        return TimelineColumns(*stored.timeline_columns())
    real = v.recorded()
    return TimelineColumns(
        order=v.oldest_first(real),
        heads=v.all_heads(),
        writers=v.writers(real),
        authors=v.authors(real),
        kinds=v.shaped_kinds(real),
    )


def timeline_select(
    v: KgView, columns: TimelineColumns, filters: Filters
) -> tuple[Sequence[int], Sequence[int]]:
    """The decisions of ``columns.order`` passing ``filters`` (order kept), and
    their recorded times, ascending (for a histogram; decisions with none are
    skipped). Neither is changed by its reader."""
    stored = v.projection.timeline_reads
    rows: Sequence[int]
    if filters == (None, None, None, None):
        rows = columns.order
    elif stored is not None:
        rows = stored.timeline_keep(columns.order, columns.heads, filters)
    else:
        writer, author, kind, status = filters
        rows = v.select(
            columns.order,
            writer=writer,
            author=author,
            kind=kind,
            status=status,
            heads=columns.heads,
        )
    if stored is not None:
        return rows, stored.timeline_stamps(rows)  # in timeline order: ascending
    return rows, sorted(v.stamps(rows))
