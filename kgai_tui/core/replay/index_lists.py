"""Per decision, the indices of the decisions it names on one side of SUPERSEDES
edges (those it supersedes, or those superseding it), packed.

Nearly every decision names none or one. As one Python list each, a million
one-element lists cost 64-72 MB per column (measured at 1M: both columns 145 MB
of a first read's 834 MB peak), for 8 bytes of information. Here each decision
has one 64-bit slot (its first index, ``-1`` for none) and the rare rest sit in a
dict; a read gives a tuple, made when asked.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import Final, overload

__all__ = ["IndexLists"]

_NONE: Final = -1


class IndexLists(Sequence[tuple[int, ...]]):
    """Short lists of non-negative indices, one per decision, that only grow.

    Grown by :meth:`append` (a new decision) and :meth:`add` (one more index, in
    edge order, kept once), never by changing what a read returned.
    """

    __slots__ = ("_first", "_more")

    def __init__(self) -> None:
        """No decision yet."""
        self._first: array[int] = array("q")
        # Per decision naming more than one: its indices after the first.
        self._more: dict[int, list[int]] = {}

    def __len__(self) -> int:
        """How many decisions have an entry."""
        return len(self._first)

    @overload
    def __getitem__(self, i: int) -> tuple[int, ...]: ...

    @overload
    def __getitem__(self, i: slice) -> list[tuple[int, ...]]: ...

    def __getitem__(self, i: int | slice) -> tuple[int, ...] | list[tuple[int, ...]]:
        """Decision ``i``'s indices in the order they were added (a slice: a list)."""
        if isinstance(i, slice):
            return [self._at(j) for j in range(*i.indices(len(self._first)))]
        if i < 0:
            i += len(self._first)
            if i < 0:
                raise IndexError(i - len(self._first))
        return self._at(i)

    def _at(self, i: int) -> tuple[int, ...]:
        first = self._first[i]  # an index out of range raises IndexError here
        if first == _NONE:
            return ()
        more = self._more.get(i)
        return (first,) if more is None else (first, *more)

    def __iter__(self) -> Iterator[tuple[int, ...]]:
        """Every decision's indices, in decision order."""
        more = self._more
        for i, first in enumerate(self._first):
            if first == _NONE:
                yield ()
            elif i in more:
                yield (first, *more[i])
            else:
                yield (first,)

    def append(self, values: Sequence[int]) -> None:
        """A new last decision naming ``values`` (usually none)."""
        if not values:
            self._first.append(_NONE)
            return
        self._first.append(values[0])
        rest = [v for v in values[1:] if v != values[0]]
        if rest:
            self._more[len(self._first) - 1] = list(dict.fromkeys(rest))

    def add(self, i: int, value: int) -> bool:
        """Add ``value`` last to decision ``i``'s indices unless it is there
        already; whether it was added."""
        first = self._first[i]
        if first == _NONE:
            self._first[i] = value
            return True
        if first == value:
            return False
        more = self._more.get(i)
        if more is None:
            self._more[i] = [value]
            return True
        if value in more:
            return False
        more.append(value)
        return True
