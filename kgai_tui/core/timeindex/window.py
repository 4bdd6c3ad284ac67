"""What the decision plane gained between two cuts, read from a time index.

``diff`` lists the decisions recorded between FROM and TO and the supersedes edges
that appeared. Compared view by view, that is a pass over every decision of both
moments; here it is a vectorised pass over the index's arrays (when each decision
starts to exist, whether its own event created it, when each edge first counts),
plus the few decisions whose fields change over time, asked one by one. A one-hour
diff of a million decisions touches the hour's rows, not the million.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from kgai_tui.core.timeindex.queries import decision_at

if TYPE_CHECKING:
    from numpy.typing import NDArray

    from kgai_tui.core.timeindex.tables import IndexTables


def recorded_between(ix: IndexTables, lo: int | None, hi: int) -> NDArray[np.int64]:
    """Decisions (global indices) recorded as of ``hi`` and not as of ``lo``
    (Unix seconds; ``None``: the empty store): their fields are known at ``hi``
    and were not at ``lo`` (they did not exist then, or were a stub)."""
    exist = np.frombuffer(ix.d_exist, dtype=np.int64)
    own = np.frombuffer(ix.d_cpos, dtype=np.int64) >= 0  # created by its own event
    mask = (exist <= hi) & own
    if lo is not None:
        mask &= exist > lo
    # The decisions whose fields change over time (asserted again, a stub that
    # gets its event) are asked at both cuts; every other one has its fields from
    # the moment it exists, or never (a stub).
    odd = ix.exceptions
    mask[odd] = False
    late: list[int] = []
    for g in odd:
        now = exist[g] <= hi and decision_at(ix, hi, g)[0] is not None
        then = (
            lo is not None and exist[g] <= lo and decision_at(ix, lo, g)[0] is not None
        )
        if now and not then:
            late.append(g)
    return np.concatenate((np.flatnonzero(mask), np.asarray(late, dtype=np.int64)))


def edges_between(
    ix: IndexTables, lo: int | None, hi: int
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """The superseding and the superseded decisions (global indices) of the
    supersedes edges that count as of ``hi`` and not as of ``lo``: an edge counts
    from the first time an event listing it was recorded."""
    first = np.frombuffer(ix.e_time, dtype=np.int64)
    if ix.e_more:
        first = first.copy()
        for e, more in ix.e_more.items():
            first[e] = min(t for _, t in more)
    mask = first <= hi
    if lo is not None:
        mask &= first > lo
    es = np.flatnonzero(mask)
    src = np.frombuffer(ix.e_src, dtype=np.int64)[es]
    dst = np.frombuffer(ix.e_dst, dtype=np.int64)[es]
    return src, dst
