"""Per-author totals in the model: ``people`` reads a few hundred rows, not a million.

What ``people`` counts splits in two. What depends on a decision's own row only
(recorded, superseded, elements shaped, first and last time, install ids) is summed
into ``person``, ``person_el`` and ``person_writer`` when the model is built
(:func:`write_people`) and adjusted by every update: each decision row the update
rewrites takes its old contribution out and puts its new one in
(:func:`people_delta`, then :meth:`PeopleDelta.write`). What depends on the heads (in
force, dead ends, conflicts) changes with any decision anywhere, so it is read at
query time from the heads alone: ``head`` (:func:`head_counts`, about one row per
element) mirrors the elements' head lists with each head's author and superseded
flag, rewritten for every element and decision row an update writes
(:func:`refresh_heads`).

A placeholder (a decision known only as a supersedes target: empty ``hash``) counts
for no one, as in :func:`kgai_tui.core.reads.people.people_obj`.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import compress
from typing import Any, Final, NamedTuple

import orjson

from kgai_tui.core.model.rows import ModelCorruptError

__all__ = [
    "Contribution",
    "HeadCounts",
    "PeopleDelta",
    "PersonTotals",
    "batches",
    "head_counts",
    "people_delta",
    "people_parts",
    "person_totals",
    "refresh_heads",
    "write_heads",
    "write_people",
]

_BATCH: Final = 500

#: ``(author, decisions, superseded, elements, first, last, writers)``, writers sorted.
PersonTotals = tuple[str, int, int, int, int | None, int | None, list[str]]
#: ``(author, in force, in force and superseded, conflicts)``.
HeadCounts = tuple[str, int, int, int]


class Contribution(NamedTuple):
    """What one recorded decision adds to its author's totals."""

    author: str
    time: int | None
    install: str
    shapes: frozenset[str]
    superseded: bool


def batches(items: Sequence[Any]) -> Iterator[Sequence[Any]]:
    """``items`` in slices small enough for one ``IN (...)`` query."""
    for at in range(0, len(items), _BATCH):
        yield items[at : at + _BATCH]


# ---------------------------------------------------------------------- a whole model


def write_people(
    db: sqlite3.Connection,
    hashes: Sequence[str],
    authors: Sequence[str],
    times: Sequence[int | None],
    installs: Sequence[str],
    shapes: Sequence[Sequence[str]],
    superseded_by: Sequence[Sequence[int]],
    el_shapes: Iterable[tuple[str, Iterable[int]]],
) -> None:
    """Fill the empty people tables from every decision's columns (a build).

    ``el_shapes`` is ``shapes`` by element (each element and the decisions shaping
    it): counting an element's few authors beats making a pair per shape. Counted
    in C (``Counter`` over ``map``, ``zip`` and ``compress``; NumPy for the first
    and last times), then the placeholders, a handful, taken out again: a Python
    loop over a million decisions would cost seconds.
    """
    placeholders = [i for i, h in enumerate(hashes) if not h]
    writers = Counter(zip(authors, installs, strict=True))
    author_of = authors.__getitem__
    shaped: dict[tuple[str, str], int] = {
        (a, eid): n
        for eid, shapers in el_shapes
        for a, n in Counter(map(author_of, shapers)).items()
    }
    replaced = Counter(compress(authors, superseded_by))
    for i in placeholders:
        a = authors[i]
        writers[a, installs[i]] -= 1
        for e in shapes[i]:
            shaped[a, e] -= 1
        if superseded_by[i]:
            replaced[a] -= 1
    decisions: Counter[str] = Counter()
    for (a, _), n in writers.items():
        decisions[a] += n
    first, last = _first_last(placeholders, authors, times)
    elements: Counter[str] = Counter(a for (a, _), n in shaped.items() if n > 0)
    db.executemany(
        "INSERT INTO person (author, decisions, superseded, elements, first, last)"
        " VALUES (?, ?, ?, ?, ?, ?)",
        [
            (a, n, replaced[a], elements[a], first.get(a), last.get(a))
            for a, n in sorted(decisions.items())
            if n > 0
        ],
    )
    db.executemany(
        "INSERT INTO person_el (author, eid, n) VALUES (?, ?, ?)",
        [(a, e, n) for (a, e), n in shaped.items() if n > 0],
    )
    db.executemany(
        "INSERT INTO person_writer (author, install, n) VALUES (?, ?, ?)",
        [(a, w, n) for (a, w), n in writers.items() if n > 0],
    )


def _first_last(
    placeholders: Sequence[int], authors: Sequence[str], times: Sequence[int | None]
) -> tuple[dict[str, int], dict[str, int]]:
    """Each author's earliest and latest time (recorded decisions with a time)."""
    import numpy as np

    n = len(authors)
    code = {a: k for k, a in enumerate(dict.fromkeys(authors))}
    codes = np.fromiter(map(code.__getitem__, authors), np.int64, n)
    top = np.iinfo(np.int64).max
    stamps = np.fromiter((top if t is None else t for t in times), np.int64, n)
    stamps[list(placeholders)] = top
    lo = np.full(len(code), top, np.int64)
    np.minimum.at(lo, codes, stamps)
    hi = np.full(len(code), -1 - top, np.int64)
    np.maximum.at(hi, codes, np.where(stamps == top, -1 - top, stamps))
    first = {a: int(lo[k]) for a, k in code.items() if lo[k] != top}
    last = {a: int(hi[k]) for a, k in code.items() if lo[k] != top}
    return first, last


def write_heads(
    db: sqlite3.Connection,
    heads: Iterable[tuple[str, Iterable[int]]],
    hashes: Sequence[str],
    authors: Sequence[str],
    superseded_by: Sequence[Sequence[int]],
) -> None:
    """Fill the empty ``head`` table from every element's heads (a build)."""
    db.executemany(
        "INSERT INTO head (eid, ix, author, superseded) VALUES (?, ?, ?, ?)",
        [
            (eid, i, authors[i] if hashes[i] else None, int(bool(superseded_by[i])))
            for eid, held in heads
            for i in held
        ],
    )


# ---------------------------------------------------------------------- an update


@dataclass(slots=True)
class _Change:
    """How one author's totals move in an update."""

    decisions: int = 0
    superseded: int = 0
    elements: Counter[str] = field(default_factory=Counter)
    writers: Counter[str] = field(default_factory=Counter)
    added: list[int] = field(default_factory=list)
    removed: list[int] = field(default_factory=list)

    def add(self, c: Contribution, sign: int) -> None:
        self.decisions += sign
        self.superseded += sign * c.superseded
        for e in c.shapes:
            self.elements[e] += sign
        self.writers[c.install] += sign
        if c.time is not None:
            (self.added if sign > 0 else self.removed).append(c.time)


def _row_contribution(row: Sequence[Any]) -> Contribution | None:
    """The contribution of a row as :data:`~kgai_tui.core.model.build.INSERT_DEC`
    writes it (``ix``, the decision columns, lists as JSON or NULL)."""
    return _stored(row[4], row[7], row[9], row[10], row[11], row[13] is not None)


def _stored(
    author: str,
    time: int | None,
    install: str,
    ev_hash: str,
    shapes: str | bytes | None,
    superseded: bool,
) -> Contribution | None:
    if not ev_hash:
        return None
    try:
        listed = [] if shapes is None else orjson.loads(shapes)
    except orjson.JSONDecodeError as exc:
        raise ModelCorruptError("a decision's shapes do not decode") from exc
    if not isinstance(listed, list):
        raise ModelCorruptError("a decision's shapes are no list")
    return Contribution(author, time, install, frozenset(listed), bool(superseded))


class PeopleDelta:
    """The change an update makes to the people tables, worked out before its
    decision rows are written (the old rows are read from the model then)."""

    def __init__(self, changes: dict[str, _Change]) -> None:
        """Hold each touched author's change."""
        self.changes = changes

    def write(self, db: sqlite3.Connection) -> None:
        """Apply the change, in the update's transaction, after its decision rows
        are written (a first or last time taken away is looked up again in them).

        Raises:
            ModelCorruptError: a count would fall below zero (the tables and the
                decision rows disagree).
        """
        for author in sorted(self.changes):
            _write_author(db, author, self.changes[author])


def people_delta(db: sqlite3.Connection, rows: Sequence[Sequence[Any]]) -> PeopleDelta:
    """What writing the decision ``rows`` (``INSERT_DEC`` tuples) does to the totals.

    Call before the rows are written: each row's old contribution is read from the
    model. In practice only new rows and a superseded flag or shapes of old ones
    change (an author, time or install id is set once); any change is handled.
    """
    old: dict[int, Contribution | None] = {}
    indices = [int(r[0]) for r in rows]
    for chunk in batches(indices):
        marks = ",".join("?" * len(chunk))
        for ix, a, t, w, h, s, by in db.execute(
            "SELECT ix, author, time, install, hash, shapes,"
            f" superseded_by IS NOT NULL FROM dec WHERE ix IN ({marks})",
            chunk,
        ):
            old[ix] = _stored(a, t, w, h, s, by)
    changes: dict[str, _Change] = {}
    for r in rows:
        before = old.get(int(r[0]))
        after = _row_contribution(r)
        if before == after:
            continue
        for c, sign in ((before, -1), (after, 1)):
            if c is not None:
                change = changes.get(c.author)
                if change is None:
                    change = changes[c.author] = _Change()
                change.add(c, sign)
    return PeopleDelta(changes)


def _counted(
    db: sqlite3.Connection, table: str, column: str, author: str, delta: Counter[str]
) -> int:
    """Apply ``delta`` to an author's ``person_el`` or ``person_writer`` counts; the
    change in how many keys have a positive count."""
    keys = sorted(k for k, n in delta.items() if n)
    held: dict[str, int] = {}
    for chunk in batches(keys):
        marks = ",".join("?" * len(chunk))
        held.update(
            db.execute(
                f"SELECT {column}, n FROM {table} WHERE author = ?"
                f" AND {column} IN ({marks})",
                (author, *chunk),
            )
        )
    kept: list[tuple[str, str, int]] = []
    gone: list[tuple[str, str]] = []
    moved = 0
    for k in keys:
        before = held.get(k, 0)
        after = before + delta[k]
        if after < 0:
            raise ModelCorruptError(f"{table} would count below zero")
        moved += (after > 0) - (before > 0)
        if after:
            kept.append((author, k, after))
        else:
            gone.append((author, k))
    db.executemany(
        f"INSERT OR REPLACE INTO {table} (author, {column}, n) VALUES (?, ?, ?)", kept
    )
    db.executemany(f"DELETE FROM {table} WHERE author = ? AND {column} = ?", gone)
    return moved


def _write_author(db: sqlite3.Connection, author: str, change: _Change) -> None:
    row = db.execute(
        "SELECT decisions, superseded, elements, first, last FROM person"
        " WHERE author = ?",
        (author,),
    ).fetchone()
    decisions, superseded, elements, first, last = row or (0, 0, 0, None, None)
    decisions += change.decisions
    superseded += change.superseded
    elements += _counted(db, "person_el", "eid", author, change.elements)
    writers = _counted(db, "person_writer", "install", author, change.writers)
    # A row written again (its decision's status moved) leaves and comes back
    # with the same time: only a time that left for good can move the bounds.
    gone = Counter(change.removed)
    gone.subtract(change.added)
    if any(t is not None and gone[t] > 0 for t in (first, last)):
        # Rare (a row's time or author never changes in a replay): ask the rows.
        first, last = db.execute(
            "SELECT min(time), max(time) FROM dec WHERE author = ? AND hash != ''",
            (author,),
        ).fetchone()
    elif change.added:
        first = min(change.added) if first is None else min(first, *change.added)
        last = max(change.added) if last is None else max(last, *change.added)
    if min(decisions, superseded, elements) < 0 or superseded > decisions:
        raise ModelCorruptError("the people totals disagree with the decisions")
    if decisions == 0:
        if elements or superseded or writers > 0 or first is not None:
            raise ModelCorruptError("the people totals disagree with the decisions")
        db.execute("DELETE FROM person WHERE author = ?", (author,))
        return
    db.execute(
        "INSERT OR REPLACE INTO person (author, decisions, superseded, elements,"
        " first, last) VALUES (?, ?, ?, ?, ?, ?)",
        (author, decisions, superseded, elements, first, last),
    )


def refresh_heads(
    db: sqlite3.Connection,
    decs: Sequence[Sequence[Any]],
    els: Sequence[Sequence[Any]],
) -> None:
    """Bring ``head`` up to date with the decision and element rows an update just
    wrote (``INSERT_DEC`` and ``INSERT_EL`` tuples; call after writing them).

    A written decision row may have changed its author or superseded flag where
    it is a head; a written element row may hold other heads.

    Raises:
        ModelCorruptError: a head is no decision row.
    """
    db.executemany(
        "UPDATE head SET author = ?, superseded = ? WHERE ix = ?",
        [(r[4] if r[10] else None, int(r[13] is not None), r[0]) for r in decs],
    )
    pairs: list[tuple[str, int]] = []
    for r in els:
        eid, listed = r[0], r[8]
        db.execute("DELETE FROM head WHERE eid = ?", (eid,))
        if listed is not None:
            pairs.extend((eid, int(i)) for i in orjson.loads(listed))
    wanted = sorted({i for _, i in pairs})
    found: dict[int, tuple[str | None, int]] = {}
    for chunk in batches(wanted):
        marks = ",".join("?" * len(chunk))
        for ix, author, ev_hash, by in db.execute(
            "SELECT ix, author, hash, superseded_by IS NOT NULL FROM dec"
            f" WHERE ix IN ({marks})",
            chunk,
        ):
            found[ix] = (author if ev_hash else None, int(by))
    if len(found) != len(wanted):
        raise ModelCorruptError("a head is no decision")
    db.executemany(
        "INSERT INTO head (eid, ix, author, superseded) VALUES (?, ?, ?, ?)",
        [(eid, i, *found[i]) for eid, i in sorted(pairs)],
    )


# ---------------------------------------------------------------------- reading


def person_totals(db: sqlite3.Connection) -> list[PersonTotals]:
    """Every author's totals (any order), their install ids sorted."""
    writers: dict[str, list[str]] = {}
    for a, w in db.execute("SELECT author, install FROM person_writer"):
        writers.setdefault(a, []).append(w)
    out: list[PersonTotals] = [
        (a, n, s, e, f, last, sorted(writers.pop(a, ())))
        for a, n, s, e, f, last in db.execute(
            "SELECT author, decisions, superseded, elements, first, last FROM person"
        )
    ]
    if writers:
        raise ModelCorruptError("an install id is counted for no one")
    return out


def head_counts(db: sqlite3.Connection, contested: Iterable[str]) -> list[HeadCounts]:
    """Per author with a recorded head: how many of their decisions are a head, how
    many of those are superseded (on another element), and on how many contested
    elements one of them is a head. Counted by SQLite over ``head`` (one row per
    head, placeholders' rows left out), so Python sees a row per author."""
    counts: dict[str, list[int]] = {
        author: [held, both, 0]
        for author, held, both in db.execute(
            "SELECT author, count(DISTINCT ix),"
            " count(DISTINCT CASE WHEN superseded THEN ix END)"
            " FROM head WHERE author IS NOT NULL GROUP BY author"
        )
    }
    for chunk in batches(sorted(contested)):
        marks = ",".join("?" * len(chunk))
        for author, n in db.execute(
            "SELECT author, count(DISTINCT eid) FROM head WHERE author IS NOT NULL"
            f" AND eid IN ({marks}) GROUP BY author",
            chunk,
        ):
            counts[author][2] += n  # the chunks hold distinct elements
    return [(author, c[0], c[1], c[2]) for author, c in counts.items()]


def people_parts(
    db: sqlite3.Connection, contested: Iterable[str]
) -> tuple[list[PersonTotals], list[HeadCounts]]:
    """The totals and the head counts, checked against each other."""
    totals = person_totals(db)
    heads = head_counts(db, contested)
    known = {t[0] for t in totals}
    if any(h[0] not in known for h in heads):
        raise ModelCorruptError("a head's author has no totals")
    return totals, heads
