"""Per decision, a short list that only grows, packed: the elements it shapes, the
decisions it supersedes and those superseding it.

Nearly every decision names none or one. As one Python list each, a million
one-element lists cost 64-72 MB per column (measured at 1M: the two SUPERSEDES
columns were 145 MB of a first read's 834 MB peak, the shapes 91 MB), for 8 bytes
of information. Here each decision has one slot (its first value, or a sentinel
for none) and the rare rest sit in a dict; a read gives a tuple, made when asked.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, MutableSequence, Sequence
from typing import Any, Generic, TypeVar, overload

__all__ = ["IndexLists", "NameLists", "ShortLists"]

T = TypeVar("T")


class ShortLists(Sequence[tuple[T, ...]], Generic[T]):
    """Short lists, one per decision, grown by :meth:`append` (a new decision) and
    :meth:`add` (one more value, last, kept once); never by changing what a read
    returned.

    :attr:`slots` holds each list's first value, or :attr:`none`: the replay's hot
    loop reads it, and fills an empty one, without a call; anything else goes
    through the methods.
    """

    __slots__ = ("_more", "none", "slots")

    def __init__(self, first: MutableSequence[Any], none: Any) -> None:
        """Empty, the first values kept in ``first`` (``none``: no value)."""
        #: Per decision, its first value or :attr:`none`.
        self.slots = first
        #: What a slot holds for an empty list.
        self.none = none
        # Per decision naming more than one: its values after the first.
        self._more: dict[int, list[T]] = {}

    def __len__(self) -> int:
        """How many decisions have an entry."""
        return len(self.slots)

    @overload
    def __getitem__(self, i: int) -> tuple[T, ...]: ...

    @overload
    def __getitem__(self, i: slice) -> list[tuple[T, ...]]: ...

    def __getitem__(self, i: int | slice) -> tuple[T, ...] | list[tuple[T, ...]]:
        """Decision ``i``'s values in the order they were added (a slice: a list)."""
        if isinstance(i, slice):
            return [self._at(j) for j in range(*i.indices(len(self.slots)))]
        if i < 0:
            i += len(self.slots)
            if i < 0:
                raise IndexError(i - len(self.slots))
        return self._at(i)

    def _at(self, i: int) -> tuple[T, ...]:
        first = self.slots[i]  # an index out of range raises IndexError here
        if first == self.none:
            return ()
        more = self._more.get(i)
        return (first,) if more is None else (first, *more)

    def __iter__(self) -> Iterator[tuple[T, ...]]:
        """Every decision's values, in decision order."""
        more, none = self._more, self.none
        for i, first in enumerate(self.slots):
            if first == none:
                yield ()
            elif i in more:
                yield (first, *more[i])
            else:
                yield (first,)

    def append(self, values: Sequence[T]) -> None:
        """A new last decision naming ``values`` (usually none), each once."""
        if not values:
            self.slots.append(self.none)
            return
        first = values[0]
        self.slots.append(first)
        rest = [v for v in dict.fromkeys(values) if v != first]
        if rest:
            self._more[len(self.slots) - 1] = rest

    def add(self, i: int, value: T) -> bool:
        """Add ``value`` last to decision ``i``'s values (``i`` from 0) unless it is
        there already; whether it was added."""
        first = self.slots[i]
        if first == self.none:
            self.slots[i] = value
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


class IndexLists(ShortLists[int]):
    """Decision indices (never negative): a signed 64-bit slot each, ``-1`` for
    none, so no int object is kept per decision."""

    __slots__ = ()

    def __init__(self) -> None:
        """No decision yet."""
        super().__init__(array("q"), -1)


class NameLists(ShortLists[str]):
    """Element ids (never empty): one reference each to the replay's interned
    string, ``None`` for none."""

    __slots__ = ()

    def __init__(self) -> None:
        """No decision yet."""
        super().__init__([], None)
