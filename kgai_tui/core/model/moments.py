"""``as-of`` from the model: names, links, heads and conflicts at a cut, from disk.

The answer at a cut (spec 6.6, 14.8: the hash-verified events recorded by then,
replayed in canonical order) comes from one of two places here, else from nowhere
(the caller answers from the model's time index and stores the moments for next
time, :mod:`kgai_tui.core.model.moments_write`):

* **the moments**: per element its record-low touches and its heads as a step
  function of time; per link when it is alive; the few decisions whose fields
  change with time. The heads and links at a cut come from a checkpoint and one
  block of changes (:mod:`kgai_tui.core.model.frames`), the touches from each
  element's short list; a read then fetches the head decisions' rows. An
  append moves them along (:mod:`kgai_tui.core.model.moments_append`): cuts before
  the earliest time it added stay exact; when everything it added was recorded at
  or after the latest time before, the state after it is a new step at its latest
  time; the cuts in between are a "gap" the moments do not answer.
* **the current tables**: at or after the latest recorded time in the log, when no
  event was ever left out of the replay but kept by as-of (no decision-id gate
  failure, no unparsable time), the store as of the cut is the store now.

No NumPy and no NetworkX: ~10k elements at 1M decisions cost a few tens of ms.
"""

from __future__ import annotations

import marshal
import sqlite3
from collections.abc import Iterable, Sequence
from typing import Any, Final

from kgai_tui.core.model.frames import HEADS, LINKS, UNSET, values_at
from kgai_tui.core.model.rows import ModelCorruptError

__all__ = [
    "FOREVER",
    "MOMENTS_KEY",
    "cut_source",
    "elements_at",
    "fields_of",
    "heads_at",
    "moment_keys",
    "moments_meta",
    "moments_obj",
    "touch_at",
]

#: The ``meta`` key of the moments' state: ``{decisions, top, clean, gaps}``: how
#: many decision rows they know, the latest recorded time, whether every event is in
#: the replay too, and the ``[lo, hi)`` ranges of cuts they do not describe.
MOMENTS_KEY: Final = "moments"
_KEYS: Final = frozenset({"decisions", "top", "clean", "gaps"})
#: ``hi`` of a gap no later append has closed.
FOREVER: Final = 2**63 - 1
_CHUNK: Final = 5000


def moments_meta(db: sqlite3.Connection) -> dict[str, Any] | None:
    """The moments' state, or ``None`` when the model holds none (or holds an
    earlier layout's).

    Raises:
        ModelCorruptError: it does not decode.
    """
    hit = db.execute("SELECT v FROM meta WHERE k = ?", (MOMENTS_KEY,)).fetchone()
    if hit is None:
        return None
    try:
        value = marshal.loads(hit[0])
    except (ValueError, EOFError, TypeError) as exc:
        raise ModelCorruptError("the moments' state does not decode") from exc
    if not isinstance(value, dict):
        raise ModelCorruptError("the moments' state is not a dict")
    if not value.keys() >= _KEYS:
        return None  # an earlier layout's: the next whole-store as-of rewrites them
    return value


def moments_obj(db: sqlite3.Connection, cut: int, at: str) -> dict[str, Any] | None:
    """The ``as-of`` object at ``cut`` (Unix seconds; ``at`` its RFC3339 text), or
    ``None`` when the model cannot answer it (no moments, or they do not cover it).

    Raises:
        ModelCorruptError: a stored value does not decode or contradicts another.
    """
    source = cut_source(db, cut)
    if source is None:
        return None
    names, links, heads, conflicts = _current(db) if source == "now" else _at(db, cut)
    return {
        "ok": True,
        "at": at,
        "elements": names or None,
        "links": links or None,
        "heads": heads or None,
        "conflicts": conflicts or None,
    }


def moment_keys(db: sqlite3.Connection, cut: int) -> tuple[list[str], list[str]] | None:
    """The ids of the elements and of the decisions in force at ``cut`` (what a
    search as of then keeps), each sorted; ``None`` when the moments do not cover it.

    Raises:
        ModelCorruptError: a stored value does not decode or contradicts another.
    """
    source = cut_source(db, cut)
    if source is None:
        return None
    held: set[int] = set()
    if source == "now":
        elements = [str(e) for (e,) in db.execute("SELECT id FROM el")]
        held.update(int(ix) for (ix,) in db.execute("SELECT DISTINCT ix FROM head"))
    else:
        present, entries = elements_at(db, cut)
        elements = [eid for eid, _, _ in present.values()]
        held.update(g for e in entries for g in e[3])
    fields = fields_of(db, held)
    return sorted(elements), sorted(fields[g][0] for g in held)


def cut_source(db: sqlite3.Connection, cut: int) -> str | None:
    """Where the answer at ``cut`` comes from: ``"now"`` (the current tables),
    ``"past"`` (the moments), or ``None`` (not from this model)."""
    meta = moments_meta(db)
    if meta is None:
        return None
    top = meta["top"]
    if meta["clean"] and (top is None or cut >= top):
        return "now"
    if not any(lo <= cut < hi for lo, hi in meta["gaps"]):
        return "past"
    return None


# ---------------------------------------------------------------------- decisions


def fields_of(
    db: sqlite3.Connection, gs: Iterable[int]
) -> dict[int, tuple[str, str, int]]:
    """``ix -> (id, title, lamport)`` of the given decision rows."""
    wanted = sorted(set(gs))
    out: dict[int, tuple[str, str, int]] = {}
    for i in range(0, len(wanted), _CHUNK):
        part = wanted[i : i + _CHUNK]
        marks = ",".join("?" * len(part))
        for ix, did, title, lam in db.execute(
            f"SELECT ix, id, title, lamport FROM dec WHERE ix IN ({marks})",
            part,
        ):
            out[ix] = (did, title, lam)
    if len(out) != len(wanted):
        raise ModelCorruptError("a head names a decision row that is missing")
    return out


def _head_rows(
    entries: Sequence[tuple[str, str, str, Sequence[int]]],
    fields: dict[int, tuple[str, str, int]],
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Heads rows (newest first within one) and the conflicts among them."""
    heads: list[dict[str, Any]] = []
    conflicts: list[dict[str, Any]] = []
    for eid, kind, name, gs in entries:
        if len(gs) == 1:  # nearly every element: no order to make, no conflict
            did, title, _ = fields[gs[0]]
            heads.append(
                {
                    "element_id": eid,
                    "heads": [did],
                    "kind": kind,
                    "name": name,
                    "titles": [title],
                }
            )
            continue
        order = sorted(gs, key=lambda g: (-fields[g][2], fields[g][0]))
        ids = [fields[g][0] for g in order]
        titles = [fields[g][1] for g in order]
        heads.append(
            {
                "element_id": eid,
                "heads": ids,
                "kind": kind,
                "name": name,
                "titles": titles,
            }
        )
        if len(order) > 1:
            conflicts.append(
                {
                    "element_id": eid,
                    "heads": [i for i in ids if i],
                    "kind": kind,
                    "name": name,
                    "titles": [t for t in titles if t],
                }
            )
    return heads, conflicts


Parts = tuple[
    list[str], list[dict[str, str]], list[dict[str, Any]], list[dict[str, Any]]
]


def _sorted(
    elements: Iterable[tuple[str, str]], links: list[tuple[str, str, str]]
) -> tuple[list[str], list[dict[str, str]]]:
    """Element names ascending (duplicates kept) and links by (from, kind, to) names."""
    links.sort()
    return (
        sorted(name for _, name in elements),
        [{"from": f, "kind": k, "to": t} for f, k, t in links],
    )


# ---------------------------------------------------------------------- now


def _current(db: sqlite3.Connection) -> Parts:
    """The store as it is: the element table, the links, the heads.

    Names come from the element rows' first columns (their long shapes lists,
    stored after them, are never read) and heads from the ``head`` table (the
    ``el.heads`` lists, one row each): at 10M decisions reading whole element rows
    costs seconds.
    """
    named: dict[str, tuple[str, str]] = {
        eid: (kind, name)
        for eid, kind, name in db.execute("SELECT id, kind, name FROM el")
    }
    held: dict[str, list[int]] = {}
    for eid, ix in db.execute("SELECT eid, ix FROM head"):
        held.setdefault(eid, []).append(ix)
    entries: list[tuple[str, str, str, Sequence[int]]] = []
    for eid in sorted(held):
        if eid not in named:
            raise ModelCorruptError("a head names an element that is missing")
        entries.append((eid, *named[eid], held[eid]))
    rows = []
    for src, dst, key in db.execute("SELECT src, dst, key FROM link"):
        if src not in named or dst not in named:
            raise ModelCorruptError("a link names an element that is missing")
        rows.append((named[src][1], key, named[dst][1]))
    names, links = _sorted(named.values(), rows)
    fields = fields_of(db, (g for e in entries for g in e[3]))
    return (names, links, *_head_rows(entries, fields))


# ---------------------------------------------------------------------- the past


def touch_at(lows: list[Any], cut: int) -> tuple[str, str] | None:
    """Kind and name at the element's first included touch (record lows: times
    fall along the list), or ``None`` when it was not yet touched."""
    if lows[-4] > cut:
        return None
    i = 0
    while lows[i] > cut:
        i += 4
    return lows[i + 2], lows[i + 3]


def elements_at(
    db: sqlite3.Connection, cut: int
) -> tuple[dict[int, tuple[str, str, str]], list[tuple[str, str, str, Sequence[int]]]]:
    """The elements touched by ``cut`` (by element number: id, kind, name) and those
    holding heads then, in id order, with their head decision rows."""
    heads = dict(heads_at(db, cut))
    present: dict[int, tuple[str, str, str]] = {}
    entries: list[tuple[str, str, str, Sequence[int]]] = []
    for n, eid, touch in db.execute("SELECT n, eid, touch FROM at_el"):
        got = touch_at(marshal.loads(touch), cut)
        if got is None:
            continue
        present[n] = (eid, *got)
        gs = heads.get(n)
        if gs is not None:
            entries.append((eid, *got, gs))
    entries.sort(key=lambda e: e[0])
    return present, entries


def heads_at(db: sqlite3.Connection, cut: int) -> list[tuple[int, Sequence[int]]]:
    """``(element number, head decision rows)`` of each element holding heads at
    ``cut``, in number order: what :func:`elements_at` gives without reading the
    elements (an element holds a head only once touched)."""
    heads = values_at(db, HEADS, cut)
    held = [(n, v) for n, v in enumerate(heads) if v != UNSET and v != -1]
    multi = _multi(db, [-2 - v for _, v in held if v < -1])
    return [(n, (v,) if v >= 0 else multi[-2 - v]) for n, v in held]


def _at(db: sqlite3.Connection, cut: int) -> Parts:
    """The store at a past cut, from the moments."""
    present, entries = elements_at(db, cut)
    alive = values_at(db, LINKS, cut)
    known = len(alive)
    rows = []
    for i, src, dst, kind in db.execute("SELECT id, src, dst, kind FROM at_link"):
        if i < known and alive[i] == 1:
            if src not in present or dst not in present:
                raise ModelCorruptError("a link alive before its ends were touched")
            rows.append((present[src][2], kind, present[dst][2]))
    names, links = _sorted(((k, n) for _, k, n in present.values()), rows)
    fields = fields_of(db, (g for e in entries for g in e[3]))
    _patch(db, cut, fields)
    return (names, links, *_head_rows(entries, fields))


def _multi(db: sqlite3.Connection, wanted: list[int]) -> dict[int, tuple[int, ...]]:
    """The head sets of elements holding several heads, by their stored number."""
    out: dict[int, tuple[int, ...]] = {}
    if wanted:
        for i, gs in db.execute("SELECT i, gs FROM at_multi"):
            out[i] = marshal.loads(gs)
    if any(i not in out for i in wanted):
        raise ModelCorruptError("a head set is missing")
    return out


def _patch(
    db: sqlite3.Connection, cut: int, fields: dict[int, tuple[str, str, int]]
) -> None:
    """Give the decisions whose fields changed after ``cut`` their fields then."""
    for g, stable, steps in db.execute("SELECT g, stable, steps FROM at_dec"):
        if g not in fields or cut >= stable:
            continue
        found = [s for s in marshal.loads(steps) if s[0] <= cut]
        if found:
            _, title, lamport = found[-1]
            fields[g] = (fields[g][0], title, lamport)
