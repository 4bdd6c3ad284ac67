"""The store's writer lock: ``flock(LOCK_EX)`` on ``<store>/.kg.lock`` (spec 1.5).

It is the same file the reference engine locks, so ``kg`` and kgai-tui serialise their
writes. The wait is bounded: a writer that hangs while holding the lock gives the
others a clear error instead of a hang of their own.
"""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from kgai_tui.core.errors import LockTimeoutError, WriteError, write_error

LOCK_NAME: Final = ".kg.lock"
DEFAULT_TIMEOUT: Final = 10.0
TIMEOUT_ENV: Final = "KGAI_TUI_LOCK_TIMEOUT"


def lock_timeout(explicit: float | None = None) -> float:
    """Return the lock wait in seconds: argument, ``$KGAI_TUI_LOCK_TIMEOUT``, or 10."""
    if explicit is not None:
        return max(0.0, explicit)
    raw = os.environ.get(TIMEOUT_ENV, "")
    try:
        return max(0.0, float(raw)) if raw else DEFAULT_TIMEOUT
    except ValueError:
        return DEFAULT_TIMEOUT


@contextmanager
def store_lock(root: Path, timeout: float | None = None) -> Iterator[None]:
    """Hold the exclusive writer lock of the store at ``root`` for the ``with`` body.

    The lock file is created (mode 0644, empty) when absent.

    Raises:
        LockTimeoutError: another process kept the lock for the whole wait.
        WriteError: the lock file cannot be opened (read-only store, no permission).
    """
    path = root / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
    except OSError as exc:
        raise write_error(exc, f"the store at {root}") from exc
    owned = True  # whether this frame closes ``fd`` (and so releases the lock)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            wait = lock_timeout(timeout)
            owned = False  # during the wait, the wait decides who closes ``fd``
            outcome = _wait_for_lock(fd, wait)
            owned = outcome == "granted"
            if outcome == "timeout":
                raise LockTimeoutError(
                    f"another writer has held {path} for {wait:g} s; try again, or "
                    f"find it with `fuser {path}` (wait: ${TIMEOUT_ENV})"
                ) from None
            if outcome == "failed":
                raise WriteError(f"cannot lock {path}; nothing was written") from None
        except OSError as exc:
            raise write_error(exc, f"the store at {root}") from exc
        yield
    finally:
        # Closing the descriptor releases the flock (also when a signal unwinds the
        # body or the wait); the file itself stays.
        if owned:
            os.close(fd)


def _wait_for_lock(fd: int, wait: float) -> str:
    """Block in ``flock(LOCK_EX)`` on a helper thread for at most ``wait`` seconds.

    A blocking ``flock`` queues this process behind the holder, so it gets the lock
    as soon as it is released. Polling with ``LOCK_NB`` instead lets a writer that
    releases and re-locks in a loop starve everyone else. When the wait runs out the
    helper thread keeps ``fd`` and closes it, releasing the lock at once, if it is
    ever granted. An exception during the wait (a signal) leaves the same way: the
    lock is never held on behalf of a caller that has gone.

    Returns:
        ``"granted"`` when the caller now holds the lock on ``fd``; ``"failed"`` when
        ``flock`` failed (``fd`` is closed); ``"timeout"`` when the wait ran out
        (``fd`` then belongs to the helper thread and must not be touched).
    """
    granted = threading.Event()
    guard = threading.Lock()
    state = {"abandoned": False, "failed": False}

    def block() -> None:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
        except OSError:
            state["failed"] = True
        with guard:
            if state["abandoned"]:
                os.close(fd)
                return
            granted.set()

    threading.Thread(target=block, name="kgai-store-lock", daemon=True).start()
    try:
        granted.wait(wait)
    except BaseException:
        # Interrupted while waiting (a signal, Ctrl-C): the helper must not keep a
        # lock it obtains later, and a lock already granted is let go at once.
        with guard:
            if granted.is_set():
                os.close(fd)
            else:
                state["abandoned"] = True
        raise
    with guard:
        if granted.is_set():
            if state["failed"]:
                os.close(fd)
                return "failed"
            return "granted"
        state["abandoned"] = True
    return "timeout"
