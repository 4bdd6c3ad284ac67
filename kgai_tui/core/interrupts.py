"""Signals during a write: the batch is whole or absent, whatever asks the process to stop.

SIGINT raises ``KeyboardInterrupt``, which the append turns into a roll-back; but
SIGTERM and SIGHUP end the process on the spot, leaving the lines appended so far.
Three pieces make every stop request take the same path:

* :func:`held` is the append's critical section. While any thread is inside one, a
  signal routed here (see below) is only recorded; the append asks ``check()``
  between lines and before it acknowledges the batch, rolls back and raises
  :class:`Interrupted`. A signal that arrives after the last check takes effect as
  soon as the section ends, when the batch is whole.
* :func:`raising` is for a write command on the main thread: outside critical
  sections the signals raise :class:`Interrupted` at once (as SIGINT raises
  ``KeyboardInterrupt``), so the command unwinds, releases the lock and exits with
  one line.
* :func:`install` is for a long-running process whose writes run on worker threads
  (the MCP server): outside critical sections a signal keeps its previous effect
  (the default ends the process), inside one it waits for the batch.

A signal whose disposition is "ignore" (``nohup`` sets SIGHUP so) stays ignored.
Only the main thread can set handlers: :func:`held` on another thread relies on
:func:`install` having routed the signals, and is a no-op otherwise. SIGKILL cannot be
caught; the torn-tail repair covers it (``docs/write-path.md``).
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, Final

__all__ = ["HELD_SIGNALS", "Interrupted", "held", "install", "raising"]

#: The requests to stop that a write holds off until its batch is settled.
HELD_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)

_Handler = Callable[[int, FrameType | None], Any] | int | None


class Interrupted(BaseException):
    """A signal stopped a write. A ``BaseException``, like ``KeyboardInterrupt``.

    It must not be caught by the ``except Exception`` of code it passes through;
    only the command or server that asked for it handles it.

    Attributes:
        signum: the signal.
        written: ``False`` when the batch was rolled back (or never begun),
            ``True`` when it was already whole on disk, ``None`` when unknown.
    """

    def __init__(self, signum: int, *, written: bool | None = None) -> None:
        """Remember the signal and what became of the batch."""
        self.signum = signum
        self.written = written
        super().__init__(self.describe())

    @property
    def name(self) -> str:
        """``SIGTERM`` and so on."""
        try:
            return signal.Signals(self.signum).name
        except ValueError:
            return f"signal {self.signum}"

    def describe(self) -> str:
        """One line for the user saying what happened to the batch."""
        if self.written is None:
            return f"interrupted by {self.name}"
        if self.written:
            return (
                f"interrupted by {self.name} after the batch was written whole; "
                "recording it again reports each decision as already recorded"
            )
        return f"interrupted by {self.name}; nothing was written"

    def settled(self, written: bool) -> Interrupted:
        """This interruption, saying what became of the batch when it did not yet."""
        if self.written is not None:
            return self
        return Interrupted(self.signum, written=written)


class _State:
    """Process-wide: signal handlers are process-wide too."""

    lock = threading.Lock()
    depth = 0  # critical sections open, across threads
    pending: list[int] = []  # noqa: RUF012 - one process-wide list on purpose
    previous: dict[int, _Handler] = {}  # noqa: RUF012 - the handler ours replaced
    raise_outside = False
    raised = False


def _on_signal(signum: int, frame: FrameType | None) -> None:
    """The handler: record inside a critical section, otherwise act now."""
    if _State.depth:
        _State.pending.append(signum)  # list.append is atomic: no lock here
        return
    _act(signum, frame, written=None)


def _act(signum: int, frame: FrameType | None, *, written: bool | None) -> None:
    """Do what the signal asks, outside any critical section."""
    if _State.raise_outside:
        if _State.raised:
            return  # the command is already unwinding from the first one
        _State.raised = True
        raise Interrupted(signum, written=written)
    previous = _State.previous.get(signum, signal.SIG_DFL)
    if callable(previous):
        previous(signum, frame)
        return
    if previous == signal.SIG_IGN:
        return
    # The default action: end the process by the signal itself, as it would have.
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _on_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


def _route(signums: Iterable[int]) -> dict[int, _Handler]:
    """Point the signals at :func:`_on_signal` (main thread); return what was replaced.

    A signal already routed here, ignored, or set outside Python is left alone.
    """
    replaced: dict[int, _Handler] = {}
    for signum in signums:
        current = signal.getsignal(signum)
        if current is _on_signal or current is None or current == signal.SIG_IGN:
            continue
        _State.previous[signum] = current
        signal.signal(signum, _on_signal)
        replaced[signum] = current
    return replaced


def _restore(replaced: dict[int, _Handler]) -> None:
    for signum, handler in replaced.items():
        signal.signal(signum, handler)


def install(signums: Iterable[int] = (signal.SIGTERM, signal.SIGHUP)) -> None:
    """Route ``signums`` here for the life of the process (main thread only).

    For a server whose writes run on worker threads: a signal keeps its previous
    effect, but waits while a batch is being appended. SIGINT is left out by default
    because event loops handle it themselves (they cancel; a worker thread's batch
    then completes).
    """
    if _on_main_thread():
        _route(signums)


@contextmanager
def raising() -> Iterator[None]:
    """For the body, SIGINT, SIGTERM and SIGHUP raise :class:`Interrupted` (main thread).

    Inside a critical section they are still held until the batch is settled. On
    another thread this does nothing.
    """
    if not _on_main_thread():
        yield
        return
    before = (_State.raise_outside, _State.raised)
    _State.raise_outside, _State.raised = True, False
    replaced = _route(HELD_SIGNALS)
    try:
        yield
    finally:
        _State.raise_outside, _State.raised = before
        _restore(replaced)


def _check() -> None:
    """Raise :class:`Interrupted` if a signal has arrived in the critical section."""
    if _State.pending:
        if _State.raise_outside:
            _State.raised = True  # this one reaches the command: later ones wait
        raise Interrupted(_State.pending[0], written=False)


@contextmanager
def held() -> Iterator[Callable[[], None]]:
    """A critical section: signals wait; the body polls them with the given ``check``.

    ``check()`` raises :class:`Interrupted` (``written=False``) once a signal has
    arrived; the body rolls back and lets it propagate. When the section ends with
    a signal still to act on (it arrived after the last check, so the batch is
    whole), it acts then: on the main thread it raises ``Interrupted(written=True)``
    under :func:`raising`, else it does what the signal did before; on another
    thread the signal is sent to the process again, for the main thread to act on.
    """
    main = _on_main_thread()
    replaced = _route(HELD_SIGNALS) if main else {}
    with _State.lock:
        if _State.depth == 0:
            _State.pending.clear()  # a leftover from a section that ended abruptly
        _State.depth += 1
    completed = False
    try:
        yield _check
        completed = True
    finally:
        with _State.lock:
            _State.depth -= 1
            outermost = _State.depth == 0
            pending = _State.pending[:1] if outermost else []
            if outermost:
                _State.pending.clear()
        _restore(replaced)
        if pending:
            _after(pending[0], completed=completed, main=main)


def _reset_in_child() -> None:
    """A forked child (a cold-open worker, a cache writer) gets the signals back.

    It inherits the handler and this state from a parent that may be inside
    :func:`raising`; a worker stopped by SIGTERM must simply end, as before, not
    raise :class:`Interrupted` and print a traceback.
    """
    _State.lock = threading.Lock()  # another thread may have held it at the fork
    _State.depth = 0
    _State.pending.clear()
    _State.raise_outside = _State.raised = False
    for signum, handler in list(_State.previous.items()):
        with contextlib.suppress(ValueError, OSError):
            if signal.getsignal(signum) is _on_signal:
                signal.signal(signum, handler)


os.register_at_fork(after_in_child=_reset_in_child)


def _after(signum: int, *, completed: bool, main: bool) -> None:
    """Act on a signal that arrived during a critical section that has just ended."""
    if not main:
        os.kill(os.getpid(), signum)  # the main thread's handler acts on it
        return
    if not completed and _State.raise_outside:
        return  # the body's Interrupted (or write error) is already propagating
    _act(signum, None, written=completed)
