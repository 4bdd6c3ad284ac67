"""The header's counts at any cut, from a time index: one bisection, not a pass.

At a cut the explorer's header says how many decisions were recorded and by how
many writers. Counted over the view's decisions that is a pass over a million of
them per slider step (seconds when the decision columns are the read model's rows
on disk). Both only change at a few times per decision, so they are kept here as
sorted times, built once per index version:

* a decision counts as *recorded* at every cut where it exists, except while it
  is a stub (only referred to, its hash empty). A decision whose fields change
  with time (:attr:`IndexTables.exceptions`) has its final fields only from its
  stable time on; before that the view's patch says what it was;
* a *writer* counts once one of its decisions exists with its final fields, or a
  patched decision at the cut names it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from kgai_tui.core.timeindex.keys import Carry
    from kgai_tui.core.timeindex.tables import IndexTables

__all__ = ["CutCounts"]


class CutCounts:
    """When each stub and each writer starts to count, final fields only."""

    __slots__ = ("stubs_from", "writers_from")

    def __init__(self, ix: IndexTables) -> None:
        """One pass over the index's decisions (their installs and existence)."""
        n = len(ix.d_exist)
        start = np.frombuffer(ix.d_exist, dtype=np.int64, count=n).copy()
        if ix.exceptions:
            exc = np.array(ix.exceptions, dtype=np.int64)
            stable = np.frombuffer(ix.d_stable, dtype=np.int64, count=n)
            start[exc] = np.maximum(start[exc], stable[exc])
        # A stub was created by a reference (its creating position is ~pos); of
        # those, the ones never recorded keep an empty hash.
        refs = np.nonzero(np.frombuffer(ix.d_cpos, dtype=np.int64, count=n) < 0)[0]
        hashes = ix.d_hash
        self.stubs_from: list[int] = sorted(
            int(start[g]) for g in refs.tolist() if not hashes[g]
        )
        codes: dict[str, int] = {}
        code = np.fromiter(
            (codes.setdefault(i, len(codes)) for i in ix.d_install),
            dtype=np.int64,
            count=n,
        )
        first = np.full(len(codes), np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, code, start)
        self.writers_from: dict[str, int] = {
            install: int(first[c]) for install, c in codes.items() if install
        }

    def recorded(self, cut: int, existing: int, patched: Iterable[Carry | None]) -> int:
        """Decisions recorded at ``cut``, of the ``existing`` ones, given the
        fields of the decisions patched there (``None``: a stub then)."""
        stubs = bisect_right(self.stubs_from, cut)
        stubs += sum(1 for f in patched if f is None or not f[9])
        return existing - stubs

    def writers(self, cut: int, patched: Iterable[Carry | None]) -> int:
        """Writers with a decision at ``cut``, given the patched decisions' fields."""
        found = {i for i, t in self.writers_from.items() if t <= cut}
        found.update(f[8] for f in patched if f is not None and f[8])
        return len(found)
