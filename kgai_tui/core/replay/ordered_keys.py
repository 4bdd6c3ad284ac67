"""A whole replay's events in canonical order, as arrays: what the builders walk.

The time index and the search index are built from a cold open's scans, walking
every hash-verified event in ``(lamport, hash)`` order. As a list of tuples, each
with its hash as a ``str``, a million events cost ~280 MB for as long as the walk
lasts. Here the order is NumPy's (the hashes' 32 bytes sort as their lowercase hex
does) and each tuple is made as it is read, a chunk at a time.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Generic, TypeVar, overload

from kgai_tui.core.store.hash_column import WIDTH, HashColumn
from kgai_tui.core.store.logscan import HASH_OK, ShardScan

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

__all__ = [
    "DecisionKey",
    "OrderKey",
    "OrderedDecisionKeys",
    "OrderedKeys",
    "SortedEvents",
    "sort_events",
]

#: ``(lamport, hash, shard index, event index)`` of one event.
OrderKey = tuple[int, str, int, int]
#: ``(lamport, hash, shard, line, shard index, event index)`` of one event.
DecisionKey = tuple[int, str, str, int, int, int]
#: Tuples made at a time by a pass.
_CHUNK: Final = 65536

K = TypeVar("K")


@dataclass(frozen=True, slots=True)
class SortedEvents:
    """Per hash-verified event, in order: lamport, hash, shard index, event index."""

    lamport: npt.NDArray[np.int64]
    hashes: HashColumn
    shard: npt.NDArray[np.int64]
    event: npt.NDArray[np.int64]


def sort_events(scans: Sequence[ShardScan], *, by_name: bool) -> SortedEvents:
    """The hash-verified events of ``scans`` sorted by lamport, then hash, then
    shard (its index, or with ``by_name`` its name), then event.

    Raises:
        ValueError: a verified event's hash held as text is not one.
    """
    import numpy as np

    lamports, raws, shards, events = [], [], [], []
    for si, scan in enumerate(scans):
        n = len(scan)
        flags = np.frombuffer(bytes(scan.flags), dtype=np.uint8)
        picked = np.flatnonzero(flags & HASH_OK)
        column = scan.hashes
        if isinstance(column, HashColumn) and len(column.raw) == n * WIDTH:
            rows = np.frombuffer(column.raw, dtype=np.uint8).reshape(n, WIDTH)
            raws.append(rows[picked])
        else:  # a shard read back as strings (or grown since)
            held = HashColumn.of(column[i] for i in picked.tolist())
            raws.append(np.frombuffer(held.raw, dtype=np.uint8).reshape(-1, WIDTH))
        lamports.append(np.frombuffer(scan.lamports, dtype=np.int64)[picked])
        shards.append(np.full(len(picked), si, dtype=np.int64))
        events.append(picked.astype(np.int64))
    if not lamports:
        empty = np.zeros(0, dtype=np.int64)
        return SortedEvents(empty, HashColumn(), empty, empty)
    lam = np.concatenate(lamports)
    raw = np.concatenate(raws)
    shard = np.concatenate(shards)
    rank = shard
    if by_name:  # names compared as strings, as the tuples compare them
        by = sorted(range(len(scans)), key=lambda i: scans[i].name)
        place = np.empty(len(scans), dtype=np.int64)
        place[by] = np.arange(len(scans))
        rank = place[shard]
    words = raw.view(">u8")  # four big-endian words per hash
    # The stable sort keeps each shard's events in their order among equal keys.
    order = np.lexsort((rank, words[:, 3], words[:, 2], words[:, 1], words[:, 0], lam))
    return SortedEvents(
        lam[order],
        HashColumn(np.ascontiguousarray(raw[order]).tobytes()),
        shard[order],
        np.concatenate(events)[order],
    )


class _View(Sequence[K], Generic[K]):
    """Positions ``lo:hi`` of sorted events, each read as a key of type ``K``."""

    __slots__ = ("_hi", "_lo", "_sorted")

    def __init__(
        self, ordered: SortedEvents, lo: int = 0, hi: int | None = None
    ) -> None:
        self._sorted = ordered
        self._lo = lo
        self._hi = len(ordered.lamport) if hi is None else hi

    def _keys(self, a: int, b: int) -> list[K]:
        """The keys at positions ``a:b`` of the sorted events."""
        raise NotImplementedError

    def _part(self, lo: int, hi: int) -> _View[K]:
        raise NotImplementedError

    def __len__(self) -> int:
        return self._hi - self._lo

    @overload
    def __getitem__(self, i: int) -> K: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[K]: ...
    def __getitem__(self, i: int | slice) -> K | Sequence[K]:
        n = len(self)
        if isinstance(i, slice):
            start, stop, step = i.indices(n)
            if step == 1:  # a part of the same order, nothing made
                return self._part(self._lo + start, self._lo + max(start, stop))
            return [self[k] for k in range(start, stop, step)]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("key index out of range")
        return self._keys(self._lo + i, self._lo + i + 1)[0]

    def __iter__(self) -> Iterator[K]:
        for a in range(self._lo, self._hi, _CHUNK):
            yield from self._keys(a, min(a + _CHUNK, self._hi))


class OrderedKeys(_View[OrderKey]):
    """:func:`~kgai_tui.core.replay.order.canonical_order` of a whole replay."""

    __slots__ = ()

    def _part(self, lo: int, hi: int) -> OrderedKeys:
        return OrderedKeys(self._sorted, lo, hi)

    def _keys(self, a: int, b: int) -> list[OrderKey]:
        s = self._sorted
        return list(
            zip(
                s.lamport[a:b].tolist(),
                s.hashes[a:b],
                s.shard[a:b].tolist(),
                s.event[a:b].tolist(),
                strict=True,
            )
        )


class OrderedDecisionKeys(_View[DecisionKey]):
    """:func:`~kgai_tui.core.replay.order.decision_keys` of a whole replay."""

    __slots__ = ("_scans",)

    def __init__(
        self,
        ordered: SortedEvents,
        scans: Sequence[ShardScan],
        lo: int = 0,
        hi: int | None = None,
    ) -> None:
        super().__init__(ordered, lo, hi)
        self._scans = scans

    def _part(self, lo: int, hi: int) -> OrderedDecisionKeys:
        return OrderedDecisionKeys(self._sorted, self._scans, lo, hi)

    def _keys(self, a: int, b: int) -> list[DecisionKey]:
        s, scans = self._sorted, self._scans
        shards, events = s.shard[a:b].tolist(), s.event[a:b].tolist()
        return list(
            zip(
                s.lamport[a:b].tolist(),
                s.hashes[a:b],
                (scans[si].name for si in shards),
                map(lambda si, i: scans[si].lines[i], shards, events),
                shards,
                events,
                strict=True,
            )
        )
