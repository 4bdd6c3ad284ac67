"""The explorer's timeline over the model's rows: streamed queries, no decision row kept.

The timeline orders and filters every recorded decision. Read through
:class:`~kgai_tui.core.model.rows.DecRows` that would decode and keep every row
(over a gigabyte at a million decisions), so these reads ask SQLite for the few
columns they need and keep plain integers: the order, each decision's time in an
``array``, and the index sets a filter needs.

Every answer equals :class:`~kgai_tui.core.reads.view.KgView`'s over the replayed
projection (a property test holds them to it): SQLite compares text byte by byte,
which for UTF-8 is Python's code point order.
"""

from __future__ import annotations

import sqlite3
from array import array
from collections.abc import Iterable, Iterator
from typing import Final

import orjson

from kgai_tui.core.model.rows import ModelCorruptError, storable

__all__ = [
    "NO_TIME",
    "Columns",
    "stamps_of",
    "timeline_columns",
    "timeline_keep",
]

#: The ``times`` entry of a decision with no recorded time (a stub, Go's zero time).
NO_TIME: Final = -(2**63)

_RECORDED: Final = "FROM dec WHERE hash != ''"


Columns = tuple[
    list[int], "array[int]", frozenset[int], list[str], list[str], list[str]
]
"""``(order, times, heads, writers, authors, kinds)``: every recorded decision by
time (none last), lamport, id; each decision's time by index (:data:`NO_TIME` for
none); every decision in force somewhere; the distinct install ids and authors of
recorded decisions and the kinds of the elements they shape (no ``""``), sorted."""


def timeline_columns(db: sqlite3.Connection, count: int) -> Columns:
    """Order, times and filter choices in a few streamed queries (``count``: the
    model's decision rows)."""
    times = array("q", [NO_TIME]) * count
    order: list[int] = []
    for ix, stamp in db.execute(
        f"SELECT ix, time {_RECORDED}"
        " ORDER BY time IS NULL, coalesce(time, 0), lamport, id"
    ):
        if not 0 <= ix < count:
            raise ModelCorruptError("a decision index is out of range")
        order.append(ix)
        if stamp is not None:
            times[ix] = stamp
    heads = frozenset(ix for (ix,) in db.execute("SELECT DISTINCT ix FROM head"))
    # The people tables count recorded decisions per author and per (author,
    # install): a few hundred rows, where the decision rows are a million.
    writers = _strings(
        db, "SELECT DISTINCT install FROM person_writer WHERE n > 0 ORDER BY install"
    )
    authors = _strings(
        db, "SELECT author FROM person WHERE decisions > 0 ORDER BY author"
    )
    kinds = _strings(
        db,
        "SELECT DISTINCT kind FROM el WHERE shapes IS NOT NULL AND kind != ''"
        " AND EXISTS (SELECT 1 FROM json_each(el.shapes) AS j"
        "  JOIN dec ON dec.ix = json_extract(j.value, '$[0]') WHERE dec.hash != '')"
        " ORDER BY kind",
    )
    return order, times, heads, writers, authors, kinds


def timeline_keep(
    db: sqlite3.Connection,
    order: list[int],
    heads: frozenset[int],
    writer: str | None,
    author: str | None,
    kind: str | None,
    status: str | None,
) -> list[int]:
    """The decisions of ``order`` that pass the filters, in that order
    (:meth:`~kgai_tui.core.reads.view.KgView.select`'s meaning for each)."""
    keep: set[int] | None = None
    if writer is not None or author is not None:
        if not storable(writer or "") or not storable(author or ""):
            return []
        where, args = [], []
        for column, value in (("install", writer), ("author", author)):
            if value is not None:
                where.append(f"{column} = ?")
                args.append(value)
        keep = {
            ix
            for (ix,) in db.execute(
                f"SELECT ix {_RECORDED} AND " + " AND ".join(where), args
            )
        }
    if kind is not None:
        if not storable(kind):
            return []
        shaping = {ix for ix, _ in _shapers(db, "WHERE kind = ?", (kind,))}
        keep = shaping if keep is None else keep & shaping
    if status in ("head", "superseded", "dead"):
        keep = _status(db, order, heads, status, keep)
    if keep is None:
        return list(order)
    return [ix for ix in order if ix in keep]


def _status(
    db: sqlite3.Connection,
    order: list[int],
    heads: frozenset[int],
    status: str,
    keep: set[int] | None,
) -> set[int]:
    if status == "head":
        return set(heads) if keep is None else keep & heads
    # A dead end shaped something and has authority nowhere.
    shaped: set[int] = set()
    authority: set[int] = set()
    for ix, has in _shapers(db, "WHERE shapes IS NOT NULL", ()):
        shaped.add(ix)
        if has:
            authority.add(ix)
    dead = shaped - authority
    chosen = keep if keep is not None else set(order)
    if status == "dead":
        return chosen & dead
    return chosen - heads - dead  # superseded


def _shapers(
    db: sqlite3.Connection, where: str, args: tuple[str, ...]
) -> Iterator[tuple[int, bool]]:
    """``(index, authority)`` of the decisions shaping the elements ``where``
    picks, from the elements' ``[[index, authority], ...]`` lists."""
    for (blob,) in db.execute(f"SELECT shapes FROM el {where}", args):
        if blob is None:
            continue
        try:
            for ix, has in orjson.loads(blob):
                yield int(ix), bool(has)
        except (orjson.JSONDecodeError, TypeError, ValueError) as exc:
            raise ModelCorruptError("an element's shapes do not decode") from exc


def _strings(db: sqlite3.Connection, sql: str) -> list[str]:
    return [str(value) for (value,) in db.execute(sql)]


def stamps_of(times: array[int], rows: Iterable[int]) -> list[int]:
    """The recorded times of ``rows`` (from :func:`timeline_columns`), skipping
    those with none."""
    return [t for t in (times[i] for i in rows) if t != NO_TIME]
