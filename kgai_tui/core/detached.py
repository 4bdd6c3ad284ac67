"""Work a command leaves to a detached grandchild once it has its answer.

A command-line read that had to replay the log answers first; writing what it built
(the engine cache, the read model) happens in a grandchild process, detached from
the terminal and from any pipe the answer goes to, so a reader of that pipe sees its
end when the command exits. Forking is safe only while this process runs no other
thread.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable

__all__ = ["run_detached"]


def run_detached(work: Callable[[], object]) -> bool:
    """Run ``work`` in a detached grandchild; ``False`` (nothing run) when this
    process must not fork: other threads run, or the platform has no ``fork``.

    The grandchild inherits every open descriptor, locks held through them
    included (an ``flock`` stays held until it exits).
    """
    if threading.active_count() > 1 or not hasattr(os, "fork"):
        return False
    try:
        child = os.fork()
    except OSError:
        return False
    if child:
        os.waitpid(child, 0)  # the child exits at once; the grandchild works on
        return True
    try:  # pragma: no cover - runs in the forked processes
        if os.fork() == 0:
            os.setsid()
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            work()
    finally:
        os._exit(0)
