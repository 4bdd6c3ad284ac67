"""When each decision starts to count at a cut, from a time index: bisections,
not passes.

At a cut the explorer's header says how many decisions were recorded and by how
many writers, and its timeline lists them with their writers, authors and
statuses. Counted over the view's decisions that is a pass over a million of them
per slider step (seconds when the decision columns are the read model's rows on
disk). Each only changes at a few times per decision, so they are kept here as
times, built once per index version:

* a decision has its final fields from its *start*: when it exists, or, for one
  whose fields change with time (:attr:`IndexTables.exceptions`), from its
  stable time on; before that the view's patch says what it was;
* a decision counts as *recorded* unless it is a stub (only referred to, its hash
  empty): the stubs of the final state are the decisions created by a reference
  and never recorded;
* a writer (an author) counts once one of its recorded decisions has started, or
  a patched decision at the cut names it;
* a decision is *superseded* from the first time an edge into it is included.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Final

import numpy as np

if TYPE_CHECKING:
    import numpy.typing as npt

    from kgai_tui.core.timeindex.keys import Carry
    from kgai_tui.core.timeindex.tables import IndexTables

__all__ = ["NEVER", "CutCounts"]

#: A time after every cut.
NEVER: Final = np.iinfo(np.int64).max


class CutCounts:
    """When each stub, writer, author and supersession starts to count."""

    def __init__(self, ix: IndexTables) -> None:
        """One pass over the index's decisions (their installs and existence)."""
        self._ix = ix
        n = len(ix.d_exist)
        # A mapped index's column is read in place (8 MB at 1M); an array is
        # copied, since a view of it would keep the fold from growing it.
        start = np.frombuffer(ix.d_exist, dtype=np.int64, count=n)
        if ix.exceptions or not isinstance(ix.d_exist, memoryview):
            start = start.copy()
            exc = np.array(ix.exceptions, dtype=np.int64)
            stable = np.frombuffer(ix.d_stable, dtype=np.int64, count=n)
            start[exc] = np.maximum(start[exc], stable[exc])
        self.start: npt.NDArray[np.int64] = start
        # A stub was created by a reference (its creating position is ~pos); of
        # those, the ones never recorded keep an empty hash.
        refs = np.nonzero(np.frombuffer(ix.d_cpos, dtype=np.int64, count=n) < 0)[0]
        hashes = ix.d_hash
        self.stubs: frozenset[int] = frozenset(
            g for g in refs.tolist() if not hashes[g]
        )
        self.stubs_from: list[int] = sorted(int(start[g]) for g in self.stubs)
        saved = ix.saved_writers
        self.writers_from = (
            saved[1]
            if saved is not None and saved[0] == ix.version
            else self._first_by(ix.d_install)
        )
        self._authors_from: dict[str, int] | None = None
        self._superseded_from: npt.NDArray[np.int64] | None = None

    def _first_by(self, column: Sequence[str]) -> dict[str, int]:
        """Per value of ``column``, the earliest start of a recorded decision."""
        n = len(self.start)
        codes: dict[str, int] = {}
        code = np.fromiter(
            (codes.setdefault(v, len(codes)) for v in column), dtype=np.int64, count=n
        )
        if self.stubs:
            code[np.fromiter(self.stubs, dtype=np.int64)] = len(codes)  # none
        first = np.full(len(codes) + 1, NEVER, dtype=np.int64)
        np.minimum.at(first, code, self.start)
        return {v: int(first[c]) for v, c in codes.items() if first[c] != NEVER}

    @property
    def authors_from(self) -> dict[str, int]:
        """Per author, the earliest start of a recorded decision (built on first use:
        only the timeline lists authors)."""
        if self._authors_from is None:
            self._authors_from = self._first_by(self._ix.d_author)
        return self._authors_from

    @property
    def superseded_from(self) -> npt.NDArray[np.int64]:
        """Per decision, the first time an edge superseding it is included
        (:data:`NEVER`: none)."""
        if self._superseded_from is None:
            ix = self._ix
            edges = len(ix.e_dst)
            when = np.frombuffer(ix.e_time, dtype=np.int64, count=edges).copy()
            for e, more in ix.e_more.items():
                when[e] = min(t for _, t in more)
            found = np.full(len(self.start), NEVER, dtype=np.int64)
            dst = np.frombuffer(ix.e_dst, dtype=np.int64, count=edges)
            np.minimum.at(found, dst, when)
            self._superseded_from = found
        return self._superseded_from

    def recorded(self, cut: int, existing: int, patched: Iterable[Carry | None]) -> int:
        """Decisions recorded at ``cut``, of the ``existing`` ones, given the
        fields of the decisions patched there (``None``: a stub then)."""
        stubs = bisect_right(self.stubs_from, cut)
        stubs += sum(1 for f in patched if f is None or not f[9])
        return existing - stubs

    def writers(self, cut: int, patched: Iterable[Carry | None]) -> set[str]:
        """The install ids of the decisions recorded at ``cut`` (``""`` included
        when one has none), given the patched decisions' fields."""
        found = {i for i, t in self.writers_from.items() if t <= cut}
        found.update(f[8] for f in patched if f is not None and f[9])
        return found

    def authors(self, cut: int, patched: Iterable[Carry | None]) -> set[str]:
        """The authors of the decisions recorded at ``cut``."""
        found = {a for a, t in self.authors_from.items() if t <= cut}
        found.update(f[4] for f in patched if f is not None and f[9])
        return found
