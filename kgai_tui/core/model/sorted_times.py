"""Sorted int64 times, asked "how many are at or before this cut", without loading them.

``people --as-of`` keeps per author a few sorted arrays of times
(:mod:`kgai_tui.core.model.people_steps`). Loaded whole they cost what they hold:
at 10M decisions ~300 MB and 1.1 s a read. Stored as one blob each, laid out as

    b"kgS1", n (int64), B (int64), fences (every B-th value), the n values

a read takes the fences (n / B values) and then the one block of B values the
cut falls in, through SQLite's incremental blob reads: a few kilobytes per array
whatever the store's size. An old or damaged blob fails the layout check and
raises :class:`~kgai_tui.core.model.rows.ModelCorruptError` (the whole store then
answers, and the steps are built again).
"""

from __future__ import annotations

import sqlite3
import struct
from array import array
from bisect import bisect_right
from typing import Final, Protocol

from kgai_tui.core.model.rows import ModelCorruptError

__all__ = ["BLOCK", "InMemory", "OnDisk", "SortedTimes", "encode"]

_MAGIC: Final = b"kgS1"
_HEAD: Final = struct.Struct("<4sqq")
#: Values per block: one block read is 8 KiB.
BLOCK: Final = 1024


class SortedTimes(Protocol):
    """Sorted times, asked by cut."""

    def upto(self, cut: int) -> tuple[int, int | None, int | None]:
        """How many are ``<= cut``, the first of them and the last (``None``, ``None``
        when there are none)."""
        ...  # pragma: no cover


class InMemory:
    """Sorted times held in an array (just built from the rows)."""

    __slots__ = ("values",)

    def __init__(self, values: array[int]) -> None:
        """Wrap ``values``, sorted ascending."""
        self.values = values

    def upto(self, cut: int) -> tuple[int, int | None, int | None]:
        """See :meth:`SortedTimes.upto`."""
        k = bisect_right(self.values, cut)
        if k == 0:
            return 0, None, None
        return k, self.values[0], self.values[k - 1]


def encode(values: array[int], block: int = BLOCK) -> bytes:
    """The stored layout of ``values`` (sorted ascending), ``block`` values a block."""
    fences = values[::block]
    return _HEAD.pack(_MAGIC, len(values), block) + fences.tobytes() + values.tobytes()


class OnDisk:
    """Sorted times in a stored blob, read a block at a time."""

    __slots__ = ("_blob", "_block", "_fences", "_n")

    def __init__(
        self, db: sqlite3.Connection, table: str, column: str, row: int
    ) -> None:
        """Open the blob of ``table.column`` at rowid ``row`` (read-only) and read
        its fences.

        Raises:
            ModelCorruptError: it is not laid out as :func:`encode` writes.
        """
        try:
            self._blob = db.blobopen(table, column, row, readonly=True)
            size = len(self._blob)
            head = self._blob.read(_HEAD.size)
        except sqlite3.Error as exc:
            raise ModelCorruptError("a person's times cannot be read") from exc
        if len(head) != _HEAD.size:
            raise ModelCorruptError("a person's times are cut short")
        magic, n, block = _HEAD.unpack(head)
        n_fences = -(-n // block) if block > 0 else -1
        if (
            magic != _MAGIC
            or n < 0
            or block <= 0
            or size != _HEAD.size + 8 * (n_fences + n)
        ):
            raise ModelCorruptError("a person's times are not laid out as written")
        self._n, self._block = n, block
        self._fences = array("q")
        self._fences.frombytes(self._blob.read(8 * n_fences))

    def upto(self, cut: int) -> tuple[int, int | None, int | None]:
        """See :meth:`SortedTimes.upto`: the fences, then one block."""
        j = bisect_right(self._fences, cut) - 1
        if j < 0:
            return 0, None, None
        start = j * self._block
        count = min(self._block, self._n - start)
        self._blob.seek(_HEAD.size + 8 * (len(self._fences) + start))
        values = array("q")
        values.frombytes(self._blob.read(8 * count))
        r = bisect_right(values, cut)  # >= 1: the block starts with its fence
        return start + r, self._fences[0], values[r - 1]

    def close(self) -> None:
        """Let the blob go."""
        self._blob.close()
