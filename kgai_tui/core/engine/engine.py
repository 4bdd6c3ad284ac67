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

import itertools
import mmap
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import orjson

from kgai_tui.core.errors import StoreNotFoundError
from kgai_tui.core.heap import GcPaused, settle_heap
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.store.logscan import (
    CANONICAL,
    DECISION_ID_OK,
    HASH_OK,
    ShardScan,
)
from kgai_tui.core.store.regular_file import open_regular
from kgai_tui.core.store.shards import (
    LineProblem,
    ShardEvent,
    ShardRead,
    list_log,
    read_shard,
)
from kgai_tui.core.wire.codec import decode_line, event_from_obj, event_obj
from kgai_tui.core.wire.model import Event

if TYPE_CHECKING:
    from kgai_tui.core.timeindex.index import TimeIndex

GATES = HASH_OK | DECISION_ID_OK

# Called once per hash-verified event in canonical order, duplicates removed:
# (event dict, passed the decision-id gate too).
EventObserver = Callable[[dict[str, Any], bool], None]


@dataclass(frozen=True, slots=True)
class LogSummary:
    """Counts of what was read, for status and warnings."""

    shards: int
    events: int
    skipped: int


def canonical_events(
    shards: Sequence[ShardRead], *, check_decision_id: bool = True
) -> list[Event]:
    """Return the events that pass the gates, in canonical ``(lamport, hash)`` order."""
    kept: list[Event] = []
    for shard in shards:
        for item in shard.events:
            d = item.decoded
            if d.hash_ok and (d.decision_id_ok or not check_decision_id):
                kept.append(d.event)
    kept.sort(key=lambda ev: (ev.lamport, ev.hash))
    return kept


def replay(events: Sequence[Event]) -> Projection:
    """Replay gated, ordered events into a fresh projection."""
    projection = Projection()
    projection.apply_all(events)
    return projection


def scans_from_shards(shards: Sequence[ShardRead]) -> list[ShardScan]:
    """Compact columns for shards already decoded in memory (tests, generators)."""
    out = []
    for shard in shards:
        scan = ShardScan(shard.name, shard.size, shard.newline_count)
        for i, item in enumerate(shard.events):
            d = item.decoded
            scan.offsets.append(-1)
            scan.lengths.append(0)
            scan.lines.append(item.line)
            scan.lamports.append(d.event.lamport)
            scan.hashes.append(d.event.hash)
            scan.flags.append(
                (HASH_OK if d.hash_ok else 0)
                | (DECISION_ID_OK if d.decision_id_ok else 0)
                | (CANONICAL if d.canonical else 0)
            )
            scan.slow[i] = event_obj(d.event)
            if i and (not d.event.parents or d.event.parents[0] != scan.hashes[i - 1]):
                scan.chain_breaks.append(i)
        scan.problems = list(shard.problems)
        scan.torn_tail = shard.torn_tail
        out.append(scan)
    return out


def canonical_order(
    scans: Sequence[ShardScan], start: Sequence[int] | None = None
) -> list[tuple[int, str, int, int]]:
    """``(lamport, hash, shard, event)`` of every hash-verified event, in replay order.

    ``start`` skips each shard's first events (those already applied on a warm open).
    Equal hashes are adjacent, so a caller drops duplicates by looking one back.
    """
    keys: list[tuple[int, str, int, int]] = []
    for si, scan in enumerate(scans):
        first = 0 if start is None else start[si]
        lam, hashes, flags = scan.lamports, scan.hashes, scan.flags
        keys.extend(
            (lam[i], hashes[i], si, i)
            for i in range(first, len(hashes))
            if flags[i] & HASH_OK
        )
    keys.sort()
    return keys


# flags byte -> its HASH_OK bit (bytes.translate picks the hash-verified events).
_HASHED: Final = bytes(i & HASH_OK for i in range(256))
# Bytes of lines read between two releases of the mapped pages.
_RELEASE_EVERY: Final = 32 * 1024 * 1024


class LineSource:
    """Fetch one event's canonical dict by (shard, event), from the files or memory."""

    def __init__(self, log_dir: Path | None, scans: Sequence[ShardScan]) -> None:
        """Remember where the shards are; files are read on first use."""
        self.log_dir = log_dir
        self.scans = scans
        self._data: dict[int, mmap.mmap | bytes] = {}
        self._unreleased = 0

    def load(self, si: int, i: int) -> dict[str, Any]:
        """Return the canonical dict of event ``i`` of shard ``si``."""
        scan = self.scans[si]
        slow = scan.slow.get(i)
        if slow is not None:
            return slow
        data = self._data.get(si)
        if data is None:
            data = self._data[si] = self._read(scan.name)
        off = scan.offsets[i]
        length = scan.lengths[i]
        obj: dict[str, Any] = orjson.loads(data[off : off + length])
        self._unreleased += length
        if self._unreleased > _RELEASE_EVERY:
            self._drop_pages()
        return obj

    def _drop_pages(self) -> None:
        """Let go of the mapped pages read so far (they stay in the page cache).

        A pass over the whole log would otherwise keep every page it touched in
        this process's RSS: 0.8 GB at a million decisions, on top of the index
        being built from it (measured: the time index build's peak 2.7 -> 2.0 GB).
        """
        self._unreleased = 0
        for data in self._data.values():
            if isinstance(data, mmap.mmap):
                data.madvise(mmap.MADV_DONTNEED)

    def _read(self, name: str) -> mmap.mmap | bytes:
        """Map a shard read-only (page cache, not private memory).

        Only a regular file, and only up to its size at open (:mod:`regular_file`).
        """
        assert self.log_dir is not None
        with open_regular(self.log_dir / name) as f:
            return f.map(populate=False)

    def release(self) -> None:
        """Unmap the shards mapped so far."""
        for data in self._data.values():
            if isinstance(data, mmap.mmap):
                data.close()
        self._data.clear()


def apply_in_order(
    projection: Projection,
    scans: Sequence[ShardScan],
    source: LineSource,
    keys: Sequence[tuple[int, str, int, int]],
    observers: Sequence[EventObserver] = (),
    *,
    after: tuple[int, str] | None = None,
) -> None:
    """Apply ordered events: the gated ones to the projection, every one to observers."""
    last = after[1] if after is not None else None
    for _, ev_hash, si, i in keys:
        if ev_hash == last:
            continue
        last = ev_hash
        obj = source.load(si, i)
        gated = scans[si].flags[i] & DECISION_ID_OK != 0
        if gated:
            projection.apply_obj(obj)
        for observe in observers:
            observe(obj, gated)
    projection.flush_props()


class Engine:
    """A replayed store: compact columns of the log plus the projection built from it."""

    def __init__(
        self,
        root: Path | None,
        scans: Sequence[ShardScan],
        projection: Projection | None = None,
        shards: Sequence[ShardRead] | None = None,
        observers: Sequence[EventObserver] = (),
    ) -> None:
        """Build (or adopt) the projection for scanned shards."""
        self.root = root
        self.scans = list(scans)
        self._shards = None if shards is None else list(shards)
        self._events: list[Event] | None = None
        # How this engine came to be: "cold" (replayed from the log), "warm" (the
        # cache as it was) or "append" (the cache plus appended lines).
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
        # Entries of log/ named like shards but not regular files: never read,
        # reported with the problems (shards.list_log).
        self.refused: list[LineProblem] = []
        self._time_index: TimeIndex | None = None
        self.cache_base: Path | None = None

    @property
    def time_index(self) -> TimeIndex:
        """The index over time behind as-of reads and the time slider.

        Built on first use in one streaming pass over the log (or loaded from its
        cache file beside the engine cache), never during an open: most reads do
        not need it.
        """
        if self._time_index is None:
            from kgai_tui.core.engine.cache import load_or_build_time_index

            self._time_index = load_or_build_time_index(self, self.cache_base)
            settle_heap(self.projection.applied_count)
        return self._time_index

    def reset_time_index(self) -> None:
        """Forget the time index (the next use loads it from its cache again)."""
        self._time_index = None

    @property
    def log_dir(self) -> Path | None:
        """The store's ``log/`` directory (``None`` for an in-memory engine)."""
        return None if self.root is None else self.root / "log"

    @classmethod
    def open(
        cls,
        root: Path,
        *,
        cache: bool = True,
        cache_base: Path | None = None,
        background_save: bool = False,
    ) -> Engine:
        """Open the store at ``root`` read-only; ``cache=False`` ignores the warm cache.

        ``cache_base`` replaces the user cache directory (benchmarks, tests).

        Raises:
            StoreNotFoundError: ``root/log`` is not a directory.
        """
        log_dir = root / "log"
        if not log_dir.is_dir():
            raise StoreNotFoundError(f"no kgai store at {root} (no log/ directory)")
        if cache:
            from kgai_tui.core.engine.cache import open_cached

            return open_cached(root, cache_base, background=background_save)
        from kgai_tui.core.engine.cold_open import open_cold

        listing = list_log(log_dir)
        engine = open_cold(root, listing.names)
        engine.refused = listing.refused
        return engine

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

    def event_for(self, event_hash: str) -> Event | None:
        """Return the applied event with this hash (for a decision's full record)."""
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

    def where(self, event_hash: str) -> str:
        """``log/<shard>:<line>`` of the last parsed line with this hash, or ``?``."""
        found = "?"
        for scan in self.scans:
            lines, hashes = scan.lines, scan.hashes
            for i in range(len(hashes)):
                if hashes[i] == event_hash:
                    found = f"log/{scan.name}:{lines[i]}"
        return found

    def _decode(self, si: int, i: int) -> Event:
        scan = self.scans[si]
        if self._shards is not None or scan.offsets[i] < 0:
            return self.shards[si].events[i].decoded.event
        assert self.log_dir is not None
        with open_regular(self.log_dir / scan.name) as f:
            raw = f.read(scan.offsets[i], scan.lengths[i])
        return decode_line(raw).event

    def decision_events(
        self, after_lines: dict[str, int] | None = None
    ) -> Iterator[tuple[Event, bool]]:
        """Hash-verified decision events with their decision-id gate, for indexing.

        :meth:`decision_objs` with each canonical dict built into an :class:`Event`.
        """
        for obj, id_ok in self.decision_objs(after_lines):
            yield event_from_obj(obj), id_ok

    def decision_order(
        self, after_lines: dict[str, int] | None = None
    ) -> list[tuple[int, str, str, int, int, int]]:
        """``(lamport, hash, shard, line, shard index, event)`` of hash-verified events.

        Sorted: the order bulk readers (the search index) consume the log in.
        ``after_lines`` keeps only the lines after a shard's given line number (what
        was appended since). A full pass keeps every line (numbers start at 1) and
        selects with ``zip`` and ``compress`` (C loops), not a test per event.
        """
        keys: list[tuple[int, str, str, int, int, int]] = []
        for si, scan in enumerate(self.scans):
            lam, hashes, flags = scan.lamports, scan.hashes, scan.flags
            lines = scan.lines
            if after_lines is None:
                rows = zip(
                    lam,
                    hashes,
                    itertools.repeat(scan.name),
                    lines,
                    itertools.repeat(si),
                    range(len(lam)),
                )
                keys.extend(itertools.compress(rows, flags.translate(_HASHED)))
                continue
            seen = after_lines.get(scan.name, 0)
            keys.extend(
                (lam[i], hashes[i], scan.name, lines[i], si, i)
                for i in range(len(hashes))
                if flags[i] & HASH_OK and lines[i] > seen
            )
        keys.sort()
        return keys

    def decision_objs(
        self, after_lines: dict[str, int] | None = None
    ) -> Iterator[tuple[dict[str, Any], bool]]:
        """Hash-verified decision events as canonical dicts, with their id gate.

        In :meth:`decision_order`. Decoded one at a time from the files, so a
        million events never sit in memory; the dicts are what a bulk reader (the
        search index) wants, without an Event each.
        """
        source = LineSource(self.log_dir, self.scans)
        try:
            for key in self.decision_order(after_lines):
                si, i = key[4], key[5]
                obj = source.load(si, i)
                if obj["decision"] is not None:
                    yield obj, bool(self.scans[si].flags[i] & DECISION_ID_OK)
        finally:
            source.release()

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
