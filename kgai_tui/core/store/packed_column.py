"""A column of strings packed in bytes, then the values appended after it.

The replay keeps a cold open's titles and hashes packed (:class:`~kgai_tui.core.
replay.columns.TextColumn`, :class:`~kgai_tui.core.store.hash_column.HashColumn`);
a live reload's decisions come after, as plain strings. What is common to both
(indexing from either end, slices as lists, appending) is here once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import overload

__all__ = ["PackedColumn"]


class PackedColumn(Sequence[str]):
    """:meth:`_held` packed values (each made by :meth:`_packed`), then a tail."""

    __slots__ = ("_tail",)

    def __init__(self) -> None:
        self._tail: list[str] = []

    def _held(self) -> int:
        """How many values are packed."""
        raise NotImplementedError

    def _packed(self, i: int) -> str:
        """Packed value ``i`` (``0 <= i <`` :meth:`_held`)."""
        raise NotImplementedError

    def __len__(self) -> int:
        return self._held() + len(self._tail)

    def _one(self, i: int) -> str:
        n = self._held()
        if i < 0:
            i += n + len(self._tail)
            if i < 0:
                raise IndexError("column index out of range")
        if i >= n:
            return self._tail[i - n]
        return self._packed(i)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return list(map(self._one, range(*i.indices(len(self)))))
        return self._one(i)

    def append(self, value: str) -> None:
        """A value added after the column was packed."""
        self._tail.append(value)
