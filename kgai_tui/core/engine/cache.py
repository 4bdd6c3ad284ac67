"""The warm-open cache: a replayed projection kept in the user cache directory.

One file per store, ``<user cache>/kgai-tui/<sha256(resolved path)[:32]>/engine.bin``,
never inside the store. It holds the shards' fingerprint (:mod:`shard_print`: name,
size, inode, change and modification times, SHA-256 of the first and the last
64 KiB), the compact per-shard columns and the projection as plain containers,
written with :mod:`marshal` (fast, exact for every string) behind a JSON header.
A cache file is read only if it is a regular file (:mod:`regular_file`): a link, a
FIFO or a device in its place is a miss, never followed and never waited on.

Trust is earned on every open: the header's format, Python and package versions and
store path must match, the payload's SHA-256 must equal the recorded digest, and the
fingerprint must describe the shards on disk. If the shards only grew (every old
shard still ends with the same bytes at its old size, new shards may appear) and every
new event sorts after the last applied one, the new lines are applied to the cached
projection; anything else, and any cache that fails a check, is rebuilt from the log.
A rebuilt or extended cache is written to a temporary file and renamed into place, so
a reader never sees half a cache.
"""

from __future__ import annotations

import marshal
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from kgai_tui.core.detached import run_detached
from kgai_tui.core.engine.cold_open import open_cold
from kgai_tui.core.engine.engine import Engine
from kgai_tui.core.heap import GcPaused, settle_heap
from kgai_tui.core.replay.order import LineSource, apply_in_order, canonical_order
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.store.cache_file import (
    cache_header,
    engine_cache_path,
    read_cache_file,
    write_cache_file,
)
from kgai_tui.core.store.logscan import (
    CANONICAL,
    DECISION_ID_OK,
    HASH_OK,
    ShardScan,
    scan_appended,
)
from kgai_tui.core.store.shard_print import (
    ShardPrint,
    compare_prints,
    prints_from_disk,
)
from kgai_tui.core.store.shards import LineProblem, list_log

# ---------------------------------------------------------------------- columns


def _scan_state(scan: ShardScan) -> tuple[Any, ...]:
    return (
        scan.name,
        scan.size,
        scan.newline_count,
        scan.tail_sha,
        scan.offsets.tobytes(),
        scan.lengths.tobytes(),
        scan.lines.tobytes(),
        scan.lamports.tobytes(),
        scan.hashes,
        bytes(scan.flags),
        [(p.shard, p.line, p.reason, p.hash) for p in scan.problems],
        scan.torn_tail,
        scan.slow,
        scan.chain_breaks,
        (scan.head_sha, scan.inode, scan.mtime_ns, scan.ctime_ns),
    )


def _scan_from_state(t: tuple[Any, ...]) -> ShardScan:
    scan = ShardScan(t[0], t[1], t[2], t[3])
    for column, raw in zip(
        (scan.offsets, scan.lengths, scan.lines, scan.lamports), t[4:8], strict=True
    ):
        column.frombytes(raw)
    scan.hashes = t[8]
    scan.flags = bytearray(t[9])
    scan.problems = [LineProblem(*p) for p in t[10]]
    scan.torn_tail = t[11]
    scan.slow = t[12]
    scan.chain_breaks = t[13]
    scan.head_sha, scan.inode, scan.mtime_ns, scan.ctime_ns = t[14]
    n = len(scan.hashes)
    if not all(
        len(c) == n for c in (scan.offsets, scan.lengths, scan.lamports, scan.flags)
    ):
        raise ValueError("column lengths differ")
    return scan


def _prints(scans: list[ShardScan]) -> list[ShardPrint]:
    return [s.shard_print() for s in scans]


# ---------------------------------------------------------------------- save / load


def save(engine: Engine, path: Path) -> None:
    """Write the engine's state atomically; failures only cost the next open time."""
    if engine.root is None:
        return
    state = {
        "scans": [_scan_state(s) for s in engine.scans],
        "projection": engine.projection.to_state(),
    }
    write_cache_file(path, cache_header(engine.root), marshal.dumps(state))


def load(root: Path, path: Path) -> tuple[list[ShardScan], Projection] | None:
    """Read a cache and check it; ``None`` for anything not fully trustworthy."""
    read = read_cache_file(root, path)
    if read is None:
        return None
    _, payload = read
    try:
        state = marshal.loads(payload)
        scans = [_scan_from_state(t) for t in state["scans"]]
        projection = Projection.from_state(state["projection"], lambda: _applied(scans))
    except (ValueError, TypeError, KeyError, EOFError, IndexError):
        return None
    finally:
        del payload
    gated = sum(
        s.flags.count(GATES_BYTE) + s.flags.count(GATES_BYTE | CANONICAL) for s in scans
    )
    if projection.applied_count > gated:
        return None
    return scans, projection


GATES_BYTE: Final = HASH_OK | DECISION_ID_OK


def _applied(scans: list[ShardScan]) -> set[str]:
    """The hashes of every event that passed both gates."""
    out: set[str] = set()
    for s in scans:
        if s.flags.count(GATES_BYTE | CANONICAL) == len(s.hashes):
            out.update(s.hashes)
        else:
            out.update(h for h, f in zip(s.hashes, s.flags, strict=True) if f & 3 == 3)
    return out


# ---------------------------------------------------------------------- open


def open_cached(
    root: Path, base: Path | None = None, *, background: bool = False
) -> Engine:
    """Open a store through its cache (see :func:`_open_cached`), then settle the heap.

    The cyclic GC stays off until the heap is settled: the first collection after a
    big open would walk every container it made (measured at 1M: two passes of
    1.3-1.5 s each, before and while the first answer was printed).
    """
    with GcPaused():
        engine = _open_cached(root, base, background=background)
        settle_heap(engine.projection.applied_count)
    return engine


def _open_cached(
    root: Path, base: Path | None = None, *, background: bool = False
) -> Engine:
    """Open a store through its cache: warm when it can be trusted, cold otherwise.

    ``background`` writes a new cache from a forked child (a command-line process
    answers without waiting for it); elsewhere the cache is written before returning.
    """
    path = engine_cache_path(root, base)
    log_dir = root / "log"
    listing = list_log(log_dir)
    cached = load(root, path)
    if cached is not None:
        scans, projection = cached
        now = prints_from_disk(log_dir, listing.names, base)
        change = compare_prints(_prints(scans), now, log_dir)
        if change == "same":
            return Engine(
                root,
                scans,
                projection,
                how="warm",
                cache_base=base,
                refused=listing.refused,
            )
        if change == "append":
            before = projection.applied_count
            extended = _extend(
                root, scans, projection, now, cache_base=base, refused=listing.refused
            )
            if extended is not None:
                if _worth_saving(before, extended.projection.applied_count):
                    _save(extended, path, background=background)
                return extended
    engine = open_cold(root, listing.names, cache_base=base, refused=listing.refused)
    _save(engine, path, background=background)
    return engine


def _save(engine: Engine, path: Path, *, background: bool) -> None:
    """Save now, or from a detached grandchild when asked and safe to fork."""
    if not background or not run_detached(lambda: save(engine, path)):
        save(engine, path)


def refresh(engine: Engine, base: Path | None = None) -> Engine:
    """The engine brought up to date with its store: itself, extended, or reopened.

    Appended lines are applied to ``engine``'s projection in place, so the engine
    passed in must not be used afterwards; use the one returned.
    """
    if engine.root is None:
        return engine
    log_dir = engine.root / "log"
    with GcPaused():
        listing = list_log(log_dir)
        now = prints_from_disk(log_dir, listing.names, base)
        change = compare_prints(_prints(engine.scans), now, log_dir)
        if change == "same":
            return engine.with_refused(listing.refused)
        if change == "append":
            before = engine.projection.applied_count
            extended = _extend(
                engine.root,
                engine.scans,
                engine.projection,
                now,
                cache_base=base,
                refused=listing.refused,
            )
            if extended is not None:
                if _worth_saving(before, extended.projection.applied_count):
                    save(extended, engine_cache_path(engine.root, base))
                return extended
    return open_cached(engine.root, base)


def _worth_saving(before: int, after: int) -> bool:
    """Rewrite the cache after an append only when replaying the tail got costly.

    A few appended lines are cheaper to apply again on the next open than a
    rewrite of the whole cache (hundreds of megabytes at a million decisions).
    """
    return after - before >= max(1000, before // 100)


def _extend(
    root: Path,
    scans: list[ShardScan],
    projection: Projection,
    now: list[ShardPrint],
    *,
    cache_base: Path | None,
    refused: Sequence[LineProblem],
) -> Engine | None:
    """Apply appended lines when they all sort after the last applied event."""
    log_dir = root / "log"
    by_name = {s.name: s for s in scans}
    merged: list[ShardScan] = []
    start: list[int] = []
    for p in now:
        old = by_name.pop(p.name, None)
        offset = 0 if old is None else old.size
        if old is not None and old.torn_tail:
            return None  # a torn tail may have been completed: read it whole again
        fresh = scan_appended(
            log_dir, p, offset, old.hashes[-1] if old is not None and len(old) else None
        )
        if fresh is None:
            return None  # replaced since it was fingerprinted
        if old is None:
            _stamp(fresh, p)
            merged.append(fresh)
            start.append(0)
            continue
        start.append(len(old))
        merged.append(_stamp(_joined(old, fresh, p.tail), p))
    if by_name:
        return None
    last = _last_applied(scans)
    keys = canonical_order(merged, start)
    if keys and last is not None and keys[0][:2] <= last:
        return None
    source = LineSource(log_dir, merged)
    apply_in_order(projection, merged, source, keys, after=last)
    source.release()
    return Engine(
        root, merged, projection, how="append", cache_base=cache_base, refused=refused
    )


def _stamp(scan: ShardScan, p: ShardPrint) -> ShardScan:
    """Give a scan the fingerprint its bytes were read under."""
    scan.tail_sha, scan.head_sha = p.tail, p.head
    scan.inode, scan.mtime_ns, scan.ctime_ns = p.inode, p.mtime_ns, p.ctime_ns
    return scan


def _joined(old: ShardScan, fresh: ShardScan, tail_sha: str) -> ShardScan:
    scan = ShardScan(
        old.name,
        old.size + fresh.size,
        old.newline_count + fresh.newline_count,
        tail_sha,
    )
    for mine, a, b in (
        (scan.offsets, old.offsets, fresh.offsets),
        (scan.lengths, old.lengths, fresh.lengths),
        (scan.lamports, old.lamports, fresh.lamports),
    ):
        mine.extend(a)
        mine.extend(b)
    scan.lines.extend(old.lines)
    scan.lines.extend(array("q", (n + old.newline_count for n in fresh.lines)))
    scan.hashes = old.hashes + fresh.hashes
    scan.flags = old.flags + fresh.flags
    scan.problems = old.problems + [
        LineProblem(p.shard, p.line + old.newline_count, p.reason, p.hash)
        for p in fresh.problems
    ]
    scan.torn_tail = fresh.torn_tail
    scan.chain_breaks = old.chain_breaks + [i + len(old) for i in fresh.chain_breaks]
    scan.slow = dict(old.slow)
    scan.slow.update({i + len(old): obj for i, obj in fresh.slow.items()})
    return scan


def _last_applied(scans: list[ShardScan]) -> tuple[int, str] | None:
    best: tuple[int, str] | None = None
    for s in scans:
        for lam, h, f in zip(s.lamports, s.hashes, s.flags, strict=True):
            if f & 1 and (best is None or (lam, h) > best):
                best = (lam, h)
    return best
