"""Taking an ``flock`` within a bounded wait, by polling.

A blocking ``flock`` cannot time out; the cache's locks are taken by work nobody
waits for (a detached build, a search index's writer), which should wait out a
short holder but give up on a long one rather than hold its memory through it.
"""

from __future__ import annotations

import fcntl
import time

__all__ = ["flock_within"]


def flock_within(fd: int, mode: int, timeout: float, step: float = 0.05) -> bool:
    """Take ``mode`` (``LOCK_EX`` or ``LOCK_SH``) on ``fd``, polling every ``step``
    seconds for at most ``timeout`` (``0``: one try); whether it was taken."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            fcntl.flock(fd, mode | fcntl.LOCK_NB)
            return True
        except BlockingIOError:
            if time.monotonic() >= deadline:
                return False
            time.sleep(step)
