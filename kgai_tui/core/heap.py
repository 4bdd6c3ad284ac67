"""The cyclic garbage collector and the C heap around million-object structures.

Building an engine allocates millions of small containers that never form cycles;
collecting while they are built, and walking them in every later full collection,
only costs time (a full pass over a million-decision engine takes about a second).

The builds also free hundreds of megabytes of temporaries (decoded log lines, token
lists, the recall index's vocabulary dict); glibc keeps those pages in the process
unless asked to give them back, so they would count towards the session's RSS.
"""

from __future__ import annotations

import ctypes
import functools
import gc
import sys
from collections.abc import Callable
from typing import Final

#: Past this many events, a process keeps its engine for good: freeze the heap.
BIG_ENGINE: Final = 100_000


def settle_heap(events: int) -> None:
    """After building a big structure, keep the cyclic GC from walking it again.

    A full collection over a million-decision engine takes about a second and would
    land in the middle of some later read; ``gc.freeze`` moves what exists now out
    of the collector's reach. The temporaries the build freed go back to the OS
    (:func:`trim_heap`). Small engines (tests, small stores) are left alone.
    """
    if events >= BIG_ENGINE:
        gc.freeze()
        trim_heap()


def trim_heap() -> bool:
    """Return the C heap's free pages to the OS (glibc ``malloc_trim``).

    glibc returns freed memory only from the top of its heap; a build that frees
    hundreds of megabytes in the middle keeps them in the RSS (measured at 1M
    decisions: ~290 MB after the recall index build, ~170 MB after the first time
    index build). ``malloc_trim(0)`` releases every free page; it takes
    milliseconds and later reads fault no more pages than before (measured).

    Returns:
        Whether a trim ran (``False`` off glibc).
    """
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or ``None`` (another OS or C library)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        fn = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_size_t]
    fn.restype = ctypes.c_int
    trim: Callable[[int], int] = fn
    return trim


class GcPaused:
    """Pause the cyclic GC while building millions of acyclic objects.

    A replay allocates only containers that never form cycles; collecting them over
    and over costs a fifth of an open. Collection resumes afterwards.
    """

    def __enter__(self) -> None:
        self._was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        # Nothing is frozen here: what was built may be dropped soon (an as-of
        # view per slider step), and a frozen object in a reference cycle (the
        # worker that built it, the messages that carried it) is never collected
        # (measured: every view of a slider session kept, ~13 MB a step at 1M).
        # Only long-lived builds are frozen, by settle_heap.
        if self._was:
            gc.enable()
