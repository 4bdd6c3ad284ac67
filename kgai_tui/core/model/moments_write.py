"""Writing the model's moments (what ``as-of`` needs) from a time index.

The time index answers any cut from tables that live in memory beside the whole
projection; the moments are the same answers stored per element and per link as
step functions over time, so a reader bisects its way to one cut and fetches only
the decision rows of the heads it finds (:mod:`kgai_tui.core.model.moments`). They
are written by the first ``as-of`` that had to open the whole store, for the exact
log state the model holds, and kept usable across appends by
:func:`~kgai_tui.core.model.moments_append.plan_append`.
"""

from __future__ import annotations

import marshal
import sqlite3
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgai_tui.core.model.disk import read_meta
from kgai_tui.core.model.frames import (
    HEADS,
    LINKS,
    Block,
    build_frames,
    drop_frames,
    write_frames,
)
from kgai_tui.core.model.moments import MOMENTS_KEY
from kgai_tui.core.model.people_steps import drop_people_steps
from kgai_tui.core.model.seal import model_lock, rewrite_sealed, sealed

if TYPE_CHECKING:
    from kgai_tui.core.engine.engine import Engine
    from kgai_tui.core.timeindex.index import TimeIndex

__all__ = [
    "MomentRows",
    "engine_prints",
    "moment_rows",
    "moments_of",
    "save_moments",
    "write_moments",
]


def _link_steps(ops: list[Any]) -> tuple[list[int], list[int]]:
    """When a link is alive: the last included op in replay order decides.

    ``ops`` is the index's ``[run_is_add, run_min, (time, pos, add, by)...]``; at a
    cut the included ops are those timed at or before it, and the link is alive when
    the latest of them in list (replay) order is an add. Swept by time, that is a
    step function; only its changes are kept, as (times, values).
    """
    found = sorted(
        (ops[i], (i - 2) >> 2, bool(ops[i + 2])) for i in range(2, len(ops), 4)
    )
    times: list[int] = []
    alive: list[int] = []
    best, state, k = -1, 0, 0
    while k < len(found):
        t = found[k][0]
        while k < len(found) and found[k][0] == t:
            if found[k][1] > best:
                best, state = found[k][1], int(found[k][2])
            k += 1
        if state != (alive[-1] if alive else 0):
            times.append(t)
            alive.append(state)
    return times, alive


def _exception_steps(ix: TimeIndex, g: int) -> bytes:
    """A decision whose fields change over time: ``(time, title, lamport)`` steps.

    :func:`~kgai_tui.core.timeindex.queries.decision_at` depends on the cut only
    through the times of the decision's carrying entries and in-edges, so its
    value at each of those times is the whole story.
    """
    from kgai_tui.core.timeindex.queries import decision_at

    carries = ix.d_carry.get(g)
    if carries is None:
        carries = [ix.base_carry(g)] if ix.d_cpos[g] >= 0 else []
    times = {c[1] for c in carries}
    e = ix.d_in[g]
    while e >= 0:
        times.update(t for _, t in ix.e_more.get(e) or [(ix.e_ord[e], ix.e_time[e])])
        e = ix.e_nin[e]
    steps = []
    for t in sorted(times):
        fields, _ = decision_at(ix, t, g)
        steps.append(
            (t, "" if fields is None else fields[2], 0 if fields is None else fields[7])
        )
    return marshal.dumps(steps)


@dataclass
class MomentRows:
    """The rows of the moments of one time index, ready to insert."""

    els: list[tuple[int, str, bytes]]
    links: list[tuple[int, int, int, str]]
    decs: list[tuple[int, int, bytes]]
    multi: list[tuple[int, bytes]]
    blocks: list[Block]


def _steps_blocks(
    channel: int, entities: int, steps: list[tuple[Any, Any]]
) -> list[Block]:
    """The frames of one channel from each entity's (times, values), in entity
    order (:func:`~kgai_tui.core.model.frames.build_frames`)."""
    import numpy as np

    sizes = np.fromiter((len(t) for t, _ in steps), dtype=np.int64, count=len(steps))
    if not sizes.sum():
        return []
    owners = np.repeat(np.arange(len(steps), dtype=np.int64), sizes)
    times = np.concatenate([np.asarray(t, dtype=np.int64) for t, _ in steps])
    values = np.concatenate([np.asarray(v, dtype=np.int64) for _, v in steps])
    return build_frames(channel, entities, times, owners, values)


def moment_rows(ix: TimeIndex) -> MomentRows:
    """Element, link, changing-decision and multi-head rows of a refreshed index,
    and the heads and links at any cut as frames."""
    eids = sorted(ix.touch)
    number = {e: n for n, e in enumerate(eids)}
    empty = array("q")
    els = [(n, eid, marshal.dumps(list(ix.touch[eid]))) for n, eid in enumerate(eids)]
    heads = [ix.versions.get(eid, (empty, empty)) for eid in eids]
    links = []
    alive = []
    for i, ((f, t, kind), ops) in enumerate(ix.links.items()):
        links.append((i, number.get(f, -1), number.get(t, -1), kind))
        alive.append(_link_steps(ops))
    decs = [(g, ix.d_stable[g], _exception_steps(ix, g)) for g in ix.exceptions]
    multi = [(i, marshal.dumps(tuple(gs))) for i, gs in enumerate(ix.vmulti)]
    blocks = _steps_blocks(HEADS, len(eids), heads) + _steps_blocks(
        LINKS, len(links), alive
    )
    return MomentRows(els, links, decs, multi, blocks)


def engine_prints(engine: Engine) -> list[Any]:
    """The shard fingerprints of a store opened whole, as the model stores them."""
    return [s.shard_print().to_list() for s in engine.scans]


Moments = tuple[MomentRows, dict[str, Any]]


def moments_of(ix: TimeIndex) -> Moments | None:
    """What :func:`write_moments` stores of ``ix`` (read now, while whatever ``ix``
    reads its decisions from is open).

    Only an index numbering its decisions as the projection does (it shares the
    projection's lists: no decision the decision-id gate refused) has moments to
    store: they name heads by the model's decision rows.
    """
    if ix.shared is None:
        return None
    ix.refresh()
    meta: dict[str, Any] = {
        "decisions": len(ix.d_exist),
        "top": ix.times[-1] if len(ix.times) else None,
        "clean": ix.ungated == 0 and ix.skipped == 0,
        "gaps": [],
    }
    return moment_rows(ix), meta


def write_moments(
    path: Path, moments: Moments | None, prints: list[Any], patience: float = 0.0
) -> bool:
    """Store ``moments`` in the model at ``path`` when it holds the log whose
    shards have these fingerprints (the log they were made from).

    A read never waits: when another process holds the model's lock, nothing is
    written and the next read at a moment tries again. A detached build, which no
    one waits for, gives the holder ``patience`` seconds. Returns whether they
    were written.
    """
    if moments is None or not sealed(path):
        return False
    try:
        with model_lock(path, wait=False, patience=patience):
            return _save(path, prints, *moments)
    except BlockingIOError:
        return False


def save_moments(
    path: Path, ix: TimeIndex, prints: list[Any], patience: float = 0.0
) -> bool:
    """:func:`moments_of` ``ix``, then :func:`write_moments`."""
    return write_moments(path, moments_of(ix), prints, patience)


def _save(
    path: Path, prints: list[Any], rows: MomentRows, meta: dict[str, Any]
) -> bool:
    def change(db: sqlite3.Connection) -> Callable[[], None] | None:
        shards = read_meta(db, "shards")
        if [s["print"] for s in shards] != prints:
            return None  # the model moved on (or lags): a later as-of stores them
        if read_meta(db, "counts")["decisions"] != meta["decisions"]:
            return None
        return lambda: _write(db, rows, meta)

    return rewrite_sealed(path, change)


def _write(db: sqlite3.Connection, rows: MomentRows, meta: dict[str, Any]) -> None:
    """Replace the moments (inside the caller's transaction)."""
    for table in ("at_el", "at_link", "at_dec", "at_multi"):
        db.execute(f"DELETE FROM {table}")
    drop_frames(db)
    db.executemany("INSERT INTO at_el VALUES (?, ?, ?)", rows.els)
    db.executemany("INSERT INTO at_link VALUES (?, ?, ?, ?)", rows.links)
    db.executemany("INSERT INTO at_dec VALUES (?, ?, ?)", rows.decs)
    db.executemany("INSERT INTO at_multi VALUES (?, ?)", rows.multi)
    write_frames(db, rows.blocks)
    db.execute(
        "INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)",
        (MOMENTS_KEY, marshal.dumps(meta)),
    )
    # Built against the at_dec rows just replaced: the next people --as-of
    # builds them again.
    drop_people_steps(db)
