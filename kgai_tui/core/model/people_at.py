"""``people --as-of`` from the model: per-author counts at a cut, in SQL, from disk.

The answer is :func:`kgai_tui.core.reads.people.people_obj` over the store as of
the cut (spec 6.6). The time index behind the moments splits decisions in two:

* most decisions' fields and shapes never change once they exist: a real one
  exists from its own recorded time on (``dec.time``, ``NULL`` being Go's zero
  time), a placeholder is no one's, and a real one's supersedes edges exist from
  its time on;
* the few others (``at_dec``: same-id events, a superseder recorded before what
  it supersedes) exist from their first step's time and equal their final row
  from ``stable`` on.

So at a cut outside every ``[first, stable)`` window of the second kind, "recorded
by the cut" is ``coalesce(time, zero) <= cut`` on the final rows, and the totals
are bisections of per-author sorted times
(:mod:`kgai_tui.core.model.people_steps`, built from the ``dec`` rows by the first
read that needs them); the heads come from the moments. A cut inside such a
window, a placeholder of the second kind that supersedes, or moments that do not
cover the cut: ``None``, and the caller reads the model's time index.
"""

from __future__ import annotations

import marshal
import sqlite3
from collections.abc import Callable, Sequence
from typing import Any

from kgai_tui.core.model.moments import cut_source, heads_at, moments_meta
from kgai_tui.core.model.people_rows import HeadCounts, PersonTotals, batches
from kgai_tui.core.model.people_steps import (
    PersonSteps,
    people_steps_of,
    stored_people_steps,
    totals_at,
)
from kgai_tui.core.model.rows import ModelCorruptError
from kgai_tui.core.store.decision_fields import ZERO_TIME

__all__ = ["people_at_parts"]

PeopleParts = tuple[list[PersonTotals], list[HeadCounts]]


def people_at_parts(
    db: sqlite3.Connection,
    cut: int,
    now: Callable[[], PeopleParts],
    keep: Callable[[list[PersonSteps]], object] = lambda _: None,
    built: list[PersonSteps] | None = None,
) -> PeopleParts | None:
    """The per-author totals and head counts at ``cut`` (what
    :func:`~kgai_tui.core.reads.people.people_of_totals` turns into the answer), or
    ``None`` when the model cannot answer it exactly (see the module docstring).
    ``now`` gives them now (the people tables), which is the answer at any cut
    from the latest recorded time on when no event was left out; ``keep`` is
    handed the per-author steps when they had to be built from the rows (it may
    end and begin ``db``'s read transaction again, on the same log state), and
    ``built`` is steps an earlier call built from these same rows.

    Raises:
        ModelCorruptError: a stored value does not decode or contradicts another.
    """
    source = cut_source(db, cut)
    meta = moments_meta(db)
    if source is None or meta is None or not meta["clean"]:
        return None
    if source == "now":
        return now()  # the store as of the cut is the store now
    if not _settled(db, cut):
        return None
    steps = built
    if steps is None:
        try:
            steps = stored_people_steps(db, cut)
        except ModelCorruptError:
            steps = None  # built again from the rows below, and stored anew
    if steps is None:
        steps = people_steps_of(db)
        keep(steps)
    heads = _head_counts(db, cut, heads_at(db, cut))
    return totals_at(steps, cut), heads


def _settled(db: sqlite3.Connection, cut: int) -> bool:
    """Whether every decision whose fields change with time equals its final row
    at ``cut``, or does not exist yet then (and, if a placeholder now, has no
    supersedes edge that a recorded time would wrongly let in)."""
    for g, stable, steps in db.execute("SELECT g, stable, steps FROM at_dec"):
        try:
            found = marshal.loads(steps)
            first = int(found[0][0])
        except (ValueError, EOFError, TypeError, IndexError) as exc:
            raise ModelCorruptError(
                "a changing decision's steps do not decode"
            ) from exc
        if first <= cut < stable:
            return False
        if cut < first:
            row = db.execute(
                "SELECT hash, supersedes FROM dec WHERE ix = ?", (g,)
            ).fetchone()
            if row is None:
                raise ModelCorruptError("a changing decision's row is missing")
            if not row[0] and row[1] is not None:
                return False
    return True


def _head_counts(
    db: sqlite3.Connection, cut: int, held: Sequence[tuple[int, Sequence[int]]]
) -> list[HeadCounts]:
    """Per author with a real head at ``cut``: in force, in force and superseded,
    contested elements held (``held``: each element's number and heads then)."""
    per: dict[int, list[int]] = {}
    for eid, gs in held:
        for g in gs:
            per.setdefault(g, []).append(eid)
    contested = {eid for eid, gs in held if len(gs) > 1}
    author_of: dict[int, str] = {}
    rows_seen = 0
    heads = sorted(per)
    for part in batches(heads):
        marks = ",".join("?" * len(part))
        for ix, author, real in db.execute(
            f"SELECT ix, author, hash != '' FROM dec WHERE ix IN ({marks})", part
        ):
            rows_seen += 1
            if real:  # a placeholder head counts for no one
                author_of[ix] = author
    if rows_seen != len(per):
        raise ModelCorruptError("a head names a decision row that is missing")
    gone = _superseded_by_then(db, cut, heads)
    rows: dict[str, list[Any]] = {}
    for g, author in author_of.items():
        row = rows.get(author)
        if row is None:
            row = rows[author] = [0, 0, set()]
        row[0] += 1
        row[1] += g in gone
        row[2].update(e for e in per[g] if e in contested)
    return [(a, n, both, len(on)) for a, (n, both, on) in rows.items()]


def _superseded_by_then(
    db: sqlite3.Connection, cut: int, heads: Sequence[int]
) -> set[int]:
    """The heads some superseder of which is recorded by ``cut`` (a NULL time being
    Go's zero time); a superseder with no row counts for nothing.

    One join per batch, in SQLite: decoding each head's ``superseded_by`` list and
    fetching its superseders' rows in Python cost 0.3 s for the 100k heads of the
    10M store, most of them superseded later than a cut in the middle of history.
    A list that does not decode fails the query (the time index answers then).
    """
    gone: set[int] = set()
    for part in batches(heads):
        marks = ",".join("?" * len(part))
        gone.update(
            int(ix)
            for (ix,) in db.execute(
                "SELECT DISTINCT h.ix FROM dec h, json_each(h.superseded_by) j"
                " JOIN dec s ON s.ix = j.value"
                f" WHERE h.ix IN ({marks}) AND coalesce(s.time, ?) <= ?",
                (*part, ZERO_TIME, cut),
            )
        )
    return gone
