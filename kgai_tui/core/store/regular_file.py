"""Open only regular files, never follow a link, never read past the size at open.

Shards and cache files come from places another person or program can write: a
teammate's store, a remote, a shared cache directory. A FIFO there would block the
first ``open`` or ``read`` forever, ``/dev/zero`` would fill memory, a link could point
anywhere and a link loop fails every ``stat``. So every read of a shard or a cache
file goes through :func:`open_regular`: ``O_NOFOLLOW | O_NONBLOCK`` (a final link is
refused and a FIFO opens without waiting), then ``fstat`` on the descriptor must say
regular file, and every later read stops at the size ``fstat`` gave.
"""

from __future__ import annotations

import errno
import mmap
import os
import shutil
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

__all__ = [
    "NotRegularError",
    "RegularFile",
    "identity",
    "kind_of",
    "open_regular",
    "read_regular",
    "replace_cache_file",
]

_FLAGS: Final = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK: Final = 1 << 24


def identity(st: os.stat_result) -> list[int]:
    """A file's identity as a seal records it: inode, size, modification and
    change times (ns). Any write changes one of them; the change time cannot be
    set back."""
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


class NotRegularError(OSError):
    """The path is not a regular file (a link, FIFO, socket, device or directory)."""


def kind_of(mode: int) -> str:
    """Name a file type for a person: ``"a FIFO"``, ``"a symbolic link"``, ..."""
    for test, name in (
        (stat.S_ISREG, "a regular file"),
        (stat.S_ISLNK, "a symbolic link"),
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
    ):
        if test(mode):
            return name
    return "a file of an unknown type"


class RegularFile:
    """An open regular file and its ``fstat`` at open; reads stop at that size."""

    __slots__ = ("fd", "stat")

    def __init__(self, fd: int, st: os.stat_result) -> None:
        """Adopt a descriptor already checked to be a regular file."""
        self.fd = fd
        self.stat = st

    @property
    def size(self) -> int:
        """The size at open: no read goes past it, however the file grows."""
        return self.stat.st_size

    def read(self, offset: int = 0, length: int | None = None) -> bytes:
        """Up to ``length`` bytes from ``offset``, never past the size at open.

        Short only when the file shrank since it was opened.
        """
        end = self.size if length is None else min(self.size, offset + length)
        parts: list[bytes] = []
        while offset < end:
            chunk = os.pread(self.fd, min(end - offset, _CHUNK), offset)
            if not chunk:
                break
            parts.append(chunk)
            offset += len(chunk)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def map(self, *, populate: bool = True) -> mmap.mmap | bytes:
        """The file's bytes up to the size at open, mapped read-only (page cache).

        ``populate`` faults every page in at once: right for a pass over the whole
        file, wasteful for a reader of a few lines.
        """
        if self.size == 0:
            return b""
        flags = mmap.MAP_SHARED | (getattr(mmap, "MAP_POPULATE", 0) if populate else 0)
        return mmap.mmap(self.fd, self.size, flags=flags, prot=mmap.PROT_READ)

    def close(self) -> None:
        """Close the descriptor (a mapping made from it stays valid)."""
        os.close(self.fd)


@contextmanager
def open_regular(path: Path | str, *, follow: bool = False) -> Iterator[RegularFile]:
    """Open ``path`` for reading if, and only if, it is a regular file.

    ``follow``: a symbolic link is followed to the file it names (a person's
    settings file may be one); the file it names must be regular all the same.

    Raises:
        NotRegularError: it is a symbolic link (``O_NOFOLLOW``), a FIFO, a socket,
            a device or a directory. Nothing is read from it.
        OSError: it cannot be opened (missing, no permission).
    """
    try:
        fd = os.open(path, _FLAGS & ~os.O_NOFOLLOW if follow else _FLAGS)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENXIO):  # a final link; a socket
            raise NotRegularError(exc.errno, _lkind(path), str(path)) from None
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularError(0, kind_of(st.st_mode), str(path))
        f = RegularFile(fd, st)
    except BaseException:
        os.close(fd)
        raise
    try:
        yield f
    finally:
        f.close()


def replace_cache_file(tmp: Path | str, path: Path | str) -> None:
    """``os.replace(tmp, path)`` for a file of the user cache: a directory found
    at ``path`` is deleted first (a rename cannot replace one). Whatever is there
    is ours or was planted; left, it failed every later write of that file, and
    every read went without it (a read model: the whole store replayed each time).
    """
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    os.replace(tmp, path)


def _lkind(path: Path | str) -> str:
    try:
        return kind_of(os.lstat(path).st_mode)
    except OSError:
        return "a file of an unknown type"


def read_regular(
    path: Path | str, limit: int | None = None, *, follow: bool = False
) -> bytes:
    """The whole content of a regular file, bounded by its size at open
    (``follow``: as :func:`open_regular`).

    Raises:
        NotRegularError: not a regular file, or larger than ``limit`` bytes.
        OSError: it cannot be read.
    """
    with open_regular(path, follow=follow) as f:
        if limit is not None and f.size > limit:
            raise NotRegularError(0, f"larger than {limit} bytes", str(path))
        return f.read()


#: Bytes of a mapped cache file read between two :func:`release_view` calls.
RELEASE_STEP: Final = 16 * 1024 * 1024


def release_view(view: memoryview | bytes) -> None:
    """:func:`release_pages` of the map ``view`` is a part of (nothing for bytes).

    A cache file is checked and decoded a step at a time: its map would otherwise
    hold all of it in this process's RSS beside what is decoded from it (the 1M
    time index: 206 MB of 492 MB at its peak)."""
    if isinstance(view, memoryview) and isinstance(view.obj, mmap.mmap):
        release_pages([view.obj])


def release_pages(maps: Iterable[mmap.mmap | bytes]) -> None:
    """Let go of the mapped pages touched so far; they stay in the page cache, and
    a later read faults them back in.

    A pass over the whole log otherwise keeps every page it touched in this
    process's RSS: 0.8 GB of a 1M store's first open, beside the projection.
    """
    for data in maps:
        if isinstance(data, mmap.mmap):
            data.madvise(mmap.MADV_DONTNEED)
