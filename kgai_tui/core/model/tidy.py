"""What an update leaves until after the answer: the graph log folded into the
state, the recall element file written again, the decisions past the last recall
segment given one.

An update logs what it did to the element graph (:mod:`~kgai_tui.core.model.graph_log`)
and adds the elements it changed to the recall delta; once the log is long, or the
delta file holds a quarter of the elements, the graph is loaded whole and the state
or the element file written again, and every 512 decisions a recall segment is
tokenized. At 10M decisions, on the read that happened to cross a line, that was
~1 s (the graph's state), ~2 s (the element file) and ~0.1 s on every append (the
segment and NumPy's import): one read in ten after appends of 1,000 events took
2-3 s instead of 1 s.

A command-line read now answers first and leaves that work (and the spill of the
element delta into its file, every four appends there) to a detached grandchild
(:func:`tidy_after`). It makes the work from a read snapshot, without the model's
lock, and takes the lock (waiting for it like the detached build does) only to
write it. Until it has run, readers replay the longer log and score the decisions past
the last segment one by one, as they always could: the answers are the same. A
process that may not fork (the explorer runs threads) tidies in line, and an
update that is not a command-line read does it all in its own transaction, as
before.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgai_tui.core.detached import run_detached
from kgai_tui.core.model.build_after import DETACHED_PATIENCE
from kgai_tui.core.model.disk import read_meta
from kgai_tui.core.model.graph_log import (
    clear_log,
    log_is_long,
    logged_count,
    stored_graph,
)
from kgai_tui.core.model.rows import UNREADABLE_MODEL
from kgai_tui.core.model.schema import connect_model
from kgai_tui.core.model.seal import model_lock, rewrite_sealed, sealed

__all__ = ["tidy", "tidy_after", "tidy_due"]


def tidy_due(db: sqlite3.Connection) -> bool:
    """Whether the model has work left for a tidy (``False`` when that cannot be
    read: housekeeping is never a reason for the update that asks to fail)."""
    try:
        return any(_due(db))
    except (*UNREADABLE_MODEL, OSError):
        return False


def _due(db: sqlite3.Connection) -> tuple[bool, bool]:
    """Whether the graph log is long; whether the recall files are due."""
    from kgai_tui.core.model.recall_delta import stored_delta
    from kgai_tui.core.model.recall_store import recall_tidy_due

    counts = read_meta(db, "counts")
    elements, decisions = int(counts["elements"]), int(counts["decisions"])
    recall = read_meta(db, "recall")
    return (
        log_is_long(logged_count(db), elements),
        recall_tidy_due(recall, stored_delta(db), elements, decisions),
    )


@dataclass(frozen=True, slots=True)
class _Plan:
    """The tidy's writes, made from one snapshot of the model, and what that
    snapshot was (its last applied event, counts and recall entry)."""

    stamp: tuple[Any, ...]
    meta: dict[str, Any]
    old_recall: dict[str, Any]


def tidy(path: Path, *, patience: float = 0.0) -> bool:
    """Do the work updates left in the model at ``path``; whether anything was
    written.

    The work is made from one read snapshot, without the model's lock (at 10M
    the graph loaded and the element file tokenized: 1-2 s), so that a read or
    a write that comes meanwhile does not wait for it; the lock is taken, for
    ``patience`` seconds at most, to write it when the model is still sealed
    and no update came between. When one did, the work is made again holding
    the lock (discarded each time, it would pile up behind reads that come back
    to back until an update has to do it in line).
    """
    if not sealed(path):
        return False
    plan = _plan(path)
    if plan is None:
        return False
    try:
        with model_lock(path, wait=False, patience=patience):
            if _write(path, plan):
                return True
            # An update came between (reads back to back): made again under the
            # lock, so that work overtaken once is not overtaken again.
            plan = _plan(path)
            return plan is not None and _write(path, plan)
    except OSError:  # another keeps the lock, or the cache cannot be written
        return False


def _stamp(db: sqlite3.Connection) -> tuple[Any, ...]:
    return read_meta(db, "last"), read_meta(db, "counts"), read_meta(db, "recall")


def _plan(path: Path) -> _Plan | None:
    from kgai_tui.core.model.build import graph_state
    from kgai_tui.core.model.disk import DiskProjection
    from kgai_tui.core.model.recall_store import tidy_recall

    db = connect_model(path, write=False)
    try:
        db.execute("BEGIN")  # one snapshot from the first row to the last
        stamp = _stamp(db)
        fold, recall_due = _due(db)
        if not (fold or recall_due):
            return None  # another process did it meanwhile
        old = read_meta(db, "recall")
        meta: dict[str, Any] = {}
        if recall_due:
            # New files only (the segment, the delta file, the element file):
            # unused, they are removed with the next update's unlisted files.
            recall, delta, loaded = tidy_recall(path, DiskProjection(db, path), old, db)
            meta["recall"] = recall
            if delta is not None:
                meta["recall_delta"] = delta.value()
            fold = fold or loaded  # the graph was loaded whole anyway
        if fold:
            meta["graph"] = graph_state(stored_graph(db, read_meta(db, "graph")))
        return _Plan(stamp, meta, old)
    except (*UNREADABLE_MODEL, OSError):
        return None  # a damaged model: the next read rebuilds it
    finally:
        db.close()


def _write(path: Path, plan: _Plan) -> bool:
    from kgai_tui.core.model.build import write_meta
    from kgai_tui.core.model.recall_files import listed, remove_unlisted

    def change(db: sqlite3.Connection) -> Callable[[], None] | None:
        if _stamp(db) != plan.stamp:
            return None  # an update came between

        def writes() -> None:
            write_meta(db, plan.meta)
            if "graph" in plan.meta:
                clear_log(db)  # every operation is in the state (same stamp)

        return writes

    if not rewrite_sealed(path, change):
        return False
    if "recall" in plan.meta:
        # A reader of the state before may still open the old files.
        keep = listed(plan.meta["recall"]) | listed(plan.old_recall)
        remove_unlisted(path, sorted(keep))
    return True


def tidy_after(path: Path) -> None:
    """After an update that left work in the model: tidy in a detached
    grandchild, else (this process runs threads) here."""
    if not run_detached(lambda: tidy(path, patience=DETACHED_PATIENCE)):
        tidy(path)
