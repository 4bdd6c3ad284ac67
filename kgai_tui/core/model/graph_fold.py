"""The graph log folded into the stored state, after the read that made it long.

An update logs what it did to the element graph (:mod:`~kgai_tui.core.model.graph_log`);
once the log is long (:func:`~kgai_tui.core.model.graph_log.log_is_long`) the graph
is loaded whole, its state written again and the log emptied. At 10M decisions that
is ~1 s (load 0.6 s, state 0.14 s, write 0.27 s), and it fell on whichever read
made the log long: one read in ten after appends of 1,000 events took 2 s instead
of 1 s. A command-line read now answers first and leaves the fold to a detached
grandchild (:func:`fold_after`), which waits for the model's lock like the
detached build does; a process that may not fork (the explorer runs threads)
folds in line, as before. Folding changes the graph's representation, never the
graph: a reader replays the log on the state either way.
"""

from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

from kgai_tui.core.detached import run_detached
from kgai_tui.core.model.build_after import DETACHED_PATIENCE
from kgai_tui.core.model.disk import read_meta
from kgai_tui.core.model.graph_log import (
    clear_log,
    log_is_long,
    logged_count,
    stored_graph,
)
from kgai_tui.core.model.rows import ModelCorruptError
from kgai_tui.core.model.seal import fold_log, model_lock, sealed, write_seal

__all__ = ["fold_after", "fold_due", "fold_graph"]


def fold_due(db: sqlite3.Connection) -> bool:
    """Whether the model's graph log is long enough to fold into its state
    (``False`` when that cannot be read: the fold is housekeeping, never a
    reason for the update that asks to fail)."""
    try:
        counts = read_meta(db, "counts")
        return log_is_long(logged_count(db), int(counts["elements"]))
    except (sqlite3.Error, ModelCorruptError, KeyError, TypeError, ValueError):
        return False


def fold_graph(path: Path, *, patience: float = 0.0) -> bool:
    """Fold the graph log of the model at ``path`` into its state, under the
    model's lock, when it is sealed and the log is still long; whether it did.

    The lock is waited for ``patience`` seconds at most; nothing is written when
    another process keeps it (the next update that finds the log long folds it).
    """
    if not sealed(path):
        return False
    try:
        with model_lock(path, wait=False, patience=patience):
            return _fold(path)
    except OSError:  # another keeps the lock, or the cache cannot be written
        return False


def _fold(path: Path) -> bool:
    from kgai_tui.core.model.build import graph_state, write_meta

    if not sealed(path):
        return False
    db = sqlite3.connect(path, isolation_level=None, timeout=60.0)
    try:
        if not fold_due(db):
            return False  # another update folded it meanwhile
        state = graph_state(stored_graph(db, read_meta(db, "graph")))
        db.execute("BEGIN IMMEDIATE")
        try:
            write_meta(db, {"graph": state})
            clear_log(db)
            db.execute("COMMIT")
        except BaseException:
            with contextlib.suppress(sqlite3.Error):
                db.execute("ROLLBACK")
            raise
        fold_log(db)
        return True
    except (sqlite3.Error, ModelCorruptError, KeyError, TypeError, ValueError):
        return False  # a damaged model: the next read rebuilds it
    finally:
        db.close()
        # Sealed when we took the lock, so every byte since is ours (see
        # moments_write._save: a connection closing last folds the write-ahead log).
        write_seal(path)


def fold_after(path: Path) -> None:
    """After an update that left the graph log long: fold it in a detached
    grandchild, else (this process runs threads) here."""
    if not run_detached(lambda: fold_graph(path, patience=DETACHED_PATIENCE)):
        fold_graph(path)
