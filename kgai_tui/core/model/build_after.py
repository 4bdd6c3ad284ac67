"""Writing the model from a replay that already answered: here, or in a detached
grandchild that holds the model lock, seals the model, then (the lock let go, at a
lower priority) stores the moments and runs what the caller asked for next."""

from __future__ import annotations

import contextlib
import gc
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kgai_tui.core.engine.engine import Engine

__all__ = ["DETACHED_PATIENCE", "build_detached", "build_now"]

#: How long (seconds) a detached build waits for the model lock before it writes
#: the moments or the per-author steps. A read that follows the first one takes the
#: lock for a few milliseconds to check the model: a build that gave up at once
#: then left the moments for the first ``as-of`` to build (1M: 34 s). Bounded, so
#: the build does not hold its whole replay in memory through someone's rebuild.
DETACHED_PATIENCE = 10.0


def build_now(engine: Engine, path: Path) -> None:
    """Build and seal the model at ``path`` from ``engine``, here."""
    from kgai_tui.core.heap import GcPaused
    from kgai_tui.core.model.build import build_model

    with GcPaused():
        build_model(engine, path)


def build_detached(
    engine: Engine, path: Path, then: Callable[[Engine], object] | None = None
) -> bool:
    """Build the model in a detached grandchild that inherits the model lock.

    The lock is an ``flock`` on an open file description the children share, so
    it stays held until the grandchild has sealed the model: a reader meanwhile
    waits for it rather than building a second one.
    """
    from kgai_tui.core.detached import run_detached

    return run_detached(lambda: _build_then_moments(engine, path, then))


def _build_then_moments(
    engine: Engine, path: Path, then: Callable[[Engine], object] | None = None
) -> None:
    """The model, then (its lock let go, at a lower priority) the time index and
    the moments from the same replay, the index saved beside the model: without
    them the first ``as-of``, ``diff`` or slider step replays the whole store again
    to build the index (1M decisions: 34 s and 1.4 GB); then ``then`` with the
    replay (the search index, the per-author steps)."""
    from kgai_tui.core.heap import GcPaused, trim_heap
    from kgai_tui.core.model.history import save_history
    from kgai_tui.core.model.moments_write import engine_prints, save_moments
    from kgai_tui.core.model.seal import let_go_held_locks

    build_now(engine, path)
    let_go_held_locks()
    with contextlib.suppress(OSError):
        os.nice(10)
    with GcPaused():
        save_moments(
            path,
            save_history(engine, path),
            engine_prints(engine),
            patience=DETACHED_PATIENCE,
        )
    if then is not None:
        # The time index is garbage now, part of it in cycles, its pages in the
        # middle of the heap: collected and handed back before ``then`` builds on
        # top of them (at 1M the search index's build peaked at 1525 MB, 1207 MB
        # after this).
        gc.collect()
        trim_heap()
        then(engine)
