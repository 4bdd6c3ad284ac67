"""Per-author step arrays: ``people --as-of`` totals at any cut by bisection.

:mod:`kgai_tui.core.model.people_at` answers a cut from the final decision rows:
a real decision counts once ``coalesce(time, zero) <= cut``. Every count it needs
is then "how many of these times are at or before the cut", so per author the
model can keep the times sorted once and answer each cut with a few bisections
(grouped scans of the 1M-row ``dec`` table took 1-2 s a cut):

* ``nulls`` and ``times``: the real decisions with no recorded time (Go's zero
  time) and the others' times, sorted (``first`` and ``last`` come from these);
* ``writers``: per install id, the first time the author wrote from it;
* ``elements``: per element the author's decisions shape, the first such time;
* ``superseded``: per real decision of theirs that something supersedes, the
  first time a superseder is recorded.

They are derived from the ``dec`` rows alone, built by the first ``people --as-of``
that needs them and kept in ``at_person``, each array one blob that a read takes
a block at a time (:mod:`kgai_tui.core.model.sorted_times`); stored steps that do
not decode are built again from the rows. The ``people_at`` meta value says below
which cut they still hold: an append whose events all pass the decision-id gate,
carry RFC3339 times and rewrite no decision's fields leaves every cut before its
earliest time as it was, so it only lowers that bound; any other append, and the
moments written anew, drop them (the next ``people --as-of`` builds them again).
"""

from __future__ import annotations

import marshal
import sqlite3
from array import array
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from kgai_tui.core.model.disk import read_meta
from kgai_tui.core.model.moments import FOREVER
from kgai_tui.core.model.people_rows import PersonTotals
from kgai_tui.core.model.rows import ModelCorruptError
from kgai_tui.core.model.seal import (
    model_lock,
    rewrite_sealed,
)
from kgai_tui.core.model.sorted_times import InMemory, OnDisk, SortedTimes, encode
from kgai_tui.core.store.decision_fields import ZERO_TIME

__all__ = [
    "PEOPLE_STEPS_KEY",
    "PersonSteps",
    "drop_people_steps",
    "lower_people_steps",
    "people_steps_of",
    "people_steps_stored",
    "save_people_steps",
    "stored_people_steps",
    "totals_at",
    "write_people_steps",
]

#: The ``meta`` key of the bound below which ``at_person`` holds.
PEOPLE_STEPS_KEY: Final = "people_at"


@dataclass(frozen=True, slots=True)
class PersonSteps:
    """One author's sorted times (see the module docstring): in memory when just
    built, else read a block at a time from the stored blobs."""

    author: str
    nulls: int
    times: SortedTimes
    writers: tuple[tuple[int, str], ...]  # (first time, install id), sorted
    elements: SortedTimes
    superseded: SortedTimes


def _runs(rows: Iterable[tuple[str, int | None]]) -> dict[str, array[int]]:
    """``(author, value)`` rows sorted by author then value, as one int64 array per
    author (``None`` values left out): SQLite sorts, in bounded memory, so no
    list of every value is ever held (10M Python ints are ~400 MB)."""
    out: dict[str, array[int]] = {}
    current: str | None = None
    values = array("q")
    for author, value in rows:
        if author != current:
            current = author
            values = out[author] = array("q")
        if value is not None:
            values.append(value)
    return out


def people_steps_of(db: sqlite3.Connection) -> list[PersonSteps]:
    """Every author's steps, from the ``dec`` rows (authors in byte order)."""
    real = "FROM dec WHERE hash != ''"
    times = _runs(db.execute(f"SELECT author, time {real} ORDER BY author, time"))
    nulls = dict(
        db.execute(f"SELECT author, count(*) {real} AND time IS NULL GROUP BY author")
    )
    writers: dict[str, list[tuple[int, str]]] = {}
    for author, install, first in db.execute(
        f"SELECT author, install, min(coalesce(time, ?)) {real} GROUP BY 1, 2",
        (ZERO_TIME,),
    ):
        writers.setdefault(author, []).append((int(first), install))
    elements = _runs(
        db.execute(
            "SELECT author, min(coalesce(time, ?)) AS t FROM dec, json_each(dec.shapes)"
            " j WHERE dec.shapes IS NOT NULL AND hash != '' GROUP BY author, j.value"
            " ORDER BY author, t",
            (ZERO_TIME,),
        )
    )
    # What a supersedes edge points at is real at a cut exactly when it is real
    # now (people_at's settled check), so the edge counts from its superseder's time.
    superseded = _runs(
        db.execute(
            "SELECT o.author, min(coalesce(s.time, ?)) AS t FROM dec s,"
            " json_each(s.supersedes) j JOIN dec o ON o.ix = j.value"
            " WHERE s.supersedes IS NOT NULL AND o.hash != '' GROUP BY o.ix"
            " ORDER BY o.author, t",
            (ZERO_TIME,),
        )
    )
    none = array("q")
    return [
        PersonSteps(
            author,
            int(nulls.get(author, 0)),
            InMemory(times[author]),
            tuple(sorted(writers.get(author, ()))),
            InMemory(elements.get(author, none)),
            InMemory(superseded.get(author, none)),
        )
        for author in sorted(times)
    ]


def totals_at(steps: Iterable[PersonSteps], cut: int) -> list[PersonTotals]:
    """Per author with a decision recorded by ``cut``: what ``people_at`` needs."""
    out: list[PersonTotals] = []
    for s in steps:
        k, lo, hi = s.times.upto(cut)
        n = k + (s.nulls if cut >= ZERO_TIME else 0)
        if n == 0:
            continue
        out.append(
            (
                s.author,
                n,
                s.superseded.upto(cut)[0],
                s.elements.upto(cut)[0],
                lo,
                hi,
                sorted(install for first, install in s.writers if first <= cut),
            )
        )
    return out


def stored_people_steps(db: sqlite3.Connection, cut: int) -> list[PersonSteps] | None:
    """The stored steps when they hold at ``cut``, else ``None``; their times are
    read from disk as asked (:mod:`kgai_tui.core.model.sorted_times`).

    Raises:
        ModelCorruptError: a stored value does not decode.
    """
    below = _below(db)
    if below is None or cut >= below:
        return None
    return list(_decoded(db))


def people_steps_stored(db: sqlite3.Connection) -> bool:
    """Whether the model holds per-author steps (for some cuts).

    Raises:
        ModelCorruptError: their bound does not decode.
    """
    return _below(db) is not None


def _below(db: sqlite3.Connection) -> int | None:
    """The cut below which the stored steps hold (``None``: none are stored).

    Raises:
        ModelCorruptError: the bound does not decode.
    """
    row = db.execute("SELECT v FROM meta WHERE k = ?", (PEOPLE_STEPS_KEY,)).fetchone()
    if row is None:
        return None
    try:
        return int(marshal.loads(row[0])["below"])
    except (ValueError, EOFError, TypeError, KeyError) as exc:
        raise ModelCorruptError("the people steps' bound does not decode") from exc


def _decoded(db: sqlite3.Connection) -> Iterator[PersonSteps]:
    for rowid, author, nulls, writers in db.execute(
        "SELECT rowid, author, nulls, writers FROM at_person ORDER BY author"
    ):
        try:
            found = marshal.loads(writers)
            pairs = tuple((int(t), str(i)) for t, i in found)
        except (ValueError, EOFError, TypeError) as exc:
            raise ModelCorruptError("a person's writers do not decode") from exc
        yield PersonSteps(
            str(author),
            int(nulls),
            OnDisk(db, "at_person", "times", rowid),
            pairs,
            OnDisk(db, "at_person", "elements", rowid),
            OnDisk(db, "at_person", "superseded", rowid),
        )


def _values(times: SortedTimes) -> array[int]:
    if not isinstance(times, InMemory):
        raise TypeError("only steps built from the rows are written")
    return times.values


def write_people_steps(db: sqlite3.Connection, steps: Iterable[PersonSteps]) -> None:
    """Replace the stored steps with ``steps`` (built from the rows), holding at
    every cut (inside the caller's transaction)."""
    db.execute("DELETE FROM at_person")
    db.executemany(
        "INSERT INTO at_person VALUES (?, ?, ?, ?, ?, ?)",
        [
            (
                s.author,
                s.nulls,
                encode(_values(s.times)),
                marshal.dumps(list(s.writers)),
                encode(_values(s.elements)),
                encode(_values(s.superseded)),
            )
            for s in steps
        ],
    )
    _set_below(db, FOREVER)


def _set_below(db: sqlite3.Connection, below: int) -> None:
    db.execute(
        "INSERT OR REPLACE INTO meta (k, v) VALUES (?, ?)",
        (PEOPLE_STEPS_KEY, marshal.dumps({"below": below})),
    )


def drop_people_steps(db: sqlite3.Connection) -> None:
    """Forget the stored steps (inside the caller's transaction)."""
    db.execute("DELETE FROM at_person")
    db.execute("DELETE FROM meta WHERE k = ?", (PEOPLE_STEPS_KEY,))


def lower_people_steps(db: sqlite3.Connection, low: int) -> None:
    """After an append recorded from ``low`` on that rewrote no decision's fields:
    the steps hold below ``low`` only (inside the caller's transaction)."""
    try:
        below = _below(db)
    except ModelCorruptError:
        drop_people_steps(db)
        return
    if below is not None:
        _set_below(db, min(below, low))


def save_people_steps(
    path: Path,
    shards: list[dict[str, Any]],
    steps: list[PersonSteps],
    reader: sqlite3.Connection | None = None,
    patience: float = 0.0,
) -> bool:
    """Store ``steps`` (built by a read whose snapshot held ``shards``) in the
    model at ``path`` when it still holds that log. A read never waits: when
    another process holds the model's lock, nothing is written and a later read
    builds them again; a detached build gives the holder ``patience`` seconds.
    Returns whether they were written.

    ``reader`` is that read's connection (in a read transaction). Its snapshot
    would hold the write-ahead log's checkpoint back, leaving the steps (160 MB
    at 10M decisions) in the log for every later read to look through, so it
    ends its transaction for the write and begins a new one before the lock is
    let go: no writer can come between, so it reads the same log state after,
    with the steps."""
    try:
        with model_lock(path, wait=False, patience=patience):
            if reader is not None and reader.in_transaction:
                reader.execute("COMMIT")
            try:
                return _save(path, shards, steps)
            finally:
                if reader is not None:
                    reader.execute("BEGIN")
                    reader.execute("SELECT 1 FROM meta LIMIT 1").fetchone()
    except (BlockingIOError, OSError):
        return False


def _save(path: Path, shards: list[dict[str, Any]], steps: list[PersonSteps]) -> bool:
    def change(db: sqlite3.Connection) -> Callable[[], None] | None:
        if read_meta(db, "shards") != shards:
            return None  # the model moved on since the read
        return lambda: write_people_steps(db, steps)

    return rewrite_sealed(path, change)
