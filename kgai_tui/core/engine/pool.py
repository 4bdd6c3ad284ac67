"""Worker processes of a cold open: how they start, end and hand back results.

:mod:`~kgai_tui.core.engine.cold_open` verifies shards in a process pool while it
replays. These are the pool's plumbing: a worker dies with its opener, the
resource tracker starts under a host without a usable stderr, and results come
back through files in a scratch directory rather than the pool's pipe.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import shutil
from typing import TypeVar

from kgai_tui.core.scratch import make_scratch

__all__ = ["Scratch", "die_with_parent", "received", "sent", "start_resource_tracker"]


def die_with_parent() -> None:
    """A verifier ends when the opening process dies (Linux ``PR_SET_PDEATHSIG``).

    Killed mid-open (SIGKILL: no cleanup runs), the opener would otherwise leave its
    workers waiting for work for ever, holding what they inherited: the model's
    lock, a write's store lock, their scratch files.
    """
    try:
        import ctypes
        import signal

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if os.getppid() == 1:  # the parent died before the line above ran
            os._exit(1)
    except (OSError, AttributeError):
        pass


def start_resource_tracker() -> None:
    """Start multiprocessing's resource tracker with a real ``sys.stderr`` descriptor.

    A spawn pool's first lock starts the tracker, which passes
    ``sys.stderr.fileno()`` to its child. A host that replaced ``sys.stderr`` with
    an object of no descriptor (Textual's capture answers ``-1``) makes that spawn
    fail ("bad value(s) in fds_to_keep"), so the explorer could not open a big
    store without its caches. The tracker is started here with ``/dev/null`` in
    that place (its stderr stays the process's fd 2 either way); once running, later
    pools reuse it. The swap lasts only this call.
    """
    import sys
    from multiprocessing import resource_tracker

    try:
        usable = sys.stderr is not None and sys.stderr.fileno() >= 0
    except (AttributeError, OSError, ValueError):
        usable = False
    if usable:
        return
    with open(os.devnull, "w") as null:
        saved, sys.stderr = sys.stderr, null
        try:
            resource_tracker.ensure_running()
        finally:
            sys.stderr = saved


class Scratch:
    """A private directory (tmpfs when there is one) for the workers' results.

    A worker's result is megabytes; sent through the pool's pipe, it is read 64 KiB
    at a time by a thread of this process, which must take the GIL from the replay
    for each piece, and the worker stalls on a full pipe meanwhile (measured: a
    quarter of the verifier's time at 1M). Written to a file, it costs neither, and
    this process reads it once the replay is done. Without a directory, results
    come through the pipe.
    """

    def __init__(self) -> None:
        self._dir: str | None = None

    def __enter__(self) -> Scratch:
        with contextlib.suppress(OSError):
            self._dir = make_scratch("open")
        return self

    def path_for(self, name: str) -> str | None:
        """Where a worker writes the result called ``name`` (``None``: the pipe)."""
        return None if self._dir is None else os.path.join(self._dir, name)

    def __exit__(self, *exc: object) -> None:
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)


T = TypeVar("T")


def sent(result: T, out: str | None) -> T | str:
    """A worker's result, written to ``out`` (its path returned) when there is one;
    the result itself (through the pool's pipe) otherwise."""
    if out is None:
        return result
    try:
        with open(out, "wb") as fh:
            pickle.dump(result, fh, protocol=pickle.HIGHEST_PROTOCOL)
    except OSError:
        return result
    return out


def received(result: T | str) -> T:
    """What :func:`sent` sent (a result is never a str itself)."""
    if not isinstance(result, str):
        return result
    with open(result, "rb") as fh:
        got: T = pickle.load(fh)
    return got
