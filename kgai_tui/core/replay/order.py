"""Replay in canonical order: sort the scanned lines by (lamport, hash) and apply them."""

from __future__ import annotations

import contextlib
import itertools
import mmap
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Final

import orjson

from kgai_tui.core.replay.ordered_keys import (
    DecisionKey,
    OrderedDecisionKeys,
    OrderedKeys,
    OrderKey,
    sort_events,
)
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.store.hash_column import HashColumn
from kgai_tui.core.store.logscan import (
    CANONICAL,
    DECISION_ID_OK,
    HASH_OK,
    ShardScan,
)
from kgai_tui.core.store.regular_file import open_regular, release_pages
from kgai_tui.core.store.shards import (
    ShardRead,
)
from kgai_tui.core.wire.codec import event_obj
from kgai_tui.core.wire.model import Event

GATES = HASH_OK | DECISION_ID_OK

# Called once per hash-verified event in canonical order, duplicates removed:
# (event dict, passed the decision-id gate too).
EventObserver = Callable[[dict[str, Any], bool], None]


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
) -> Sequence[OrderKey]:
    """``(lamport, hash, shard, event)`` of every hash-verified event, in replay order.

    ``start`` skips each shard's first events (those already applied on a warm open).
    Equal hashes are adjacent, so a caller drops duplicates by looking one back.
    Scans whose hashes a cold open keeps as bytes are ordered by NumPy
    (:mod:`~kgai_tui.core.replay.ordered_keys`); a tail's few lines, as tuples
    (no NumPy on a write).
    """
    if start is None and any(isinstance(s.hashes, HashColumn) for s in scans):
        with contextlib.suppress(ValueError):  # a verified hash that is not one
            return OrderedKeys(sort_events(scans, by_name=False))
    keys: list[OrderKey] = []
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
HASHED: Final = bytes(i & HASH_OK for i in range(256))
# Bytes of lines read between two releases of the mapped pages.
RELEASE_EVERY: Final = 32 * 1024 * 1024


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
        if self._unreleased > RELEASE_EVERY:
            self._drop_pages()
        return obj

    def _drop_pages(self) -> None:
        """Let go of the mapped pages read so far (they stay in the page cache).

        A pass over the whole log would otherwise keep every page it touched in
        this process's RSS: 0.8 GB at a million decisions, on top of the index
        being built from it (measured: the time index build's peak 2.7 -> 2.0 GB).
        """
        self._unreleased = 0
        release_pages(self._data.values())

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


def decision_keys(
    scans: Sequence[ShardScan], shifts: Sequence[int] | None = None
) -> Sequence[DecisionKey]:
    """The keys of every hash-verified event of ``scans``, sorted: the order bulk
    readers (the search index) consume the log in. ``shifts``: per scan, the lines
    before it (a scan of an appended tail numbers its lines from 1). Lines are
    selected with ``zip`` and ``compress`` (C loops), not a test per event; a
    whole replay's scans, whose hashes are bytes, are sorted by NumPy."""
    if shifts is None and any(isinstance(s.hashes, HashColumn) for s in scans):
        with contextlib.suppress(ValueError):
            return OrderedDecisionKeys(sort_events(scans, by_name=True), scans)
    keys: list[DecisionKey] = []
    for si, scan in enumerate(scans):
        shift = shifts[si] if shifts is not None else 0
        rows = zip(
            scan.lamports,
            scan.hashes,
            itertools.repeat(scan.name),
            scan.lines if not shift else [n + shift for n in scan.lines],
            itertools.repeat(si),
            range(len(scan.lamports)),
        )
        keys.extend(itertools.compress(rows, scan.flags.translate(HASHED)))
    keys.sort()
    return keys


def decision_objs_of(
    log_dir: Path | None, scans: Sequence[ShardScan], keys: Iterable[DecisionKey]
) -> Iterator[tuple[dict[str, Any], bool]]:
    """The decision events among ``keys``, as canonical dicts with their
    decision-id gate, decoded one at a time from the files (a million never sit
    in memory; no Event each)."""
    source = LineSource(log_dir, scans)
    try:
        for key in keys:
            si, i = key[4], key[5]
            obj = source.load(si, i)
            if obj["decision"] is not None:
                yield obj, bool(scans[si].flags[i] & DECISION_ID_OK)
    finally:
        source.release()


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
