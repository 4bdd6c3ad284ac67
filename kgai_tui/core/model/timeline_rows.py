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
from collections.abc import Iterable, Iterator, Sequence
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
    "array[int]", "array[int]", frozenset[int], list[str], list[str], list[str]
]
"""``(order, times, heads, writers, authors, kinds)``: every recorded decision by
time (none last), lamport, id; each decision's time by index (:data:`NO_TIME` for
none); every decision in force somewhere; the distinct install ids and authors of
recorded decisions and the kinds of the elements they shape (no ``""``), sorted."""


def timeline_columns(db: sqlite3.Connection, count: int) -> Columns:
    """Order, times and filter choices in a few streamed queries (``count``: the
    model's decision rows)."""
    times = array("q", [NO_TIME]) * count
    order = array("q")  # 8 bytes a decision, where a list of ints costs 36
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
    count: int,
    order: Sequence[int],
    heads: frozenset[int],
    filters: tuple[str | None, str | None, str | None, str | None],
) -> array[int]:
    """The decisions of ``order`` by writer, author, element kind and status, in
    that order (:meth:`~kgai_tui.core.reads.view.KgView.select`'s meaning for each;
    an unknown status matches every decision).

    Each filter marks the decision indices it keeps in a byte mask (``count``
    bytes, the model's decision rows): at ten million decisions a set of the
    kept indices would cost over half a gigabyte.
    """
    writer, author, kind, status = filters
    if not all(storable(f or "") for f in filters):
        return array("q")
    masks: list[bytes | bytearray] = []
    try:
        if writer is not None or author is not None:
            where, args = [], []
            for column, value in (("install", writer), ("author", author)):
                if value is not None:
                    where.append(f"{column} = ?")
                    args.append(value)
            sql = f"SELECT ix {_RECORDED} AND " + " AND ".join(where)
            masks.append(_mask(count, (ix for (ix,) in db.execute(sql, args))))
        if kind is not None:
            shaping = _shapers(db, "WHERE kind = ?", (kind,))
            masks.append(_mask(count, (ix for ix, _ in shaping)))
        if status == "head":
            masks.append(_mask(count, heads))
        elif status in ("superseded", "dead"):
            # The legend's partition (core/reads/legend.py): a head of no element,
            # replaced by another decision or not.
            replaced = _replaced(db, count)
            if status == "dead":
                replaced = bytearray(replaced.translate(_FLIP))
            for ix in heads:
                replaced[ix] = 0
            masks.append(bytes(replaced))
    except IndexError as exc:
        raise ModelCorruptError("a decision index is out of range") from exc
    if not masks:
        return array("q", order)
    keep = masks[0]
    for other in masks[1:]:
        both = int.from_bytes(keep, "little") & int.from_bytes(other, "little")
        keep = both.to_bytes(count, "little")
    return array("q", (ix for ix in order if keep[ix]))


#: Turns a 0/1 byte mask into its complement (``bytes.translate``).
_FLIP: Final = bytes(1 if f == 0 else 0 for f in range(256))


def _mask(count: int, indices: Iterable[int]) -> bytes:
    mask = bytearray(count)
    for ix in indices:
        mask[ix] = 1
    return bytes(mask)


def _replaced(db: sqlite3.Connection, count: int) -> bytearray:
    """Per decision index: 1 when another decision supersedes it, else 0."""
    return bytearray(
        _mask(
            count,
            (
                ix
                for (ix,) in db.execute(
                    "SELECT ix FROM dec WHERE superseded_by IS NOT NULL"
                )
            ),
        )
    )


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


def stamps_of(times: array[int], rows: Iterable[int]) -> array[int]:
    """The recorded times of ``rows`` (from :func:`timeline_columns`), skipping
    those with none."""
    return array("q", (t for t in map(times.__getitem__, rows) if t != NO_TIME))
