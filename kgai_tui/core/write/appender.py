"""Durable appends to this install's shard, and repair of a torn last line (spec 2.10).

Every function here runs under the store lock. An event is one ``write()`` of one
complete line to a descriptor opened with ``O_APPEND``, then ``fsync``; success is
reported only after that. A batch of many lines pulled by a sync may instead go as
one ``write()`` of whole lines and one ``fsync`` (``batched``). A failed batch is cut
back to the size it started from, so a shard never keeps half an event or an
unacknowledged part of a batch. The batch is a critical section
(:func:`kgai_tui.core.interrupts.held`): SIGINT, SIGTERM and SIGHUP are checked
between writes, and one that arrives rolls the batch back too. A crash (SIGKILL,
power loss) in the middle of a write can leave the batch's first lines and a torn
last line; :func:`repair_torn_tail` moves that fragment aside before the next append.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Final

from kgai_tui.core.errors import LineError, WriteError, write_error
from kgai_tui.core.interrupts import held
from kgai_tui.core.store.config_file import fsync_dir, write_all
from kgai_tui.core.wire.codec import DecodedLine, decode_line

_CHUNK: Final = 1 << 20


def _last_newline_end(fd: int, size: int) -> int:
    """Return the offset just past the last ``\\n`` in the file (0 when none)."""
    end = size
    while end > 0:
        start = max(0, end - _CHUNK)
        chunk = os.pread(fd, end - start, start)
        at = chunk.rfind(b"\n")
        if at >= 0:
            return start + at + 1
        end = start
    return 0


def _complete_event(raw: bytes) -> DecodedLine | None:
    """Decode a line that only lacks its newline; ``None`` unless it verifies."""
    try:
        decoded = decode_line(raw.strip())
    except LineError:
        return None
    return decoded if decoded.hash_ok and decoded.decision_id_ok else None


def _side_file(shard: Path, offset: int) -> Path:
    """A name next to the shard that readers ignore (it does not end in ``.ndjson``)."""
    base = shard.with_name(f"{shard.name}.torn-{offset}")
    candidate, n = base, 1
    while candidate.exists():
        candidate = base.with_name(f"{base.name}.{n}")
        n += 1
    return candidate


def repair_torn_tail(shard: Path) -> str | None:
    """Make the shard end at a line boundary before anything is appended to it.

    A crash in the middle of a ``write()`` leaves a last line without its newline;
    appending to it would glue the next event onto the fragment and corrupt both.
    The fragment is moved to ``<shard>.torn-<offset>`` (kept, never deleted) and the
    shard is truncated back to its last newline. A fragment that is in fact a whole,
    verifying event (only the newline is missing) is kept in place and terminated,
    since the reference engine reads it as an event.

    Returns:
        A notice describing the repair, or ``None`` when the shard was sound.

    Raises:
        WriteError: the repair could not be written.
    """
    try:
        fd = os.open(shard, os.O_RDWR | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise write_error(exc, str(shard)) from exc
    try:
        size = os.fstat(fd).st_size
        if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
            return None
        keep = _last_newline_end(fd, size)
        fragment = os.pread(fd, size - keep, keep)
        if _complete_event(fragment) is not None:
            if os.pwrite(fd, b"\n", size) != 1:
                raise OSError(0, "short write while terminating the last line")
            os.fsync(fd)
            return f"{shard.name}: the last event lacked its newline; added it"
        side = _side_file(shard, keep)
        side_fd = os.open(
            side, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o644
        )
        try:
            write_all(side_fd, fragment)
            os.fsync(side_fd)
        finally:
            os.close(side_fd)
        fsync_dir(shard.parent)
        # Only once the fragment is safely elsewhere is it cut from the shard.
        os.ftruncate(fd, keep)
        os.fsync(fd)
        return (
            f"{shard.name}: moved a torn last line ({len(fragment)} bytes, left by an "
            f"interrupted write) to {side.name}"
        )
    except OSError as exc:
        raise write_error(exc, f"{shard} (repairing its torn last line)") from exc
    finally:
        os.close(fd)


def append_lines(shard: Path, lines: Sequence[bytes], *, batched: bool = False) -> None:
    """Append complete lines to the shard durably, all or nothing.

    Each line (without ``\\n``) is written with its newline in one ``write()`` on an
    ``O_APPEND`` descriptor and flushed with ``fsync``; with ``batched``, all the
    lines with their newlines go in one ``write()`` and one ``fsync`` (a sync's
    pulled segment: one ``fsync`` per line cost 0.5-1 ms each, most of a clone).
    A newly created shard also gets its directory entry flushed. On any failure,
    or a signal (SIGINT, SIGTERM, SIGHUP: held while the batch is written and
    checked before each write and once more before returning), the shard is cut
    back to its size before the batch (a shard this batch created is removed), so
    a stopped or failed write is never half done.

    Raises:
        WriteError: a line could not be written (read-only store, full disk, size
            limit); the shard is as it was.
        Interrupted: a signal arrived before the batch was acknowledged; the shard
            is as it was.
    """
    if not lines:
        return
    writes: Iterable[bytes] = (
        [b"\n".join([*lines, b""])]  # each line and its newline, one copy
        if batched
        else (line + b"\n" for line in lines)
    )
    with held() as check:
        _append_held(shard, writes, check)


def _append_held(
    shard: Path, writes: Iterable[bytes], check: Callable[[], None]
) -> None:
    """The body of :func:`append_lines`, inside its critical section."""
    check()  # a signal during the replay before: nothing has been touched yet
    created = not shard.exists()
    try:
        fd = os.open(
            shard, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644
        )
    except OSError as exc:
        raise write_error(exc, str(shard)) from exc
    try:
        start = os.fstat(fd).st_size
    except OSError as exc:
        os.close(fd)
        raise write_error(exc, str(shard)) from exc
    try:
        if created:
            fsync_dir(shard.parent)
        for data in writes:
            # One write() normally carries all of ``data`` (whole lines); write_all
            # only loops when the kernel returns a short count, and then either
            # finishes or raises, which rolls the batch back below.
            check()
            write_all(fd, data)
            os.fsync(fd)
        check()  # the last chance to stop: past it the batch is acknowledged
    except BaseException as exc:
        cut = _roll_back(fd, start, shard, created)
        if isinstance(exc, OSError):
            error = write_error(exc, str(shard))
            if cut is not None:
                raise WriteError(
                    f"{error}; the shard may end in a partial line ({cut}), which "
                    "the next record moves aside"
                ) from exc
            raise error from exc
        raise
    finally:
        os.close(fd)


def _roll_back(fd: int, start: int, shard: Path, created: bool) -> str | None:
    """Cut the shard back to ``start`` (remove it if this batch created it).

    Returns:
        ``None`` on success, else why the shard could not be restored.
    """
    try:
        os.ftruncate(fd, start)
        os.fsync(fd)
        if created:
            shard.unlink()
            fsync_dir(shard.parent)
    except OSError as exc:
        return exc.strerror or str(exc)
    return None
