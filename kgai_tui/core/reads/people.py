"""People and staleness: who decided what, what still stands, and what nobody touched.

Both reads work on any :class:`ProjectionView` (the live projection, the model on
disk, the store as of a moment), from the decision columns and the heads alone.

Definitions (docs/cli.md, "people" and "stale"):

* a person is a decision's ``author`` (every writer fills it: the input author or
  the writer's actor); the placeholders a supersedes creates are no one's;
* ``in_force``, ``superseded``, ``dead_ends``: the person's decisions by the one
  legend (:mod:`~kgai_tui.core.reads.legend`): a head of some element; a head of
  none and replaced by another decision; a head of none and never replaced. They
  add up to ``decisions``, and match the timeline's status filter;
* ``elements``: distinct elements the person's decisions shape;
* ``conflicts``: contested elements where one of the person's decisions is a head;
* ``first`` / ``last``: the earliest and latest recorded time (RFC3339, or null);
* ``writers``: the install ids the person wrote from, sorted.

Order: most decisions first, then the author (code points). Stale elements: the
newest decision in force older than the threshold, oldest first, then the id.

:func:`people_obj` counts from every decision's columns (any view, any moment);
:func:`people_of_totals` gives the same answer now from per-author totals and head
counts, which the read model keeps (a few hundred rows instead of every decision).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from kgai_tui.core.errors import UsageError
from kgai_tui.core.gosem.gotext import format_rfc3339
from kgai_tui.core.reads.kg import when_of

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection_view import ProjectionView

__all__ = ["parse_age", "people_now", "people_obj", "people_of_totals", "stale_obj"]

_AGE: Final = re.compile(r"(\d{1,6})([dwh])")
_UNIT: Final = {"h": 3600, "d": 86400, "w": 7 * 86400}


@dataclass(slots=True)
class _Person:
    decisions: int = 0
    in_force: int = 0
    superseded: int = 0
    dead_ends: int = 0
    elements: set[str] = field(default_factory=set)
    conflicts: set[str] = field(default_factory=set)
    first: int | None = None
    last: int | None = None
    writers: set[str] = field(default_factory=set)


def people_obj(p: ProjectionView, as_of: datetime | None = None) -> dict[str, Any]:
    """``{"ok", "as_of", "people"}``: one row per author, in the documented order."""
    heads: dict[int, list[str]] = {}
    for eid, held in p.heads.items():
        for i in held:
            heads.setdefault(i, []).append(eid)
    contested = p.contested
    people: dict[str, _Person] = {}
    columns = zip(
        p.dec_hash,
        p.dec_author,
        p.dec_time,
        p.dec_install,
        p.dec_shapes,
        p.dec_superseded_by,
        strict=True,
    )
    for i, (ev_hash, author, stamp, install, shapes, by) in enumerate(columns):
        if not ev_hash:
            continue  # a placeholder: superseded before it was recorded, no one's
        row = people.get(author)
        if row is None:
            row = people[author] = _Person()
        row.decisions += 1
        held_on = heads.get(i)
        if held_on:
            row.in_force += 1
            row.conflicts.update(e for e in held_on if e in contested)
        elif by:
            row.superseded += 1
        else:
            row.dead_ends += 1
        row.elements.update(shapes)
        if stamp is not None:
            row.first = stamp if row.first is None else min(row.first, stamp)
            row.last = stamp if row.last is None else max(row.last, stamp)
        row.writers.add(install)
    rows: list[dict[str, Any]] = [
        {
            "author": author,
            "decisions": row.decisions,
            "in_force": row.in_force,
            "superseded": row.superseded,
            "dead_ends": row.dead_ends,
            "elements": len(row.elements),
            "conflicts": len(row.conflicts),
            "first": _rfc(row.first),
            "last": _rfc(row.last),
            "writers": sorted(row.writers),
        }
        for author, row in people.items()
    ]
    rows.sort(key=lambda r: (-int(r["decisions"]), str(r["author"])))
    return {
        "ok": True,
        "as_of": None if as_of is None else format_rfc3339(as_of),
        "people": rows,
    }


def people_now(p: ProjectionView) -> dict[str, Any]:
    """:func:`people_obj` now: from the per-author totals when ``p`` keeps them (the
    read model on disk: a few hundred rows), else from every decision."""
    stored = p.stored
    if stored is not None:
        return people_of_totals(*stored.people_parts())
    return people_obj(p)


def people_of_totals(
    totals: Iterable[tuple[str, int, int, int, int | None, int | None, list[str]]],
    heads: Iterable[tuple[str, int, int, int]],
) -> dict[str, Any]:
    """:func:`people_obj` (now) from per-author totals and head counts alone.

    ``totals``: ``(author, decisions, superseded, elements, first, last, writers)``
    per author, writers sorted (what a decision's own row decides; the read model
    keeps these up to date); ``heads``: ``(author, in_force, both, conflicts)`` per
    author with a recorded head, ``both`` being the heads also superseded (on
    another element). By the legend a head counts as in force only, so the
    superseded are ``superseded - both`` and the dead ends the rest:
    ``decisions - superseded - in_force + both``.
    """
    held = {author: (n, both, conflicts) for author, n, both, conflicts in heads}
    rows: list[dict[str, Any]] = []
    for author, decisions, superseded, elements, first, last, writers in totals:
        in_force, both, conflicts = held.get(author, (0, 0, 0))
        rows.append(
            {
                "author": author,
                "decisions": decisions,
                "in_force": in_force,
                "superseded": superseded - both,
                "dead_ends": decisions - superseded - in_force + both,
                "elements": elements,
                "conflicts": conflicts,
                "first": _rfc(first),
                "last": _rfc(last),
                "writers": list(writers),
            }
        )
    rows.sort(key=lambda r: (-int(r["decisions"]), str(r["author"])))
    return {"ok": True, "as_of": None, "people": rows}


def _rfc(stamp: int | None) -> str | None:
    return (
        None if stamp is None else format_rfc3339(datetime.fromtimestamp(stamp, tz=UTC))
    )


def parse_age(text: str) -> int:
    """``180d``, ``4w`` or ``12h`` in seconds.

    Raises:
        UsageError: anything else.
    """
    m = _AGE.fullmatch(text.strip())
    if m is None:
        raise UsageError(
            f"invalid age {text!r}: use a number and a unit, d (days), w (weeks) or "
            "h (hours), e.g. 180d"
        )
    return int(m[1]) * _UNIT[m[2]]


def stale_obj(p: ProjectionView, older_than: int, now: datetime) -> dict[str, Any]:
    """Elements whose newest decision in force is older than ``older_than`` seconds.

    ``{"ok", "now", "older_than_seconds", "stale"}``; each row names the element, that
    decision, its author, when it was recorded and its age in whole days. Heads
    with no recorded time are older than any threshold.
    """
    cut = int(now.timestamp()) - older_than
    rows: list[tuple[int, str, int]] = []
    heads = list(p.heads.items())
    # Every head's row in a few queries (a model on disk), not one per element.
    p.prefetch([i for _, held in heads for i in held])
    for eid, held in heads:
        if not held:
            continue
        known = [t for t in (p.dec_time[i] for i in held) if t is not None]
        latest = max(known) if known else None
        # The newest head: latest time, then the head order (lamport, then id).
        newest = next(
            i for i in p.heads_of(eid) if latest is None or p.dec_time[i] == latest
        )
        if latest is None or latest <= cut:
            rows.append((latest if latest is not None else -(2**62), eid, newest))
    rows.sort()
    out = []
    for latest, eid, i in rows:
        kind, name, _ = p.element(eid) or ("", "", "")
        out.append(
            {
                "element_id": eid,
                "kind": kind,
                "name": name,
                "decision": p.dec_id[i],
                "title": p.dec_title[i],
                "author": p.dec_author[i],
                "when": when_of(p, i),
                "age_days": None
                if latest < 0
                else (int(now.timestamp()) - latest) // 86400,
            }
        )
    return {
        "ok": True,
        "now": format_rfc3339(now),
        "older_than_seconds": older_than,
        "stale": out,
    }
