"""The time index's file in the store's cache directory, beside the read model:
built from a replay of the log and saved, then loaded for exactly the log the
model holds (extended with the lines appended since). The whole replay builds its
own index in memory and never reads or writes this file."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kgai_tui.core.gosem.gotext import rfc3339_epoch
from kgai_tui.core.heap import GcPaused, settle_heap
from kgai_tui.core.replay.order import LineSource, canonical_order
from kgai_tui.core.store.cache_file import (
    cache_header,
    read_cache_file,
    write_cache_file,
)
from kgai_tui.core.store.logscan import (
    DECISION_ID_OK,
    ShardScan,
    scan_appended,
)
from kgai_tui.core.store.shard_print import ShardPrint, grew_from
from kgai_tui.core.timeindex.index import TimeIndex, TimeIndexBuilder

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection import Projection
    from kgai_tui.core.replay.projection_view import ProjectionView


class ScannedLog(Protocol):
    """What the index is built from: an opened store (an ``Engine``)."""

    @property
    def root(self) -> Path | None:
        """The store's root (``None`` in memory: no cache file)."""

    @property
    def log_dir(self) -> Path | None:
        """The store's ``log/`` directory."""

    @property
    def scans(self) -> Sequence[ShardScan]:
        """Per shard, its scanned columns."""

    @property
    def projection(self) -> Projection:
        """The replayed projection of the same log."""


def _scan_prints(scans: Sequence[ShardScan]) -> list[list[Any]]:
    """Per shard, its fingerprint and how many of its events the index holds."""
    return [[s.shard_print().to_list(), len(s)] for s in scans]


def build_and_save_time_index(engine: ScannedLog, path: Path) -> TimeIndex:
    """The time index of the log ``engine`` replayed, built and saved at ``path``
    (the store's cache directory) for every later read of the same log: the
    replay is its builder, and the model's readers load it sharing their rows."""
    with GcPaused():
        index = build_engine_time_index(engine)
        _save_time_index(engine, index, path)
    return index


def saved_time_index(
    root: Path,
    path: Path,
    shards: list[list[Any]],
    projection: ProjectionView,
    log_dir: Path,
) -> TimeIndex | None:
    """The time index saved at ``path``, for exactly ``shards`` (per shard its
    fingerprint and event count, as :func:`_scan_prints` lists them), reading its
    decision columns from ``projection``, the read model of that log: the slider's
    and ``diff``'s history without reading the whole store.

    An index saved for a prefix of that log (shards only appended to since) is
    extended with the appended lines, read from ``log_dir`` up to the sizes in
    ``shards``, and saved again. ``None`` when it is missing, damaged, or made from
    another log, or the appended events cannot be folded in (the whole store
    answers, and saves a new one).
    """
    read = read_cache_file(root, path, sealed=True)
    if read is None:
        return None
    header, payload = read
    tail = None
    if header.get("shards") != shards:
        tail = _tail_scans(header.get("shards"), shards, log_dir)
        if tail is None:
            return None
    with GcPaused():
        # With nothing to fold in, the index is only read: its arrays stay in
        # the mapped file (a slider session at 1M kept 205 MB of copies).
        index = _loads(payload, projection, grown=tail is not None, mapped=tail is None)
        if index is not None and tail is not None:
            try:
                _fold(index.add, log_dir, tail, canonical_order(tail))
                index.end_tail()
            except ValueError:
                return None  # an appended event sorts before an indexed one
            index.refresh()
            fresh = cache_header(root)
            fresh["shards"] = shards
            write_cache_file(path, fresh, index.dump_parts(), seal=True)
    if index is not None:
        settle_heap(index.events)  # kept for the session: no collection walks it
    return index


def _loads(
    payload: bytes | memoryview,
    projection: ProjectionView,
    grown: bool = False,
    mapped: bool = False,
) -> TimeIndex | None:
    """The index a cache file's checked payload holds, or ``None`` when it does
    not decode or was shared with another projection."""
    try:
        return TimeIndex.loads(payload, projection, grown, mapped)
    except (ValueError, TypeError, KeyError, EOFError, IndexError):
        return None


def _fold(
    add: Callable[[dict[str, Any], int | None, bool], None],
    log_dir: Path | None,
    scans: Sequence[ShardScan],
    keys: Iterable[tuple[int, str, int, int]],
) -> None:
    """Add each event of ``keys`` (canonical order) once, as its line reads."""
    source = LineSource(log_dir, scans)
    last = ""
    try:
        for _, ev_hash, si, i in keys:
            if ev_hash == last:
                continue  # the same event in two shards: adjacent, once
            last = ev_hash
            obj = source.load(si, i)
            gated = bool(scans[si].flags[i] & DECISION_ID_OK)
            add(obj, rfc3339_epoch(obj["recorded_at"]), gated)
    finally:
        source.release()


def build_engine_time_index(engine: ScannedLog) -> TimeIndex:
    """Index the log's hash-verified events, in replay order: the builder."""
    keys = canonical_order(engine.scans)
    # Mirroring the projection, the builder stores no second copy of what it holds.
    builder = TimeIndexBuilder(engine.projection)
    _fold(builder.add, engine.log_dir, engine.scans, keys)
    return builder.finish(engine.projection)


def _save_time_index(engine: ScannedLog, index: TimeIndex, path: Path) -> None:
    assert engine.root is not None
    header = cache_header(engine.root)
    header["shards"] = _scan_prints(engine.scans)
    write_cache_file(path, header, index.dump_parts(), seal=True)


def _recorded_prints(recorded: Any) -> dict[str, tuple[ShardPrint, int]] | None:
    """A saved index's shards by name: fingerprint and events held (``None``:
    not such a list)."""
    if not isinstance(recorded, list):
        return None
    by_name: dict[str, tuple[ShardPrint, int]] = {}
    for r in recorded:
        try:
            old = ShardPrint.from_list(r[0])
        except (TypeError, ValueError, IndexError, KeyError):
            return None
        if len(r) != 2 or isinstance(r[1], bool) or not isinstance(r[1], int):
            return None
        by_name[old.name] = (old, r[1])
    return by_name if len(by_name) == len(recorded) else None


def _grown(old: ShardPrint, new: ShardPrint, log_dir: Path) -> bool:
    """Whether the shard ``new`` describes is ``old``'s file, only appended to."""
    if old.size > new.size:
        return False
    return old.same_file(new) or (
        old.size < new.size and grew_from(old, log_dir / new.name)
    )


def _tail_scans(
    recorded: Any, now: list[list[Any]], log_dir: Path
) -> list[ShardScan] | None:
    """The lines appended to each shard since the saved index's ``recorded``
    shards, up to ``now``'s sizes (the model's), scanned.

    ``None`` unless every recorded shard is still there, only appended to, and the
    lines between hold exactly the events ``now`` counts (a torn line completed
    since, or a shard replaced, sends the caller to the whole store).
    """
    by_name = _recorded_prints(recorded)
    if by_name is None:
        return None
    scans = []
    for entry in now:
        try:
            new, events = ShardPrint.from_list(entry[0]), int(entry[1])
        except (TypeError, ValueError, IndexError, KeyError):
            return None
        old, count = by_name.pop(new.name, (None, 0))
        offset = 0 if old is None else old.size
        if old is not None and not _grown(old, new, log_dir):
            return None
        if offset == new.size:
            if count != events:
                return None
            continue
        fresh = scan_appended(log_dir, new, offset)
        if fresh is None:
            return None
        if count + len(fresh) != events:
            return None
        scans.append(fresh)
    return None if by_name else scans
