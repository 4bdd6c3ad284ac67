"""The cyclic garbage collector around million-object structures.

Building an engine allocates millions of small containers that never form cycles;
collecting while they are built, and walking them in every later full collection,
only costs time (a full pass over a million-decision engine takes about a second).
"""

from __future__ import annotations

import gc
from typing import Final

#: Past this many events, a process keeps its engine for good: freeze the heap.
BIG_ENGINE: Final = 100_000


_BIG = [False]  # set once this process holds a big engine


def settle_heap(events: int) -> None:
    """After building a big structure, keep the cyclic GC from walking it again.

    A full collection over a million-decision engine takes about a second and would
    land in the middle of some later read; ``gc.freeze`` moves what exists now out
    of the collector's reach. Small engines (tests, small stores) are left alone.
    """
    if events >= BIG_ENGINE:
        _BIG[0] = True
        gc.freeze()


class GcPaused:
    """Pause the cyclic GC while building millions of acyclic objects.

    A replay allocates only containers that never form cycles; collecting them over
    and over costs a fifth of an open. Collection resumes afterwards.
    """

    def __enter__(self) -> None:
        self._was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if _BIG[0]:
            # What was built while paused (an as-of view: ~100k containers) would
            # otherwise be walked by the next young collections (20 ms each, and
            # 0.5 s gen-1 passes, measured at 100k). It is acyclic (a test holds
            # as-of views to that), so refcounting still frees it when dropped.
            gc.freeze()
        if self._was:
            gc.enable()
