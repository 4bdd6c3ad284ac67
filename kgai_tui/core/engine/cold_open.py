"""Open a big store from its log on both cores: replay while the lines are verified.

Verifying a line (canonical form, content hash, decision id) costs about what
parsing and applying it does. So worker processes verify every shard while this
process, assuming they will pass, reads the keys straight from the bytes (numpy),
orders the events and replays them. The replay leaves each decision's text fields,
install id, time, lamport and hash to columns the workers read anyway
(:mod:`decision_fields`). When the workers report back, the assumption is checked
line by line: the same lines, offsets, lamports and hashes, every one canonical
with both gates passed. If anything differs (a bad hash, a non-canonical line, a
torn tail), the optimistic projection is thrown away and the events are replayed
again from the verified columns, so the result never depends on the shortcut.
"""

from __future__ import annotations

import hashlib
import itertools
import mmap
import os
import re
import threading
from array import array
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import get_context
from pathlib import Path
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import orjson

from kgai_tui.core.engine.engine import Engine
from kgai_tui.core.engine.pool import (
    Scratch,
    die_with_parent,
    received,
    sent,
    start_resource_tracker,
)
from kgai_tui.core.heap import GcPaused, trim_heap
from kgai_tui.core.replay.order import RELEASE_EVERY
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.store.decision_fields import concat_fields
from kgai_tui.core.store.hash_column import HashColumn
from kgai_tui.core.store.logscan import (
    CANONICAL,
    DECISION_ID_OK,
    HASH_OK,
    ShardScan,
    scan_file,
)
from kgai_tui.core.store.regular_file import open_regular, release_pages
from kgai_tui.core.store.shards import LineProblem

_ALL_OK: Final = HASH_OK | DECISION_ID_OK | CANONICAL
_NL: Final = ord("\n")
_CLOSE: Final = ord("}")
# Every canonical line starts so, then 64 hex digits and '","op":'.
_HEAD_BYTES: Final = b'{"hash":"sha256:'
_HEAD: Final = np.frombuffer(_HEAD_BYTES + b'","op":', dtype=np.uint8)
_HEAD_AT: Final = np.concatenate(
    [np.arange(len(_HEAD_BYTES)), np.arange(80, 87)]
).astype(np.int64)
_HASH_LEN: Final = 71  # "sha256:" and 64 hex digits
_HASH_AT: Final = np.arange(9, 9 + _HASH_LEN, dtype=np.int64)
_MIN_LINE: Final = 90
_LAMPORT_RE: Final = re.compile(rb',"lamport":(-?[0-9]+),')
# Below this many bytes of log a second process costs more than it saves.
PARALLEL_MIN_BYTES: Final = 8 * 1024 * 1024


class _Keys:
    """What this process read from one shard's bytes, to compare with the workers'."""

    __slots__ = (
        "ends",
        "hashes",
        "lamports",
        "offsets",
        "prefix",
        "starts",
    )

    def __init__(self) -> None:
        self.offsets: array[int] = array("q")
        self.lamports: array[int] = array("q")
        self.hashes = HashColumn()
        self.starts: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.ends: npt.NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self.prefix: npt.NDArray[np.uint64] = np.zeros(0, dtype=np.uint64)


def open_cold(
    root: Path,
    names: Sequence[str],
    *,
    refused: Sequence[LineProblem] = (),
) -> Engine:
    """Scan and replay a store's shards; the result equals a sequential open.

    ``names`` are regular files (:func:`shards.list_log`); one replaced by anything
    else since is reported by its scan, never read.
    """
    log_dir = root / "log"
    paths = [log_dir / n for n in names]
    sizes = [_size(p) for p in paths]
    cores = len(os.sched_getaffinity(0))
    if cores < 2 or len(paths) < 2 or sum(sizes) < PARALLEL_MIN_BYTES:
        return Engine(root, [scan_file(p) for p in paths], refused=refused)
    # fork is cheap but unsafe once other threads run (the app, the MCP server).
    method = "fork" if threading.active_count() == 1 else "spawn"
    if method == "spawn":
        start_resource_tracker()
    order = sorted(range(len(paths)), key=lambda i: -sizes[i])
    # This process replays on one core; the others verify. More verifiers than
    # free cores would only slow the replay, which is the longer half.
    workers = min(cores - 1, len(paths))
    # No cyclic GC until the engine is whole: the first collection after the replay
    # would walk its millions of new containers (1.5 s at 1M); the caller freezes
    # them (heap.settle_heap).
    with (
        GcPaused(),
        Scratch() as scratch,
        ProcessPoolExecutor(
            workers, mp_context=get_context(method), initializer=die_with_parent
        ) as pool,
    ):
        # A worker first reads the keys of every other shard (by size), so the
        # replay, the longer half, starts sooner; then the verifying begins.
        helped = order[1::2]
        keys_job = pool.submit(
            _keys_into, [paths[i] for i in helped], scratch.path_for("keys")
        )
        futures: dict[int, Future[_Verified | str]] = {
            i: pool.submit(_verify_into, paths[i], scratch.path_for(str(i)))
            for i in order
        }
        guess = _optimistic(paths, {i: at for at, i in enumerate(helped)}, keys_job)
        verified = [received(futures[i].result()) for i in range(len(paths))]
        keys = None if guess is None else guess[1]
        scans = [
            _with_hashes(scan, digest, paths[i], None if keys is None else keys[i])
            for i, (scan, digest) in enumerate(verified)
        ]
        if (
            guess is not None
            and _agrees(scans, guess[1])
            and _fill(guess[0], scans, guess[1])
        ):
            projection = guess[0]
            # Every line passed, so the applied set is every hash (built if read).
            projection.applied_later(
                lambda: set(itertools.chain.from_iterable(s.hashes for s in scans))
            )
            return Engine(root, scans, projection, refused=refused)
    return Engine(root, scans, refused=refused)


# A clean shard's hashes, as the workers send them: a digest and a count.
_Digest = tuple[bytes, int]
_Verified = tuple[ShardScan, "_Digest | None"]


def _verify_into(path: Path, out: str | None) -> _Verified | str:
    """:func:`_verify`, sent through ``out`` (:func:`~kgai_tui.core.engine.pool.sent`)."""
    return sent(_verify(path), out)


_ReadKeys = list["_Keys | None"]


def _keys_into(paths: Sequence[Path], out: str | None) -> _ReadKeys | str:
    """:func:`_read_keys` of each shard, in a worker (the hashes travel as their
    raw bytes, 32 a line)."""
    got: _ReadKeys = []
    for path in paths:
        data = _map(path)
        try:
            got.append(_read_keys(data))
        finally:
            if isinstance(data, mmap.mmap):
                data.close()
    return sent(got, out)


def _hash_digest(hashes: Sequence[str]) -> _Digest:
    """SHA-256 of the hashes joined by newlines, and how many there are."""
    if isinstance(hashes, HashColumn):
        return hashes.lines_digest(), len(hashes)
    return hashlib.sha256("\n".join(hashes).encode()).digest(), len(hashes)


def _verify(path: Path) -> tuple[ShardScan, _Digest | None]:
    """:func:`scan_file` in a worker; a clean shard's hashes travel as one digest.

    This process read the same hashes from the bytes already, and a million
    strings cost more to pickle and unpickle than to compare through a digest.
    """
    scan = scan_file(path, fields=True)
    if scan.problems or scan.slow or scan.flags.count(_ALL_OK) != len(scan.hashes):
        return scan, None
    digest = _hash_digest(scan.hashes)
    scan.hashes = []
    return scan, digest


def _with_hashes(
    scan: ShardScan, digest: _Digest | None, path: Path, mine: _Keys | None
) -> ShardScan:
    """The worker's scan with its hashes: this process's own, when they match.

    Without them (the key reader gave up on some shard), a clean shard's hashes are
    read back at the verified offsets: every one is ``sha256:`` and 64 hex digits.
    """
    if digest is None:
        return scan  # the worker kept them
    if mine is not None and _hash_digest(mine.hashes) == digest:
        scan.hashes = mine.hashes  # the projection's own bytes
        return scan
    data = _map(path)
    try:
        hashes = [data[o + 9 : o + 9 + _HASH_LEN].decode() for o in scan.offsets]
    except UnicodeDecodeError:
        hashes = []
    finally:
        if isinstance(data, mmap.mmap):
            data.close()
    if _hash_digest(hashes) == digest:
        scan.hashes = hashes
        return scan
    return scan_file(path)  # the file changed under us: read it once more


def _size(path: Path) -> int:
    try:
        return os.stat(path, follow_symlinks=False).st_size
    except OSError:
        return 0


def _map(path: Path, *, populate: bool = True) -> mmap.mmap | bytes:
    """A regular shard's bytes at its size at open, mapped; ``b""`` for anything
    else (the verifier reports it, and the replay then takes the exact path)."""
    try:
        with open_regular(path) as f:
            return f.map(populate=populate)
    except (OSError, ValueError):
        return b""


def _optimistic(
    paths: Sequence[Path],
    helped: dict[int, int] | None = None,
    read_there: Future[_ReadKeys | str] | None = None,
) -> tuple[Projection, list[_Keys]] | None:
    """Replay assuming every line is canonical and passes; ``None`` on any surprise.

    ``helped`` maps a shard to its place in what ``read_there`` (a worker's
    :func:`_keys_into`) returns: those shards' keys are read there, the others here.
    """
    helped = helped or {}
    # Not populated: every shard's pages at once were the whole log resident
    # beside the replay (787 MB of the first read's peak at 1M); each is faulted in
    # as it is read, and let go after (release_pages).
    maps = [_map(p, populate=False) for p in paths]
    try:
        found: list[_Keys | None] = []
        for i, data in enumerate(maps):
            mine = None if i in helped else _read_keys(data)
            if mine is None and i not in helped:
                return None
            release_pages([data])  # the replay faults back what it reads
            found.append(mine)
        if helped:
            assert read_there is not None
            there: _ReadKeys = received(read_there.result())
            for i, at in helped.items():
                theirs = there[at]
                if theirs is None:
                    return None
                found[i] = theirs
        keys = [k for k in found if k is not None]
        order = _replay_order(keys)
        if order is None:
            return None
        projection = Projection()
        projection.defer_fields()  # the verifiers send them (see _fill)
        projection.apply_many(_parsed(order, maps))
        projection.flush_props()
        return projection, keys
    except (
        orjson.JSONDecodeError,
        KeyError,
        TypeError,
        ValueError,
        AttributeError,
        _Surprise,
        OSError,  # the worker could not read a shard
        BrokenProcessPool,
    ):
        return None
    finally:
        for data in maps:
            if isinstance(data, mmap.mmap):
                data.close()


class _Surprise(Exception):
    """A line read for the replay is not the line its keys described."""


def _parsed(
    order: Iterator[tuple[int, int, int, str, int]],
    maps: Sequence[mmap.mmap | bytes],
) -> Iterator[tuple[dict[str, Any], int]]:
    """Each event of the replay order, parsed, once, with its line (for the fill)."""
    loads = orjson.loads
    last = ""
    unreleased = 0
    for si, start, end, ev_hash, at in order:
        if ev_hash == last:  # the same event in two shards: adjacent, once
            continue
        last = ev_hash
        unreleased += end - start
        if unreleased > RELEASE_EVERY:  # else every page of the log stays resident
            release_pages(maps)
            unreleased = 0
        obj = loads(maps[si][start:end])
        if obj["hash"] != ev_hash:
            raise _Surprise
        yield obj, at


def _read_keys(data: mmap.mmap | bytes) -> _Keys | None:
    """Offsets, lamports and hashes of canonical-looking lines; ``None`` otherwise.

    Done with numpy over the whole shard: every non-blank line must start with
    ``{"hash":"sha256:`` and 64 more characters followed by ``","op":``, end with
    ``}`` and a newline, and hold one ``,"lamport":N,`` (a key, since quotes inside
    strings are escaped). The workers' verified columns are compared with these
    afterwards, so a line that only looks canonical cannot slip through.
    """
    mine = _Keys()
    if not len(data):
        return mine
    a = np.frombuffer(data, dtype=np.uint8)
    if a[-1] != _NL:
        return None  # a last line without newline: leave it to the exact path
    ends = np.flatnonzero(a == _NL)
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    filled = ends > starts
    starts, ends = starts[filled], ends[filled]
    if not len(starts):
        return mine
    if (ends - starts < _MIN_LINE).any() or (a[ends - 1] != _CLOSE).any():
        return None
    if (a[starts[:, None] + _HEAD_AT] != _HEAD).any():
        return None
    lamports = _lamports_in_place(a, starts)
    if lamports is None:  # the writer's fields vary in length: search each line
        found = _LAMPORT_RE.findall(data)
        if len(found) != len(starts):
            return None
        lamports = array("q", map(int, found))
    gathered = a[starts[:, None] + _HASH_AT]
    hashes = HashColumn.from_hex(gathered[:, len("sha256:") :])
    if hashes is None:
        return None  # not lowercase hex, or a zero hash: no canonical event
    # The first 16 hex digits as a number: it sorts as the strings do.
    mine.prefix = (
        np.ascontiguousarray(gathered[:, 7:15]).view(">u8").ravel().astype(np.uint64)
    )
    mine.offsets = array("q", starts.tobytes())
    mine.ends = ends
    mine.starts = starts
    mine.lamports = lamports
    mine.hashes = hashes
    return mine


_MARK: Final = np.frombuffer(b',"lamport":', dtype=np.uint8)
_DIGITS_AT: Final = np.arange(19, dtype=np.int64)


def _lamports_in_place(
    a: npt.NDArray[np.uint8], starts: npt.NDArray[np.int64]
) -> array[int] | None:
    """Every line's lamport, when it sits at the same offset in every line.

    One writer's lines share their op, actor and install id, so the key lies at one
    offset from each line's start; then the digits are read for all lines at once,
    instead of searching 30 MB per shard for the key. ``None`` when any line
    differs (a negative lamport, another offset): the caller searches. The
    verifiers' lamports are compared with these before they are trusted.
    """
    first = bytes(a[starts[0] : starts[0] + 512])
    k = first.find(_MARK.tobytes(), 80)
    if k < 0:
        return None
    at = starts + k
    last = len(a) - 1
    if (a[np.minimum(at[:, None] + np.arange(len(_MARK)), last)] != _MARK).any():
        return None
    digits = a[np.minimum(at[:, None] + len(_MARK) + _DIGITS_AT, last)].astype(np.int64)
    digits -= ord("0")
    is_digit = (digits >= 0) & (digits <= 9)
    length = np.argmin(is_digit, axis=1)  # the first non-digit
    rows = np.arange(len(starts))
    if (length == 0).any() or (digits[rows, length] != ord(",") - ord("0")).any():
        return None
    value = np.zeros(len(starts), dtype=np.int64)
    for j in range(int(length.max())):
        more = j < length
        value = np.where(more, value * 10 + digits[:, j], value)
    return array("q", value.tobytes())


def _replay_order(
    keys: Sequence[_Keys],
) -> Iterator[tuple[int, int, int, str, int]] | None:
    """``(shard, start, end, hash, line)`` of every line in (lamport, hash) order.

    ``line`` counts lines across the shards in shard order, as the verifiers'
    field columns are joined (:func:`decision_fields.concat_fields`).

    numpy sorts by lamport and the hash's first 16 hex digits; hashes that tie on
    those are compared whole (equal ones are the same event, kept adjacent), and any
    real tie sends the open down the exact path rather than guess. The tuples are
    made as the replay reads them, a chunk at a time: a million of them at once
    cost more than the sort. The shards' own offset and prefix arrays are let go
    once the order is known.
    """
    if not any(k.hashes for k in keys):
        return iter(())
    lam = np.concatenate([np.frombuffer(k.lamports, dtype=np.int64) for k in keys])
    prefix = np.concatenate([k.prefix for k in keys])
    shard = np.concatenate(
        [np.full(len(k.hashes), si, dtype=np.int64) for si, k in enumerate(keys)]
    )
    starts = np.concatenate([k.starts for k in keys])
    ends = np.concatenate([k.ends for k in keys])
    hashes = HashColumn.joined(k.hashes for k in keys)
    order = np.lexsort((prefix, lam))
    lam_o, prefix_o = lam[order], prefix[order]
    tie = (lam_o[1:] == lam_o[:-1]) & (prefix_o[1:] == prefix_o[:-1])
    for at in np.flatnonzero(tie).tolist():
        if hashes[order[at]] != hashes[order[at + 1]]:
            return None
    for k in keys:  # ordered: what the replay reads is in the arrays below
        k.starts = k.ends = _NO_OFFSETS
        k.prefix = _NO_PREFIX
    return _in_order(shard[order], starts[order], ends[order], order, hashes)


_NO_OFFSETS: Final = np.zeros(0, dtype=np.int64)
_NO_PREFIX: Final = np.zeros(0, dtype=np.uint64)
#: Lines made into tuples at a time: a million at once held ~140 MB of ints
#: through the whole replay.
_ORDER_CHUNK: Final = 1 << 16


def _in_order(
    shard: npt.NDArray[np.int64],
    starts: npt.NDArray[np.int64],
    ends: npt.NDArray[np.int64],
    order: npt.NDArray[np.int64],
    hashes: HashColumn,
) -> Iterator[tuple[int, int, int, str, int]]:
    """The tuples of :func:`_replay_order`, made a chunk at a time."""
    for a in range(0, len(order), _ORDER_CHUNK):
        b = a + _ORDER_CHUNK
        yield from zip(
            shard[a:b].tolist(),
            starts[a:b].tolist(),
            ends[a:b].tolist(),
            hashes.take(order[a:b]),  # one hex() of the chunk's hashes
            order[a:b].tolist(),
            strict=True,
        )


def _fill(
    projection: Projection, scans: Sequence[ShardScan], keys: Sequence[_Keys]
) -> bool:
    """Fill the replay's deferred decision fields from the verifiers' columns."""
    packs = [s.fields for s in scans]
    if any(p is None for p in packs):
        return False  # a shard was read again without them
    trim_heap()  # the replay's order and parsed lines, freed: not under the fill
    try:
        text, times = concat_fields(
            [p for p in packs if p is not None], [len(s) for s in scans]
        )
    except ValueError:
        return False
    for s in scans:
        s.fields = None  # the columns hold them now (the shards' parts go)
    packs.clear()
    trim_heap()  # the shards' columns, joined above
    lamports = np.concatenate(
        [np.frombuffer(k.lamports, dtype=np.int64) for k in keys]
        or [np.zeros(0, dtype=np.int64)]
    )
    projection.fill_deferred(
        text, times, lamports, HashColumn.joined(k.hashes for k in keys)
    )
    return True


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
