"""Per element, the decisions that shape it: unpacked one element at a time.

A warm open loads this index packed (element ids, counts, decision indices and
authority bytes); building a dict for each of 10,000 elements and two million SHAPES
edges costs about 0.3 s at a million decisions, before the first screen can show one
element. :class:`ShapesByElement` unpacks an element's dict when it is first read and
keeps it, so a read of one element pays for that element only.
"""

from __future__ import annotations

import itertools
from array import array
from collections.abc import Iterator, MutableMapping, Sequence
from typing import Any

Packed = tuple[list[str], bytes, bytes, bytes]


class ShapesByElement(MutableMapping[str, dict[int, bool]]):
    """Element id -> {decision index: authority}, in SHAPES creation order."""

    __slots__ = ("_at", "_decs", "_flags", "_open", "_packed")

    def __init__(self, packed: Sequence[Any]) -> None:
        """Index the packed columns (element ids, counts, decision indices, authorities).

        They come from a cache file, so their shape is checked, not assumed.

        Raises:
            ValueError: The columns do not describe each other.
        """
        eids, counts_raw, decs_raw, auth = packed
        if not (
            isinstance(eids, list)
            and isinstance(auth, bytes)
            and len(counts_raw) == 8 * len(eids)
            and len(decs_raw) == 8 * len(auth)
        ):
            raise ValueError("el_shapes columns do not match")
        counts, self._decs = array("q"), array("q")
        counts.frombytes(counts_raw)
        self._decs.frombytes(decs_raw)
        if sum(counts) != len(self._decs):
            raise ValueError("el_shapes counts do not add up")
        self._flags = auth
        starts = itertools.accumulate(counts, initial=0)
        self._at: dict[str, tuple[int, int]] = {
            eid: (start, n) for eid, start, n in zip(eids, starts, counts, strict=False)
        }
        if len(self._at) != len(eids):
            raise ValueError("el_shapes names an element twice")
        self._open: dict[str, dict[int, bool]] = {}
        self._packed: Packed | None = (eids, counts_raw, decs_raw, auth)

    def __getitem__(self, eid: str) -> dict[int, bool]:
        """The element's shapers, unpacked on first read (KeyError if unknown)."""
        shapers = self._open.get(eid)
        if shapers is None:
            start, n = self._at[eid]
            end = start + n
            shapers = self._open[eid] = dict(
                zip(
                    self._decs[start:end],
                    map(bool, self._flags[start:end]),
                    strict=True,
                )
            )
        return shapers

    def __setitem__(self, eid: str, shapers: dict[int, bool]) -> None:
        """Set an element's shapers; a new element goes last, as in a dict."""
        if eid not in self._at:
            self._at[eid] = (0, 0)
        self._open[eid] = shapers
        self._packed = None

    def __delitem__(self, eid: str) -> None:
        """Forget an element."""
        del self._at[eid]
        self._open.pop(eid, None)
        self._packed = None

    def __iter__(self) -> Iterator[str]:
        """Element ids in insertion order."""
        return iter(self._at)

    def __len__(self) -> int:
        """The number of elements."""
        return len(self._at)

    def __contains__(self, eid: object) -> bool:
        """Whether the element has an entry (without unpacking it)."""
        return eid in self._at

    def packed(self) -> Packed | None:
        """The columns it was built from, while nothing can have changed them.

        An unpacked dict may have been changed in place by a replay, so only an
        index no one read or wrote is still its packed form.
        """
        return self._packed if not self._open else None


def packed_shapes(shapes: MutableMapping[str, dict[int, bool]]) -> Packed:
    """Shapes per element as element ids, counts, decision indices and authorities
    (what :class:`ShapesByElement` reads back; one kept packed is returned as is)."""
    if isinstance(shapes, ShapesByElement):
        packed = shapes.packed()
        if packed is not None:  # never read since loading: still packed
            return packed
    eids = list(shapes)
    counts = array("q", (len(s) for s in shapes.values()))
    decs = array("q", itertools.chain.from_iterable(shapes.values()))
    auth = bytes(itertools.chain.from_iterable(s.values() for s in shapes.values()))
    return eids, counts.tobytes(), decs.tobytes(), auth
