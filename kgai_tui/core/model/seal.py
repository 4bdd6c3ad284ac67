"""The model's seal and lock: what it looked like when we last wrote it, and who writes.

SQLite keeps a transaction atomic through a crash, but nothing stops another program,
a disk error or a killed writer from leaving bytes we never wrote. So every writer,
holding the model's lock, records the file's identity afterwards (inode, size,
modification and change times, in ns), and its write-ahead log's, in
``<model>.seal``; a reader trusts the file only while both still match. Readers open
the model read-only, so only a writer (holding the lock) ever changes either file. A mismatch means "written by someone else, or
interrupted": the model is rebuilt from the log, never read.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import sqlite3
import sys
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path

import orjson

from kgai_tui.core.store.flock import flock_within
from kgai_tui.core.store.regular_file import identity, read_regular, replace_cache_file

__all__ = [
    "fold_log",
    "model_lock",
    "remove_stale_temporaries",
    "rewrite_sealed",
    "sealed",
    "show_lock_waits",
    "temporary_prefix",
    "write_seal",
]


def _identity(path: Path) -> list[int] | None:
    try:
        st = os.stat(path, follow_symlinks=False)
    except OSError:
        return None
    import stat

    if not stat.S_ISREG(st.st_mode):
        return None
    return identity(st)


def _identities(path: Path) -> list[list[int] | None]:
    """The model file's identity and its write-ahead log's (``None``: no log).

    The log's change time is left out: SQLite, run as root, ``fchown``s the log to
    the database's owner each time a connection opens it, so every read after a
    write that left a log (a reader still open when the writer closed) moved it,
    and the next read saw a broken seal and rebuilt the whole model. Its inode,
    size and modification time still change with every write to it.
    """
    wal = _identity(path.with_name(path.name + "-wal"))
    # An empty log holds nothing (a read-only reader may create one): as if none.
    return [_identity(path), None if wal is None or wal[1] == 0 else wal[:3]]


def temporary_prefix(path: Path) -> str:
    """The prefix of the temporary files a build of the model at ``path`` writes."""
    return f".tmp-{path.stem}-"


def remove_stale_temporaries(path: Path) -> None:
    """Delete what a killed build of this model left behind (call under its lock:
    no build of it is running then)."""
    prefix = temporary_prefix(path)
    with contextlib.suppress(OSError):
        for entry in os.scandir(path.parent):
            if entry.name.startswith(prefix):
                with contextlib.suppress(OSError):
                    os.unlink(entry.path)


def _seal_path(path: Path) -> Path:
    return path.with_name(path.name + ".seal")


def write_seal(path: Path) -> None:
    """Record the model file's identity as it is now (call under the lock)."""
    ident = _identities(path)
    seal = _seal_path(path)
    tmp = seal.with_name(seal.name + ".tmp")
    with open(tmp, "wb") as fh:
        fh.write(orjson.dumps(ident))
        fh.flush()
        os.fsync(fh.fileno())
    replace_cache_file(tmp, seal)


def sealed(path: Path) -> bool:
    """Whether the model file is exactly as its last writer left it."""
    ident = _identities(path)
    if ident[0] is None:
        return False
    try:  # a FIFO planted there must not hang the read: regular files only
        recorded = orjson.loads(read_regular(_seal_path(path), 4096))
    except (OSError, orjson.JSONDecodeError):
        return False
    return bool(recorded == ident)


class _Held:
    """The descriptor of a held model lock."""

    __slots__ = ("__weakref__", "fd")

    def __init__(self, fd: int) -> None:
        self.fd = fd


_HELD: weakref.WeakSet[_Held] = weakref.WeakSet()


def let_go_held_locks() -> None:
    """Unlock every model lock held in this process (through inherited descriptors).

    A detached build inherits the lock of the read that forked it. Once its model is
    sealed it lets the lock go, so what it does after (writing the moments) keeps no
    writer waiting; that work takes the lock again, without waiting, to write.
    """
    for held in list(_HELD):
        with contextlib.suppress(OSError):
            fcntl.flock(held.fd, fcntl.LOCK_UN)


def _close_in_worker(held: _Held) -> None:
    with contextlib.suppress(OSError):
        os.close(held.fd)


def _after_fork_in_child() -> None:
    # A multiprocessing worker forked while the lock is held (a parallel cold open's
    # verifiers) shares its open file description, so it would hold the ``flock``
    # too, and a SIGKILL of this process leaves such workers waiting for work for
    # ever: every later update of the model would wait for the lock for ever. So a
    # worker closes its copy before it runs (multiprocessing's after-fork hooks run
    # in its workers only). A bare ``os.fork`` (a detached build) keeps the lock.
    util = sys.modules.get("multiprocessing.util")
    if util is not None:
        for held in list(_HELD):
            util.register_after_fork(held, _close_in_worker)


os.register_at_fork(after_in_child=_after_fork_in_child)


#: What wraps a wait for another process's model lock (see :func:`show_lock_waits`).
_WAIT_DISPLAY: list[Callable[[], contextlib.AbstractContextManager[object]]] = []


def show_lock_waits(
    display: Callable[[], contextlib.AbstractContextManager[object]] | None,
) -> None:
    """Have ``display()`` wrap every wait for a model lock another process holds.

    The first read of a big store answers, then a detached process writes its model
    under the lock for as long as the replay took (20 s at 1M decisions); a write
    meanwhile waits for it. The CLI shows a line saying so on a terminal; the core
    prints nothing itself. ``None`` stops showing.
    """
    _WAIT_DISPLAY[:] = [] if display is None else [display]


@contextlib.contextmanager
def model_lock(
    path: Path, *, wait: bool = True, patience: float = 0.0
) -> Iterator[None]:
    """Hold the model's writer lock (``<model>.lock``, an exclusive ``flock``).

    ``wait=False``: raise :class:`BlockingIOError` when another holds it, at once
    or, with ``patience``, once it has been held that many seconds more (polled:
    a detached build waits out a reader's short check of the model, but never a
    rebuild it would hold its whole replay in memory for).

    In the cache directory, never in the store: readers of the store take no lock.
    Multiprocessing workers forked meanwhile do not keep it (see above).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    held = _Held(fd)
    _HELD.add(held)
    try:
        if not flock_within(fd, fcntl.LOCK_EX, 0.0 if wait else patience):
            if not wait:
                raise BlockingIOError(f"another process holds {path}'s lock")
            display = _WAIT_DISPLAY[0] if _WAIT_DISPLAY else contextlib.nullcontext
            with display():
                fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        _HELD.discard(held)
        os.close(fd)


def fold_log(db: sqlite3.Connection) -> None:
    """Fold the write-ahead log into the model file after a write (call under the
    lock, then :func:`write_seal`).

    A passive checkpoint copies what no reader still needs, but leaves the log
    file as long as it grew; readers, who never checkpoint, then look through
    it on every read (a 163 MB log made each read at 10M decisions ~60 ms
    slower). So the log is also truncated when no reader holds an older snapshot:
    waited for 50 ms at most, never longer (a long-lived reader, such as an open
    explorer, only leaves the log as it was).
    """
    db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchall()
    (before,) = db.execute("PRAGMA busy_timeout").fetchone()
    db.execute("PRAGMA busy_timeout = 50")
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
    except sqlite3.OperationalError:
        pass  # a reader or writer holds it: the passive checkpoint stands
    finally:
        db.execute(f"PRAGMA busy_timeout = {int(before)}")


def rewrite_sealed(
    path: Path, change: Callable[[sqlite3.Connection], Callable[[], object] | None]
) -> bool:
    """Change the sealed model at ``path`` in one transaction (the caller holds
    the model's lock); whether it was changed.

    ``change(db)`` reads what it must check on a write connection and returns
    the writes to make (``None``: nothing, the model moved on). The write-ahead
    log is folded after, and the seal written again as the connection closes:
    sealed when the lock was taken, every byte since is ours, and even a
    connection that only read may have touched the log. A model that does not
    read as one (damaged, another layout) is left for the next read to rebuild.
    """
    from kgai_tui.core.model.rows import UNREADABLE_MODEL
    from kgai_tui.core.model.schema import connect_model

    if not sealed(path):
        return False
    db = connect_model(path, write=True)
    try:
        writes = change(db)
        if writes is None:
            return False
        db.execute("BEGIN IMMEDIATE")
        try:
            writes()
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise
        fold_log(db)
        return True
    except UNREADABLE_MODEL:
        return False
    finally:
        db.close()
        write_seal(path)
