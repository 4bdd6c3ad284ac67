"""Cyclic garbage collection between the user's steps, not during them.

A slider step at 1M decisions makes a view of ~60k containers, and the cursor
keeps the last few for going back. CPython's collector runs a full pass whenever
enough of them survive, wherever that lands: measured in the explorer, one move
in three or four took 60-175 ms more, on the UI thread. The session turns the
automatic collector off and collects itself: the young generations every tick,
everything once the user has been still for a moment after a step (or after half
a minute of other use). Reference counting frees
what holds no cycle as before; only cycles wait, a second at most while moving.

What a load brings (the model's rows, the slider's history) lives until the next
load, and a full collection walked all of it every time: 200 ms on the UI thread
at 1M with the history read, every half minute. The first full collection after a
load walks everything once, then sets what survived aside (``gc.freeze``); later
ones walk only what came since. A new load puts it back (``gc.unfreeze``) so the
old store's cycles are collected with the next full pass.
"""

from __future__ import annotations

import gc
from time import monotonic
from typing import Final

__all__ = ["FULL_EVERY", "IDLE_SECONDS", "TICK_SECONDS", "IdleCollector"]

#: How often the collector looks (a young collection costs a few milliseconds).
TICK_SECONDS: Final = 1.0
#: How long nothing was asked for before a full collection runs.
IDLE_SECONDS: Final = 1.5
#: Ticks after which a full collection is due even without a slider step (what
#: a modal, a search or a view switch left in the old generation).
FULL_EVERY: Final = 30


class IdleCollector:
    """Owns the cyclic collector for one session (see the module)."""

    def __init__(self, *, idle_seconds: float = IDLE_SECONDS) -> None:
        """Nothing changes until :meth:`start`; a full collection waits for
        ``idle_seconds`` without a request."""
        self._idle = idle_seconds
        self._restore = False
        self._busy_at = monotonic()
        self._pending = False
        self._ticks = 0
        self._refreeze = False

    @property
    def running(self) -> bool:
        """Whether this collector switched the automatic one off."""
        return self._restore

    def start(self) -> None:
        """Switch the automatic collector off (left off if it already was: a
        process that runs without it, as a one-answer command does, keeps to that)."""
        if gc.isenabled():
            gc.disable()
            self._restore = True

    def busy(self) -> None:
        """The user asked for something: hold the full collection back."""
        self._busy_at = monotonic()
        self._pending = True

    def loaded(self) -> None:
        """A store or its history was loaded: the next full collection sets
        what survives it aside (see the module)."""
        self._refreeze = True
        self._pending = True

    def still_for(self) -> float:
        """Seconds since the user last asked for something (:meth:`busy`)."""
        return monotonic() - self._busy_at

    def tick(self) -> int:
        """Collect: the young generations, or everything once idle after work.

        Returns:
            The generation collected (-1: none, the session does not own it).
        """
        if not self._restore:
            return -1
        self._ticks += 1
        due = self._pending or self._ticks >= FULL_EVERY
        if due and monotonic() - self._busy_at >= self._idle:
            self._pending = False
            self._ticks = 0
            if self._refreeze:
                self._refreeze = False
                gc.unfreeze()  # what the last load kept may be garbage now
                gc.collect()
                gc.freeze()
            else:
                gc.collect()
            return 2
        gc.collect(1)
        return 1

    def stop(self) -> None:
        """Give the automatic collector back (the session ends)."""
        if self._restore:
            self._restore = False
            gc.unfreeze()
            gc.enable()
