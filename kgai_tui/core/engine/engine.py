"""The engine: open a store's log, gate and order its events, and replay them.

An :class:`Engine` is a read-only snapshot of one store at the moment it was opened.
Opening scans the shard files (no lock, no writes into the store), applies both
integrity gates, orders events by ``(lamport, hash)`` and replays them into a
:class:`Projection`. At a million events that is the slow part, so the projection is
kept in a cache in the user cache directory (:mod:`engine_cache`) and a later open
only checks the shards' fingerprint, applying appended lines when that is all that
changed.

The engine keeps compact columns per shard (where each event is, its lamport, hash
and gates), never the decoded events; :attr:`shards` and :attr:`events` decode the
whole log on first use for the few readers that want every event (doctor, diff).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgai_tui.core.heap import GcPaused, settle_heap
from kgai_tui.core.replay.order import (
    GATES,
    EventObserver,
    LineSource,
    apply_in_order,
    canonical_events,
    canonical_order,
    decision_keys,
    decision_objs_of,
    scans_from_shards,
)
from kgai_tui.core.replay.ordered_keys import DecisionKey
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.store.logscan import (
    ShardScan,
)
from kgai_tui.core.store.regular_file import open_regular
from kgai_tui.core.store.shards import (
    LineProblem,
    LogSummary,
    ShardEvent,
    ShardRead,
    read_shard,
)
from kgai_tui.core.timeindex.cache import build_engine_time_index
from kgai_tui.core.wire.codec import decode_line, event_from_obj
from kgai_tui.core.wire.model import Event

if TYPE_CHECKING:
    from kgai_tui.core.timeindex.index import TimeIndex


class Engine:
    """A replayed store: compact columns of the log plus the projection built from it."""

    def __init__(
        self,
        root: Path | None,
        scans: Sequence[ShardScan],
        projection: Projection | None = None,
        shards: Sequence[ShardRead] | None = None,
        observers: Sequence[EventObserver] = (),
        *,
        refused: Sequence[LineProblem] = (),
    ) -> None:
        """Build (or adopt) the projection for scanned shards.

        ``refused``: the entries of ``log/`` named like shards but not regular
        files (never read, reported with the problems).
        """
        self.root = root
        self.scans = list(scans)
        self._shards = None if shards is None else list(shards)
        self._events: list[Event] | None = None
        #: Always ``cold``: every line was read now (a handle read through the
        #: model says ``warm`` or ``append``).
        self.how = "cold"
        if projection is None:
            projection = Projection()
            source = LineSource(self.log_dir, self.scans)
            with GcPaused():
                apply_in_order(
                    projection,
                    self.scans,
                    source,
                    canonical_order(self.scans),
                    observers,
                )
            source.release()
        self.projection = projection
        self.refused: list[LineProblem] = list(refused)
        self._time_index: TimeIndex | None = None

    @property
    def time_index(self) -> TimeIndex:
        """The index over time behind as-of reads and the time slider.

        Built on first use in one streaming pass over the log, never during an
        open: most reads do not need it. The whole replay is the builder and the
        oracle: it keeps nothing in the cache (the read model saves the index it
        builds, :mod:`kgai_tui.core.model.history`).
        """
        if self._time_index is None:
            with GcPaused():
                self._time_index = build_engine_time_index(self)
            settle_heap(self.projection.applied_count)
        return self._time_index

    @property
    def log_dir(self) -> Path | None:
        """The store's ``log/`` directory (``None`` for an in-memory engine)."""
        return None if self.root is None else self.root / "log"

    @property
    def replayed(self) -> Engine:
        """This engine: the whole replay (see :class:`~kgai_tui.core.reads.store.Store`)."""
        return self

    @property
    def kept(self) -> None:
        """Nothing kept apart from the replay: its projection and time index answer."""
        return None

    def close(self) -> None:
        """Nothing held open (the replay lives in memory)."""

    @classmethod
    def from_shards(cls, shards: Sequence[ShardRead]) -> Engine:
        """Build an engine over shards held in memory (tests, generated stores)."""
        return cls(None, scans_from_shards(shards), shards=shards)

    # ------------------------------------------------------------------ the log

    @property
    def shards(self) -> list[ShardRead]:
        """Every shard fully decoded (read on first use: slow on a big store)."""
        if self._shards is None:
            log_dir = self.log_dir
            assert log_dir is not None
            self._shards = [read_shard(log_dir / s.name) for s in self.scans]
        return self._shards

    @property
    def events(self) -> list[Event]:
        """The applied events in canonical order (decodes the whole log on first use)."""
        if self._events is None:
            self._events = canonical_events(self.shards)
        return self._events

    def event_for(self, event_hash: str, install: str = "") -> Event | None:
        """Return the applied event with this hash (for a decision's full record).

        ``install`` (its writer) is a hint a store read through its model uses;
        the columns here find the line without it."""
        for si, scan in enumerate(self.scans):
            try:
                i = scan.hashes.index(event_hash)
            except ValueError:
                continue
            while True:
                if scan.flags[i] & GATES == GATES:
                    return self._decode(si, i)
                try:
                    i = scan.hashes.index(event_hash, i + 1)
                except ValueError:
                    break
        return None

    def chain_break_lines(self) -> list[tuple[str, int, int]]:
        """``(shard, line, lamport)`` of each line whose first parent is not the
        line before it, in shard then line order."""
        return [
            (scan.name, scan.lines[i], scan.lamports[i])
            for scan in self.scans
            for i in scan.chain_breaks
        ]

    def where(self, event_hash: str) -> str:
        """``log/<shard>:<line>`` of the last parsed line with this hash, or ``?``."""
        found = "?"
        for scan in self.scans:
            for i, h in enumerate(scan.hashes):
                if h == event_hash:
                    found = f"log/{scan.name}:{scan.lines[i]}"
        return found

    def _decode(self, si: int, i: int) -> Event:
        scan = self.scans[si]
        if self._shards is not None or scan.offsets[i] < 0:
            return self.shards[si].events[i].decoded.event
        assert self.log_dir is not None
        with open_regular(self.log_dir / scan.name) as f:
            raw = f.read(scan.offsets[i], scan.lengths[i])
        return decode_line(raw).event

    def decision_events(self) -> Iterator[tuple[Event, bool]]:
        """Hash-verified decision events with their decision-id gate, for indexing.

        :meth:`decision_objs` with each canonical dict built into an :class:`Event`.
        """
        for obj, id_ok in self.decision_objs():
            yield event_from_obj(obj), id_ok

    def decision_order(self) -> Sequence[DecisionKey]:
        """The keys of the hash-verified events, in the order bulk readers (the
        search index) consume the log in (:func:`decision_keys`)."""
        return decision_keys(self.scans)

    def decision_objs(self) -> Iterator[tuple[dict[str, Any], bool]]:
        """Hash-verified decision events as canonical dicts, with their id gate,
        in :meth:`decision_order` (:func:`decision_objs_of`)."""
        return decision_objs_of(self.log_dir, self.scans, self.decision_order())

    @property
    def problems(self) -> list[LineProblem]:
        """Every problem found while reading, in shard name then line order.

        The refused entries of ``log/`` (not regular files) come in name order too.
        """
        found = [p for scan in self.scans for p in scan.problems]
        if not self.refused:
            return found
        return sorted(
            self.refused + found,
            key=lambda p: p.shard.encode("utf-8", "surrogateescape"),
        )

    def all_shard_events(self) -> list[ShardEvent]:
        """Every parsed event with its location, in shard then file order."""
        return [item for shard in self.shards for item in shard.events]

    def summary(self) -> LogSummary:
        """Count shards, parsed events and skipped lines."""
        parsed = sum(len(s) for s in self.scans)
        return LogSummary(len(self.scans), parsed, len(self.problems))

    def tail_of(self, name: str) -> tuple[int, str] | None:
        """``(lamport, hash)`` of the last parsed event of a shard, or ``None``."""
        for scan in self.scans:
            if scan.name == name and len(scan):
                return scan.lamports[-1], scan.hashes[-1]
        return None

    def max_tail_lamport(self) -> int:
        """The largest lamport among each shard's last parsed event (0 when empty)."""
        return max((s.lamports[-1] for s in self.scans if len(s)), default=0)
