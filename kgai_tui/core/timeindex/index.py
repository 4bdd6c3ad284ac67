"""The time index: as-of reads and the time slider without replaying the log.

:class:`TimeIndex` is the fold's tables plus the reads (:meth:`~TimeIndex.at`,
:meth:`~TimeIndex.columns`, storage); :class:`TimeIndexBuilder` and
:func:`build_time_index` build one. How it answers exactly (spec 6.6, 14.8):
docs/performance.md, "The time index".
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from kgai_tui.core.gosem.gotext import rfc3339_epoch
from kgai_tui.core.timeindex.fold import IndexFold

if TYPE_CHECKING:
    from array import array
    from collections.abc import Iterable
    from datetime import datetime

    from kgai_tui.core.replay.projection import Projection
    from kgai_tui.core.replay.projection_view import ProjectionView
    from kgai_tui.core.store.shards import ShardRead
    from kgai_tui.core.timeindex.columns import IndexColumns
    from kgai_tui.core.timeindex.counts import CutCounts
    from kgai_tui.core.timeindex.view import AsOfView


class TimeIndex(IndexFold):
    """Point-in-time state of a store, answering :meth:`at` without a replay."""

    # ------------------------------------------------------------------ read

    def at(self, cut: datetime) -> AsOfView:
        """The store as of ``cut``: equal to replaying the events recorded by then."""
        from kgai_tui.core.timeindex.view import AsOfView

        self.refresh()
        return AsOfView(self, int(cut.timestamp()), self.columns, self.cut_counts)

    def cut_counts(self) -> CutCounts:
        """The header's counts at any cut (built once per version)."""
        self.refresh()
        if self._counts is None or self._counts[0] != self.version:
            from kgai_tui.core.timeindex.counts import CutCounts

            self._counts = (self.version, CutCounts(self))
        return self._counts[1]

    def columns(self) -> IndexColumns:
        """Elements, links and head steps as flat arrays (built once per version)."""
        self.refresh()
        if self._columns is None:
            from kgai_tui.core.timeindex.columns import IndexColumns

            self._columns = IndexColumns(self)
        return self._columns

    # ------------------------------------------------------------------ storage

    def dumps(self) -> bytes:
        """Serialise the index (see :mod:`kgai_tui.core.timeindex.io`)."""
        return b"".join(self.dump_parts())

    def dump_parts(self) -> list[bytes | array[int]]:
        """:meth:`dumps` as the pieces a save writes one after another."""
        from kgai_tui.core.timeindex.io import dump_index_parts

        self.refresh()
        return dump_index_parts(self, self.cut_counts().writers_from)

    @classmethod
    def loads(
        cls,
        data: bytes | memoryview,
        projection: ProjectionView | None = None,
        grown: bool = False,
        mapped: bool = False,
    ) -> TimeIndex:
        """Rebuild an index from :meth:`dumps` (``projection`` when it was shared).

        ``data`` may be a view of the mapped cache file: no copy of it is needed.
        With ``grown``, ``projection`` is of the log after appends that the index
        does not hold yet: the index is ready to fold them in (see
        :meth:`~kgai_tui.core.timeindex.fold.IndexFold.begin_tail`). With
        ``mapped``, its arrays are views of ``data``, for an index only read.

        Raises:
            ValueError: the bytes are of another format, or the projection does not
                match the one the index shared.
        """
        from kgai_tui.core.timeindex.io import load_index

        index = load_index(cls(packed=False), data, projection, grown, mapped)
        index.mark_fresh()
        if grown:
            index.begin_tail()
        return index


class TimeIndexBuilder:
    """Collect events in canonical order during open, then :meth:`finish`."""

    def __init__(self, mirror: Projection | None = None) -> None:
        """Start an empty index.

        Args:
            mirror: The projection of the same log, when at hand. A decision's id
                and fields equal to the mirror's at the same index are not
                kept a second time during the build (at 1M decisions ~330 MB
                less at the build's peak); the result is the same either way. The
                mirror must not change until :meth:`finish`.
        """
        self._index = TimeIndex()
        if mirror is not None:
            self._index.use_mirror(mirror)

    def add(self, obj: dict[str, Any], epoch: int | None, gated: bool) -> None:
        """Index one hash-verified event (canonical order, duplicates removed)."""
        self._index.add(obj, epoch, gated)

    def observe(self, obj: dict[str, Any], gated: bool) -> None:
        """:meth:`add` with the epoch parsed here (an engine ``EventObserver``)."""
        self._index.add(obj, rfc3339_epoch(obj["recorded_at"]), gated)

    def finish(self, projection: Projection | None = None) -> TimeIndex:
        """Return the finished index (sharing ``projection``'s lists when equal)."""
        return self._index.finish(projection)


def build_time_index(
    shards: Iterable[ShardRead], projection: Projection | None = None
) -> TimeIndex:
    """Build an index from shards already read (the slow path, for tests and tools)."""
    from kgai_tui.core.wire.codec import event_obj

    items = [
        item.decoded
        for shard in shards
        for item in shard.events
        if item.decoded.hash_ok
    ]
    items.sort(key=lambda d: (d.event.lamport, d.event.hash))
    builder = TimeIndexBuilder(projection)
    seen: set[str] = set()
    for d in items:
        ev = d.event
        if ev.hash in seen:
            continue
        seen.add(ev.hash)
        builder.add(event_obj(ev), rfc3339_epoch(ev.recorded_at), d.decision_id_ok)
    return builder.finish(projection)
