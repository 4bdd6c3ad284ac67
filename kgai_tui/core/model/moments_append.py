"""Moving the moments along with an append, in the extension's own transaction.

An extension applies events that sort after every applied one. For the moments
(``as-of`` at any cut, :mod:`kgai_tui.core.model.moments`) what matters is when
they were recorded:

* every cut before the earliest appended time keeps its answer: the appended events
  are not in it. A decision row the append rewrote keeps its former title and
  lamport for those cuts (an ``at_dec`` step).
* when every appended event was recorded at or after the latest time before (the
  usual case: a ``record`` now), every cut at or after the latest appended time
  includes the whole log, so its answer is the model's state after the append: one
  new step, at that time, for each element and link the append rewrote. Cuts
  between the earliest and the latest appended time become a gap.
* a back-dated append (a teammate's old lines arriving by sync) leaves a gap from its
  earliest time on, until a later append or the next whole-store ``as-of`` rewrites
  the moments.

An event the replay and as-of treat differently (refused by the decision-id gate,
or a time that is not RFC3339) makes the whole range a gap: the moments are then
written again by the next ``as-of`` that reads the time index.
"""

from __future__ import annotations

import marshal
import sqlite3
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import orjson

from kgai_tui.core.model.frames import HEADS, LINKS, Change, append_changes
from kgai_tui.core.model.moments import (
    FOREVER,
    MOMENTS_KEY,
    fields_of,
    moments_meta,
    touch_at,
)
from kgai_tui.core.model.people_rows import batches
from kgai_tui.core.model.people_steps import drop_people_steps, lower_people_steps

__all__ = ["MomentsAppend", "plan_append"]

_BEFORE_ALL: Final = -(2**63)
Link = tuple[str, str, str]


@dataclass
class MomentsAppend:
    """What an append changes in the moments: rows to write and the new state."""

    meta: dict[str, Any]
    # New elements and links (their steps are changes below).
    els: list[tuple[int, str, bytes]] = field(default_factory=list)
    links: list[tuple[int, int, int, str]] = field(default_factory=list)
    # One step each at the append's latest time: element heads, link liveness.
    head_changes: list[Change] = field(default_factory=list)
    link_changes: list[Change] = field(default_factory=list)
    multi: list[tuple[int, bytes]] = field(default_factory=list)
    decs: list[tuple[int, int, bytes]] = field(default_factory=list)
    # The earliest appended time, when the per-author people steps still hold
    # below it (None: they are dropped; see kgai_tui.core.model.people_steps).
    people_low: int | None = None

    def write(self, db: sqlite3.Connection) -> None:
        """Write it (inside the caller's transaction)."""
        if self.people_low is None:
            drop_people_steps(db)
        else:
            lower_people_steps(db, self.people_low)
        db.executemany("INSERT INTO at_el VALUES (?, ?, ?)", self.els)
        db.executemany("INSERT INTO at_link VALUES (?, ?, ?, ?)", self.links)
        append_changes(db, HEADS, self.head_changes)
        append_changes(db, LINKS, self.link_changes)
        db.executemany("INSERT INTO at_multi VALUES (?, ?)", self.multi)
        db.executemany("INSERT OR REPLACE INTO at_dec VALUES (?, ?, ?)", self.decs)
        db.execute(
            "INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)",
            (MOMENTS_KEY, marshal.dumps(self.meta)),
        )


class _Refused(Exception):
    """The append cannot be folded into steps: the moments get a gap instead."""


def plan_append(
    db: sqlite3.Connection,
    times: Sequence[int | None],
    clean: bool,
    decisions: int,
    decs: Iterable[tuple[Any, ...]],
    els: Iterable[tuple[Any, ...]],
    added: Collection[Link],
    removed: Collection[Link],
) -> MomentsAppend | None:
    """The moments after an append (``None`` when the model holds none).

    Args:
        db: The model, before the append is written.
        times: The appended events' recorded times (``None``: not RFC3339).
        clean: Whether each passed the decision-id gate.
        decisions: How many decision rows the model holds after the append.
        decs: The decision rows the append writes (``INSERT_DEC`` order).
        els: The element rows it writes (``INSERT_EL`` order).
        added: Links (from, to, kind) it adds.
        removed: Links it removes.
    """
    meta = moments_meta(db)
    if meta is None:
        return None
    old_decisions = meta["decisions"]
    meta["decisions"] = decisions
    timed = [t for t in times if t is not None]
    if not timed or len(timed) != len(times) or not clean:
        meta["clean"] = False
        meta["gaps"] = [[_BEFORE_ALL, FOREVER]]
        return MomentsAppend(meta)
    low, high = min(timed), max(timed)
    plan = MomentsAppend(meta)
    plan.decs = _rewritten(db, low, old_decisions, list(decs))
    # Every cut before ``low`` keeps its answer; the steps are the final rows',
    # which a rewritten row (an at_dec step) no longer is.
    plan.people_low = None if plan.decs else low
    top = meta["top"]
    meta["top"] = high if top is None else max(top, high)
    # A step is the model's state now, which is as-of's only when every event ever
    # was in both (``clean``); a back-dated append is described by no step either.
    if not meta["clean"] or (top is not None and low < top):
        meta["gaps"].append([low, FOREVER])
        return plan
    try:
        _steps_at(db, plan, high, list(els), added, removed)
    except _Refused:
        plan.els, plan.links, plan.multi = [], [], []
        plan.head_changes, plan.link_changes = [], []
        meta["gaps"].append([low, FOREVER])
        return plan
    # The new steps describe every cut from ``high`` on: open gaps end there.
    meta["gaps"] = [[lo, min(hi, high)] for lo, hi in meta["gaps"] if lo < high]
    if low < high:
        meta["gaps"].append([low, high])
    return plan


def _rewritten(
    db: sqlite3.Connection, low: int, known: int, decs: list[tuple[Any, ...]]
) -> list[tuple[int, int, bytes]]:
    """``at_dec`` rows keeping the former fields of the decision rows an append
    changed, for the cuts before ``low``.

    A row whose own shapes or supersedes grew (an event of the same decision id
    appended) gets one too, its title and lamport unchanged: the step says "not
    the final row before ``low``", which ``people --as-of`` relies on
    (:mod:`kgai_tui.core.model.people_at`)."""
    # A placeholder the append creates with supersedes edges of its own (its
    # decision's event refused, a superseder of it applied first) carries no time
    # of its own for them: like the whole store's moments, it gets a step, so that
    # no cut before the append counts them.
    fresh = [
        (r[0], low, marshal.dumps([(low, r[2], r[8])]))
        for r in decs
        if r[0] >= known and not r[10] and r[12] is not None
    ]
    old = [r for r in decs if r[0] < known]
    if not old:
        return fresh
    before = fields_of(db, (r[0] for r in old))
    changed = {r[0] for r in old if before[r[0]] != (r[1], r[2], r[8])}
    changed.update(_grown(db, old))
    if not changed:
        return fresh
    marks = ",".join("?" * len(changed))
    held = {
        g: (stable, marshal.loads(steps))
        for g, stable, steps in db.execute(
            f"SELECT g, stable, steps FROM at_dec WHERE g IN ({marks})",
            sorted(changed),
        )
    }
    rows = []
    for g in sorted(changed):
        _, title, lamport = before[g]
        stable, steps = held.get(g, (_BEFORE_ALL, []))
        steps = [*steps, (stable, title, lamport)]
        rows.append((g, low, marshal.dumps(steps)))
    return sorted(rows + fresh)


def _grown(db: sqlite3.Connection, old: list[tuple[Any, ...]]) -> set[int]:
    """The rewritten decision rows whose shapes or supersedes lists changed."""
    grown: set[int] = set()
    for rows in batches(old):
        part = {r[0]: (r[11], r[12]) for r in rows}
        marks = ",".join("?" * len(part))
        for g, shapes, sups in db.execute(
            f"SELECT ix, shapes, supersedes FROM dec WHERE ix IN ({marks})",
            sorted(part),
        ):
            if part[g] != (shapes, sups):
                grown.add(g)
    return grown


def _heads_value(
    heads: str | None, multi: list[tuple[int, bytes]], next_multi: int
) -> int:
    """A heads step's value: a decision index, -1 for none, -2 - i for a set."""
    gs = [] if heads is None else orjson.loads(heads)
    if not gs:
        return -1
    if len(gs) == 1:
        return int(gs[0])
    i = next_multi + len(multi)
    multi.append((i, marshal.dumps(tuple(sorted(gs)))))
    return -2 - i


def _steps_at(
    db: sqlite3.Connection,
    plan: MomentsAppend,
    high: int,
    els: list[tuple[Any, ...]],
    added: Collection[Link],
    removed: Collection[Link],
) -> None:
    """One step at ``high`` per rewritten element and changed link (the state now).

    ``high`` is at or after every stored step (the caller checked that nothing was
    appended before the latest time), so the steps are changes at the end of the
    frames (:func:`~kgai_tui.core.model.frames.append_changes`).
    """
    next_n = db.execute("SELECT coalesce(max(n), -1) + 1 FROM at_el").fetchone()[0]
    next_link = db.execute("SELECT coalesce(max(id), -1) + 1 FROM at_link").fetchone()[
        0
    ]
    next_multi = db.execute("SELECT coalesce(max(i), -1) + 1 FROM at_multi").fetchone()[
        0
    ]
    number: dict[str, int] = {}
    for eid, _seq, kind, name, _props, _ss, _shapes, _hs, heads, _auth in els:
        value = _heads_value(heads, plan.multi, next_multi)
        hit = db.execute("SELECT n, touch FROM at_el WHERE eid = ?", (eid,)).fetchone()
        if hit is None:
            n, next_n = next_n, next_n + 1
            plan.els.append((n, eid, marshal.dumps([high, 0, kind, name])))
        else:
            n, touch = hit
            if touch_at(marshal.loads(touch), high) != (kind, name):
                raise _Refused  # a kind or name the record lows do not give
        plan.head_changes.append((high, n, value))
        number[eid] = n
    for links, alive in ((added, 1), (removed, 0)):
        for src, dst, kind in sorted(links):
            ends = [number.get(e) for e in (src, dst)]
            for k, e in enumerate((src, dst)):
                if ends[k] is None:
                    hit = db.execute(
                        "SELECT n FROM at_el WHERE eid = ?", (e,)
                    ).fetchone()
                    if hit is None:
                        raise _Refused
                    ends[k] = number[e] = hit[0]
            row = db.execute(
                "SELECT id FROM at_link WHERE src = ? AND dst = ? AND kind = ?",
                (ends[0], ends[1], kind),
            ).fetchone()
            if row is not None:
                plan.link_changes.append((high, row[0], alive))
            elif alive:
                plan.links.append((next_link, ends[0], ends[1], kind))  # type: ignore[arg-type]
                plan.link_changes.append((high, next_link, 1))
                next_link += 1
            else:
                raise _Refused  # a link removed that the moments never saw
