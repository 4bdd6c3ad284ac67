"""Open a big store from its log on both cores: replay while the lines are verified.

Verifying a line (canonical form, content hash, decision id) costs about twice what
applying it does. So worker processes verify every shard while this process,
assuming they will pass, reads the keys straight from the bytes, orders the events
and replays them. When the workers report back, the assumption is checked line by
line: the same lines, offsets, lamports and hashes, every one canonical with both
gates passed. If anything differs (a bad hash, a non-canonical line, a torn tail),
the optimistic projection is thrown away and the events are replayed again from the
verified columns, so the result never depends on the shortcut.
"""

from __future__ import annotations

import mmap
import os
import threading
from array import array
from collections.abc import Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from multiprocessing import get_context
from pathlib import Path
from typing import Final

import orjson

from kgai_tui.core.engine import Engine, EventObserver
from kgai_tui.core.heap import GcPaused
from kgai_tui.core.logscan import (
    CANONICAL,
    DECISION_ID_OK,
    HASH_OK,
    ShardScan,
    scan_file,
)
from kgai_tui.core.projection import Projection

_ALL_OK: Final = HASH_OK | DECISION_ID_OK | CANONICAL
_LAMPORT: Final = b',"lamport":'
_OP: Final = b'","op":'
# Below this many bytes of log a second process costs more than it saves.
PARALLEL_MIN_BYTES: Final = 8 * 1024 * 1024


class _Keys:
    """What this process read from one shard's bytes, to compare with the workers'."""

    __slots__ = ("hashes", "lamports", "offsets")

    def __init__(self) -> None:
        self.offsets: array[int] = array("q")
        self.lamports: array[int] = array("q")
        self.hashes: list[str] = []


def open_cold(
    root: Path, names: Sequence[str], observers: Sequence[EventObserver] = ()
) -> Engine:
    """Scan and replay a store's shards; the result equals a sequential open."""
    log_dir = root / "log"
    paths = [log_dir / n for n in names]
    sizes = [_size(p) for p in paths]
    cores = len(os.sched_getaffinity(0))
    if cores < 2 or len(paths) < 2 or sum(sizes) < PARALLEL_MIN_BYTES:
        return Engine(root, [scan_file(p) for p in paths], observers=observers)
    # fork is cheap but unsafe once other threads run (the app, the MCP server).
    method = "fork" if threading.active_count() == 1 else "spawn"
    order = sorted(range(len(paths)), key=lambda i: -sizes[i])
    with ProcessPoolExecutor(min(cores, 2), mp_context=get_context(method)) as pool:
        futures: dict[int, Future[ShardScan]] = {
            i: pool.submit(scan_file, paths[i]) for i in order
        }
        with GcPaused():
            guess = _optimistic(paths, observers)
        scans = [futures[i].result() for i in range(len(paths))]
    if guess is not None:
        projection, keys = guess
        if _agrees(scans, keys):
            for scan, mine in zip(scans, keys, strict=True):
                scan.hashes = mine.hashes  # the projection's own str objects
            return Engine(root, scans, projection)
    return Engine(root, scans, observers=observers)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _map(path: Path) -> mmap.mmap | bytes:
    try:
        with open(path, "rb") as fh:
            if os.fstat(fh.fileno()).st_size == 0:
                return b""
            flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
            return mmap.mmap(fh.fileno(), 0, flags=flags, prot=mmap.PROT_READ)
    except (OSError, ValueError):
        return b""


def _optimistic(
    paths: Sequence[Path], observers: Sequence[EventObserver]
) -> tuple[Projection, list[_Keys]] | None:
    """Replay assuming every line is canonical and passes; ``None`` on any surprise."""
    maps = [_map(p) for p in paths]
    try:
        keys: list[_Keys] = []
        order: list[tuple[int, str, int, int]] = []
        for si, data in enumerate(maps):
            mine = _read_keys(data)
            if mine is None:
                return None
            keys.append(mine)
            lam, hashes = mine.lamports, mine.hashes
            order.extend((lam[i], hashes[i], si, i) for i in range(len(hashes)))
        order.sort()
        projection = Projection()
        last = ""
        for _, ev_hash, si, i in order:
            if ev_hash == last:
                continue
            last = ev_hash
            mine = keys[si]
            off = mine.offsets[i]
            data = maps[si]
            end = data.find(b"\n", off)
            obj = orjson.loads(data[off : end if end >= 0 else len(data)])
            if obj["hash"] != ev_hash:
                return None
            obj["hash"] = ev_hash
            projection.apply_obj(obj)
            for observe in observers:
                observe(obj, True)
        projection.flush_props()
        return projection, keys
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError):
        return None
    finally:
        for data in maps:
            if isinstance(data, mmap.mmap):
                data.close()


def _read_keys(data: mmap.mmap | bytes) -> _Keys | None:
    """Offsets, lamports and hashes of canonical-looking lines; ``None`` otherwise."""
    mine = _Keys()
    offsets, lamports, hashes = mine.offsets, mine.lamports, mine.hashes
    size = len(data)
    pos = 0
    while pos < size:
        end = data.find(b"\n", pos)
        if end < 0:
            return None  # a last line without newline: leave it to the exact path
        if end == pos:
            pos += 1
            continue
        if data[pos : pos + 9] != b'{"hash":"' or data[end - 1 : end] != b"}":
            return None
        stop = data.find(_OP, pos + 9, end)
        at = data.find(_LAMPORT, pos, end)
        if stop < 0 or at < 0:
            return None
        at += len(_LAMPORT)
        comma = data.find(b",", at, end)
        if comma < 0:
            return None
        offsets.append(pos)
        lamports.append(int(data[at:comma]))
        hashes.append(data[pos + 9 : stop].decode())
        pos = end + 1
    return mine


def _agrees(scans: Sequence[ShardScan], keys: Sequence[_Keys]) -> bool:
    """Whether the verified columns describe exactly what the optimistic replay read."""
    for scan, mine in zip(scans, keys, strict=True):
        n = len(scan)
        if (
            scan.problems
            or scan.slow
            or scan.flags.count(_ALL_OK) != n
            or scan.offsets != mine.offsets
            or scan.lamports != mine.lamports
            or scan.hashes != mine.hashes
        ):
            return False
    return True
