"""The warm-open cache: a replayed projection kept in the user cache directory.

One file per store, ``<user cache>/kgai-tui/engine/<sha256(resolved path)[:32]>.bin``,
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

import hashlib
import marshal
import os
import sys
import tempfile
import threading
from array import array
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import orjson
import platformdirs

from kgai_tui import __version__
from kgai_tui.core.engine.cold_open import open_cold
from kgai_tui.core.engine.engine import (
    Engine,
    LineSource,
    apply_in_order,
    canonical_order,
)
from kgai_tui.core.gosem.gotext import rfc3339_epoch
from kgai_tui.core.heap import GcPaused, settle_heap
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.store.logscan import (
    CANONICAL,
    DECISION_ID_OK,
    HASH_OK,
    ShardScan,
    scan_bytes,
)
from kgai_tui.core.store.regular_file import open_regular
from kgai_tui.core.store.shard_print import (
    ShardPrint,
    compare_prints,
    grew_from,
    prints_from_disk,
)
from kgai_tui.core.store.shards import LineProblem, list_log
from kgai_tui.core.timeindex.index import TimeIndex, TimeIndexBuilder

FORMAT: Final = 3  # 2: el_shapes packed as arrays; 3: the whole shard fingerprint
_MAGIC: Final = b"kgai-tui engine cache\n"
# The header line's bound: past it, the file is not a cache (a miss).
_HEADER_MAX: Final = 16 * 1024 * 1024


def engine_cache_path(root: Path, base: Path | None = None) -> Path:
    """Where the cache of the store at ``root`` lives (``KGAI_TUI_CACHE_DIR`` overrides)."""
    if base is None:
        env = os.environ.get("KGAI_TUI_CACHE_DIR")
        base = Path(env) if env else Path(platformdirs.user_cache_dir("kgai-tui"))
    key = hashlib.sha256(os.fsencode(root.resolve())).hexdigest()[:32]
    return base / "engine" / f"{key}.bin"


def _header(root: Path) -> dict[str, Any]:
    return {
        "format": FORMAT,
        "python": sys.version,
        "kgai_tui": __version__,
        "root": os.fsdecode(root.resolve()),
    }


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
    _write_file(path, _header(engine.root), marshal.dumps(state))


def _write_file(path: Path, header: dict[str, Any], payload: bytes) -> None:
    """Write header and payload to a temporary file, then rename it into place.

    The header gets the payload's size and SHA-256. A failure (a full disk, a
    read-only cache directory) only costs the next open its time.
    """
    header["digest"] = hashlib.sha256(payload).hexdigest()
    header["size"] = len(payload)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(_MAGIC + orjson.dumps(header) + b"\n")
                fh.write(payload)
            os.replace(tmp, path)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return


def _read_file(
    root: Path, path: Path
) -> tuple[dict[str, Any], bytes | memoryview] | None:
    """The header and payload of a cache file that passes every check, else ``None``.

    Checked: the magic line, the format, Python and kgai-tui versions and store path
    in the header, and the payload's size and SHA-256.
    """
    read = _read_cache(path)
    if read is None:
        return None
    header, payload = read
    expected = _header(root)
    if not isinstance(header, dict) or any(
        header.get(k) != v for k, v in expected.items()
    ):
        return None
    if header.get("size") != len(payload):
        return None
    if header.get("digest") != hashlib.sha256(payload).hexdigest():
        return None
    return header, payload


def _read_cache(path: Path) -> tuple[Any, bytes | memoryview] | None:
    """The header and the payload (mapped, not copied) of a cache file.

    ``None`` for anything but a regular file, and for a header line that does not
    end within :data:`_HEADER_MAX` bytes; nothing is read past the size at open.
    """
    try:
        with open_regular(path) as f:
            head = f.read(0, 64 * 1024)
            if not head.startswith(_MAGIC):
                return None
            end = head.find(b"\n", len(_MAGIC))
            if end < 0 and len(head) < f.size:
                head = f.read(0, _HEADER_MAX)
                end = head.find(b"\n", len(_MAGIC))
            if end < 0:
                return None
            header = orjson.loads(head[len(_MAGIC) : end])
            start = end + 1
            if f.size == start:
                return header, b""
            mapped = f.map()
    except (OSError, ValueError, orjson.JSONDecodeError):
        return None
    return header, memoryview(mapped)[start:]


def load(root: Path, path: Path) -> tuple[list[ShardScan], Projection] | None:
    """Read a cache and check it; ``None`` for anything not fully trustworthy."""
    read = _read_file(root, path)
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
        now = prints_from_disk(log_dir, listing.names)
        change = compare_prints(_prints(scans), now, log_dir)
        if change == "same":
            engine = Engine(root, scans, projection)
            engine.how = "warm"
            engine.cache_base = base
            engine.refused = listing.refused
            return engine
        if change == "append":
            before = projection.applied_count
            extended = _extend(root, scans, projection, now)
            if extended is not None:
                extended.cache_base = base
                extended.refused = listing.refused
                if _worth_saving(before, extended.projection.applied_count):
                    _save(extended, path, background=background)
                return extended
    engine = open_cold(root, listing.names)
    engine.cache_base = base
    engine.refused = listing.refused
    _save(engine, path, background=background)
    return engine


def _save(engine: Engine, path: Path, *, background: bool) -> None:
    """Save now, or from a detached grandchild when asked and safe to fork."""
    if not background or threading.active_count() > 1 or not hasattr(os, "fork"):
        save(engine, path)
        return
    try:
        child = os.fork()
    except OSError:
        save(engine, path)
        return
    if child:
        os.waitpid(child, 0)  # the child exits at once; the grandchild works on
        return
    try:  # pragma: no cover - runs in the forked process
        if os.fork() == 0:
            os.setsid()
            # Let go of the terminal and of any pipe the command's output goes to,
            # so a reader of that pipe sees its end when the command exits.
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            save(engine, path)
    finally:
        os._exit(0)


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
        now = prints_from_disk(log_dir, listing.names)
        change = compare_prints(_prints(engine.scans), now, log_dir)
        if change == "same":
            engine.refused = listing.refused
            return engine
        if change == "append":
            before = engine.projection.applied_count
            extended = _extend(engine.root, engine.scans, engine.projection, now)
            if extended is not None:
                extended.cache_base = base
                extended.refused = listing.refused
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
    root: Path, scans: list[ShardScan], projection: Projection, now: list[ShardPrint]
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
        try:
            with open_regular(log_dir / p.name) as f:
                if f.stat.st_ino != p.inode or f.size < p.size:
                    return None  # replaced since it was fingerprinted
                tail = f.read(offset, p.size - offset)
        except OSError:
            return None
        if len(tail) != p.size - offset:
            return None
        fresh = scan_bytes(
            p.name,
            tail,
            start=offset,
            prev_hash=old.hashes[-1] if old is not None and len(old) else None,
        )
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
    engine = Engine(root, merged, projection)
    engine.how = "append"
    return engine


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


# ---------------------------------------------------------------------- time index


def time_index_path(root: Path, base: Path | None = None) -> Path:
    """Where the time index of the store at ``root`` is kept, beside its engine cache."""
    return engine_cache_path(root, base).with_suffix(".time.bin")


def _scan_prints(scans: Sequence[ShardScan]) -> list[list[Any]]:
    """Per shard, its fingerprint and how many of its events the index holds."""
    return [[s.shard_print().to_list(), len(s)] for s in scans]


def load_or_build_time_index(engine: Engine, base: Path | None = None) -> TimeIndex:
    """The engine's time index: from its cache file when that describes the same log.

    A cached index built from a prefix of the current log (shards only appended to,
    every new event after the last indexed one) is extended with the new events;
    otherwise the index is built from the log in one streaming pass and saved.
    """
    path = None if engine.root is None else time_index_path(engine.root, base)
    with GcPaused():
        index = None if path is None else _load_time_index(engine, path)
        if index is None:
            index = build_engine_time_index(engine)
            if path is not None:
                _save_time_index(engine, index, path)
    return index


def build_engine_time_index(
    engine: Engine, index: TimeIndex | None = None, start: Sequence[int] | None = None
) -> TimeIndex:
    """Index (or extend an index with) the log's hash-verified events, in replay order."""
    # Mirroring the projection, the builder stores no second copy of what it holds.
    builder = TimeIndexBuilder(engine.projection) if index is None else None
    target = index
    keys = canonical_order(engine.scans, start)
    source = LineSource(engine.log_dir, engine.scans)
    last = ""
    try:
        for _, ev_hash, si, i in keys:
            if ev_hash == last:
                continue
            last = ev_hash
            obj = source.load(si, i)
            gated = bool(engine.scans[si].flags[i] & DECISION_ID_OK)
            epoch = rfc3339_epoch(obj["recorded_at"])
            if builder is not None:
                builder.add(obj, epoch, gated)
            else:
                assert target is not None
                target.add(obj, epoch, gated)
    finally:
        source.release()
    if builder is not None:
        return builder.finish(engine.projection)
    assert target is not None
    target.refresh()
    return target


def _save_time_index(engine: Engine, index: TimeIndex, path: Path) -> None:
    assert engine.root is not None
    header = _header(engine.root)
    header["shards"] = _scan_prints(engine.scans)
    _write_file(path, header, index.dumps())


def _load_time_index(engine: Engine, path: Path) -> TimeIndex | None:
    assert engine.root is not None
    read = _read_file(engine.root, path)
    if read is None:
        return None
    header, payload = read
    recorded = header.get("shards")
    now = _scan_prints(engine.scans)
    if recorded == now:
        start = None
    else:
        assert engine.log_dir is not None
        start = _appended_start(recorded, engine.scans, engine.log_dir)
        if start is None:
            return None
    try:
        index = TimeIndex.loads(payload, engine.projection)
    except (ValueError, TypeError, KeyError, EOFError, IndexError):
        return None
    if start is not None:
        keys = canonical_order(engine.scans, start)
        assert isinstance(recorded, list)
        if keys and index.events and _indexed_last(engine, recorded) >= keys[0][:2]:
            return None
        build_engine_time_index(engine, index, start)
        _save_time_index(engine, index, path)
    return index


def _appended_start(
    recorded: Any, scans: Sequence[ShardScan], log_dir: Path
) -> list[int] | None:
    """Per current shard, how many of its events the recorded index already holds.

    ``None`` unless every recorded shard is still there and still holds the same
    bytes at its recorded size (the log was only appended to).
    """
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
    if len(by_name) != len(recorded):
        return None
    start = []
    for scan in scans:
        found = by_name.pop(scan.name, None)
        if found is None:
            start.append(0)
            continue
        old, count = found
        if old.size > scan.size or count > len(scan):
            return None
        if not old.same_file(scan.shard_print()) and not (
            old.size < scan.size and grew_from(old, log_dir / scan.name)
        ):
            return None
        start.append(count)
    return None if by_name else start


def _indexed_last(engine: Engine, recorded: list[list[Any]]) -> tuple[int, str]:
    """The largest ``(lamport, hash)`` among the events the recorded index holds."""
    counts = {r[0][0]: r[1] for r in recorded}
    best = (-(2**63), "")
    for scan in engine.scans:
        n = counts.get(scan.name, 0)
        for i in range(n):
            if scan.flags[i] & HASH_OK and (scan.lamports[i], scan.hashes[i]) > best:
                best = (scan.lamports[i], scan.hashes[i])
    return best
