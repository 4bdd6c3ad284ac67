"""The one fingerprint of a shard file, and what a change between two of them means.

Every cache of the log (the engine cache, the time index, the search index) and
every poll of a long-running reader (the explorer, the MCP server) decides whether
the log changed by comparing fingerprints, so they all use this one. It holds the
file's name, size, inode, change time and modification time (nanoseconds) and a
SHA-256 of its first and of its last 64 KiB.

What it catches without reading the whole file: any write (the kernel sets the
change time; it cannot be set back), any rename over the shard (a new inode), any
``touch`` or ``utime`` (the change time again) and any edit of the first or last
64 KiB, also on a file system with coarse timestamps. What it trusts: a shard that
only grew (same first 64 KiB and same last 64 KiB at its old size) was appended to,
so an edit in the middle made together with an append goes unseen until the next
rebuild. ``doctor`` never relies on it: it verifies every byte of every shard.
A change of metadata alone (``chmod``, a rename back and forth) costs a rebuild.
Within one process, the edges of a settled file are hashed once (see
:func:`prints_from_disk`).
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

from kgai_tui.core.store.regular_file import RegularFile, open_regular
from kgai_tui.core.store.shards import list_log

__all__ = [
    "EDGE_BYTES",
    "Change",
    "LogPrint",
    "ShardPrint",
    "compare_prints",
    "grew_from",
    "log_print",
    "print_of",
    "print_of_bytes",
    "prints_from_disk",
]

#: How many bytes at each end of a shard the fingerprint hashes.
EDGE_BYTES: Final = 64 * 1024

Change = Literal["same", "append", "rebuild"]


@dataclass(frozen=True, slots=True)
class ShardPrint:
    """The fingerprint of one shard file.

    Attributes:
        name: The file name in ``log/``.
        size: Its size in bytes.
        inode: Its inode number.
        mtime_ns: Its modification time, nanoseconds.
        ctime_ns: Its status change time, nanoseconds (set by every write).
        head: SHA-256 hex of its first (up to) 64 KiB.
        tail: SHA-256 hex of its last (up to) 64 KiB.
        lines: How many complete lines it had, when the reader counted them
            (the search index does); ``-1`` if unknown. Not compared.
    """

    name: str
    size: int
    inode: int = 0
    mtime_ns: int = 0
    ctime_ns: int = 0
    head: str = ""
    tail: str = ""
    lines: int = -1

    def key(self) -> tuple[str, int, int, int, int, str, str]:
        """Everything compared (all but ``lines``)."""
        return (
            self.name,
            self.size,
            self.inode,
            self.mtime_ns,
            self.ctime_ns,
            self.head,
            self.tail,
        )

    def same_file(self, other: ShardPrint) -> bool:
        """Whether two prints describe the same, unchanged file."""
        return self.key() == other.key()

    def to_list(self) -> list[str | int]:
        """JSON- and marshal-ready form (see :meth:`from_list`)."""
        return [*self.key(), self.lines]

    @classmethod
    def from_list(cls, row: Sequence[object]) -> ShardPrint:
        """Parse :meth:`to_list`, raising ``TypeError``/``ValueError`` on anything else."""
        if len(row) != 8:
            raise ValueError("a shard print has 8 fields")
        name, size, inode, mtime, ctime, head, tail, lines = row
        if not (
            isinstance(name, str) and isinstance(head, str) and isinstance(tail, str)
        ):
            raise TypeError("shard print")
        return cls(
            name,
            _int(size),
            _int(inode),
            _int(mtime),
            _int(ctime),
            head,
            tail,
            _int(lines),
        )


def _int(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError("shard print")
    return value


def _edges(data: bytes | memoryview, size: int) -> tuple[str, str]:
    head = hashlib.sha256(data[: min(size, EDGE_BYTES)]).hexdigest()
    tail = hashlib.sha256(data[max(0, size - EDGE_BYTES) : size]).hexdigest()
    return head, tail


def print_of_bytes(name: str, data: bytes, st: os.stat_result) -> ShardPrint:
    """The print of a file whose bytes were read whole after ``st`` was taken."""
    head, tail = _edges(data, len(data))
    return ShardPrint(
        name, len(data), st.st_ino, st.st_mtime_ns, st.st_ctime_ns, head, tail
    )


def print_of(name: str, f: RegularFile) -> ShardPrint:
    """The print of an open regular file, at its size at open."""
    size = f.size
    head = f.read(0, EDGE_BYTES)
    tail = head if size <= EDGE_BYTES else f.read(size - EDGE_BYTES, EDGE_BYTES)
    st = f.stat
    return ShardPrint(
        name,
        size,
        st.st_ino,
        st.st_mtime_ns,
        st.st_ctime_ns,
        hashlib.sha256(head).hexdigest(),
        hashlib.sha256(tail).hexdigest(),
    )


#: A change of a file sets its change time to the clock's time, in steps of at most
#: this much (FAT's 2 s is the coarsest known): a file unchanged for that long before
#: it is printed has a change time that any later change must move.
SETTLE_NS: Final = 3_000_000_000

#: Per shard path, the stat a settled print was taken at and its two hashes.
_SETTLED: dict[str, tuple[tuple[int, int, int, int], str, str]] = {}


def prints_from_disk(
    log_dir: Path, names: Sequence[str], base: Path | None = None
) -> list[ShardPrint]:
    """The print of every named shard as it is now; unreadable ones are left out.

    A process prints the log many times (a write session four times, the explorer
    and the MCP server on every poll); at 300 shards each print reads and hashes
    600 edges (~0.04-0.07 s). An edge is hashed again unless it was hashed from a
    file whose change time was already :data:`SETTLE_NS` old and whose size,
    inode, modification and change times are still the same: any write since
    would have moved the change time (it cannot be set back), so the same edges
    are there. Those prints are kept in this process and, for the next one, in the
    user cache directory (:mod:`kgai_tui.core.store.settled_prints`). A shard just
    appended to is always hashed again. ``base`` is the cache directory the
    caller's caches live in (``None``: the user's, see
    :func:`~kgai_tui.core.store.cache_file.cache_base`).
    """
    _seed(log_dir, base)
    out = []
    fresh = False
    for name in names:
        path = os.fsdecode(log_dir / name)
        before = time.time_ns()  # read before the stat: the print is no older
        known = _SETTLED.get(path)
        if known is not None:
            # One lstat, no open: a regular file with the same size, inode and
            # times is the same, unchanged file (a symlink or a new file is not).
            try:
                st = os.stat(path, follow_symlinks=False)
            except OSError:
                continue
            key = (st.st_size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
            if stat.S_ISREG(st.st_mode) and known[0] == key:
                out.append(ShardPrint(name, *key, known[1], known[2]))
                continue
        try:
            with open_regular(log_dir / name) as f:
                st = f.stat
                key = (f.size, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
                shard = print_of(name, f)
        except OSError:
            continue
        if before - st.st_ctime_ns >= SETTLE_NS:
            _SETTLED[path] = (key, shard.head, shard.tail)
            fresh = True
        else:
            _SETTLED.pop(path, None)
        out.append(shard)
    if fresh:
        _keep(log_dir, names, base)
    return out


#: The (log directory, cache directory) pairs whose kept settled prints this
#: process has read.
_SEEDED: set[tuple[str, str]] = set()


def _seed(log_dir: Path, base: Path | None) -> None:
    """Read the settled prints kept for this store, once per process."""
    from kgai_tui.core.store.settled_prints import load_settled

    where = (os.fsdecode(log_dir), "" if base is None else os.fsdecode(base))
    if where in _SEEDED:
        return
    _SEEDED.add(where)
    for name, size, ino, mtime, ctime, head, tail in load_settled(log_dir, base):
        if os.path.basename(name) != name or name in ("", ".", ".."):
            continue  # only a shard of this log/
        path = os.fsdecode(log_dir / name)
        _SETTLED.setdefault(path, ((size, ino, mtime, ctime), head, tail))


def _keep(log_dir: Path, names: Sequence[str], base: Path | None) -> None:
    """Keep this log's settled prints for the next process."""
    from kgai_tui.core.store.settled_prints import save_settled

    rows = []
    for name in names:
        known = _SETTLED.get(os.fsdecode(log_dir / name))
        if known is not None:
            rows.append((name, *known[0], known[1], known[2]))
    save_settled(log_dir, rows, base)


#: The whole log's fingerprint: every shard's, and the refused entries' reports.
LogPrint = tuple[tuple[ShardPrint, ...], tuple[str, ...]]


def log_print(log_dir: Path) -> LogPrint:
    """The fingerprint a long-running reader polls (the explorer, the MCP server).

    Equal fingerprints mean an engine opened earlier still answers for the log as it
    is: the same shards, unchanged, and the same entries refused. An unreadable
    ``log/`` gives the empty fingerprint.
    """
    try:
        listing = list_log(log_dir)
    except OSError:
        return (), ()
    prints = tuple(prints_from_disk(log_dir, listing.names))
    return prints, tuple(p.describe() for p in listing.refused)


def grew_from(old: ShardPrint, path: Path) -> bool:
    """Whether the file at ``path`` still holds ``old``'s bytes at ``old.size``.

    Checked on the first and last 64 KiB at that size: what an append leaves alone.
    """
    try:
        with open_regular(path) as f:
            if f.size < old.size:
                return False
            head = f.read(0, min(old.size, EDGE_BYTES))
            start = max(0, old.size - EDGE_BYTES)
            tail = head if start == 0 else f.read(start, old.size - start)
    except OSError:
        return False
    return (
        len(tail) == old.size - start
        and hashlib.sha256(head).hexdigest() == old.head
        and hashlib.sha256(tail).hexdigest() == old.tail
    )


def appended_bytes(log_dir: Path, now: ShardPrint, offset: int) -> bytes | None:
    """The bytes of the shard ``now`` describes, from ``offset`` to its size:
    what was appended since a reader held ``offset`` bytes of it. ``None`` when
    the file was replaced since it was fingerprinted (another inode, shorter) or
    does not read whole."""
    try:
        with open_regular(log_dir / now.name) as f:
            if f.stat.st_ino != now.inode or f.size < now.size:
                return None
            data = f.read(offset, now.size - offset)
    except OSError:
        return None
    return data if len(data) == now.size - offset else None


def compare_prints(
    old: Sequence[ShardPrint], new: Sequence[ShardPrint], log_dir: Path
) -> Change:
    """Classify how the log changed between two fingerprints.

    Args:
        old: The fingerprint a cache was built from.
        new: The current fingerprint.
        log_dir: The store's ``log/`` directory, to re-hash grown shards at their
            old size.

    Returns:
        ``"same"`` when every shard is unchanged in every field; ``"append"`` when
        every old shard is still there, grew, and still holds its old first and last
        64 KiB at its old size (new shards may have appeared); ``"rebuild"``
        otherwise (a shard changed without growing, shrank or went away).
    """
    if len(old) == len(new) and all(
        a.same_file(b) for a, b in zip(old, new, strict=True)
    ):
        return "same"
    current = {p.name: p for p in new}
    for prev in old:
        now = current.get(prev.name)
        if now is None or now.size < prev.size:
            return "rebuild"
        if now.size == prev.size:
            if not prev.same_file(now):
                return "rebuild"
        elif not grew_from(prev, log_dir / prev.name):
            return "rebuild"
    return "append"
