"""Whether one decision was in force, or one element present, at a cut: a row at a time.

A search as of a moment keeps only the decisions in force and the elements that
existed then. Listing them all costs what the store holds (at 10M decisions, the
ids of 100k heads and 100k elements: ~0.3 s of every ``search --as-of``), while a
search ranks only a few candidates. So the search asks about each candidate
instead: by the 16 hex digits its key is made of (``d_`` or ``el_`` and the id's
first 64 bits), through the ``dec`` and ``at_el`` id indexes, against the heads at
the cut (:func:`~kgai_tui.core.model.moments.heads_at`, one checkpoint and one
block) or, from the latest recorded time on, the current tables.

Decisions in force always carry a well-formed id (``d_`` and 24 hex digits: they
passed the decision-id gate; only a placeholder a ``supersedes`` names may have
another, and a placeholder shapes nothing). Elements may carry any id a line
gives them; those whose id is not ``el_`` and 16 hex digits are listed by
:meth:`MomentProbe.odd_elements` (a scan of the id index, in SQLite).
"""

from __future__ import annotations

import marshal
import sqlite3
from typing import Final

from kgai_tui.core.model.moments import cut_source, heads_at, touch_at
from kgai_tui.core.model.rows import ModelCorruptError

__all__ = ["PROBE_FAILURES", "MomentProbe", "moment_probe"]

#: What a probe's question raises when a model row does not decode: the asker then
#: lists the cut another way.
PROBE_FAILURES: Final = (
    sqlite3.Error,
    ModelCorruptError,
    ValueError,
    TypeError,
    KeyError,
    IndexError,
    EOFError,
)

#: Sorts after every character an id may continue with (SQLite compares UTF-8).
_PAST: Final = "\U0010ffff"
_HEX16: Final = "[0-9a-f]" * 16
#: How the search's keys read an element id (``el_`` and 16 hex digits, then any).
_EL_GLOB: Final = "el_" + _HEX16 + "*"


class MomentProbe:
    """Point questions about one cut of one model read (its open transaction)."""

    def __init__(self, db: sqlite3.Connection, cut: int, now: bool) -> None:
        """``now``: the cut is answered by the current tables (see
        :func:`~kgai_tui.core.model.moments.cut_source`), else by the moments."""
        self._db = db
        self._cut = cut
        self._now = now
        self._heads: set[int] | None = None

    def _in_force(self, ix: int) -> bool:
        if self._now:
            hit = self._db.execute("SELECT 1 FROM head WHERE ix = ? LIMIT 1", (ix,))
            return hit.fetchone() is not None
        if self._heads is None:
            self._heads = {g for _, gs in heads_at(self._db, self._cut) for g in gs}
        return ix in self._heads

    def decision_in_force(self, hex16: str) -> bool:
        """Whether a decision whose id starts ``d_<hex16>`` is in force then."""
        low = "d_" + hex16
        return any(
            self._in_force(ix)
            for (ix,) in self._db.execute(
                "SELECT ix FROM dec WHERE id >= ? AND id < ?", (low, low + _PAST)
            )
        )

    def element_present(self, first: str, last: str) -> bool:
        """Whether an element whose id starts ``el_`` and a 16-digit prefix from
        ``first`` to ``last`` (both included) existed then."""
        low, high = "el_" + first, "el_" + last + _PAST
        if self._now:
            hit = self._db.execute(
                "SELECT 1 FROM el WHERE id >= ? AND id < ? LIMIT 1", (low, high)
            )
            return hit.fetchone() is not None
        return any(
            touch_at(marshal.loads(touch), self._cut) is not None
            for (touch,) in self._db.execute(
                "SELECT touch FROM at_el WHERE eid >= ? AND eid < ?", (low, high)
            )
        )

    def odd_elements(self) -> list[str]:
        """The elements present then whose id is not ``el_`` and 16 hex digits."""
        if self._now:
            return [
                eid
                for (eid,) in self._db.execute(
                    "SELECT id FROM el WHERE id NOT GLOB ?", (_EL_GLOB,)
                )
            ]
        return [
            eid
            for eid, touch in self._db.execute(
                "SELECT eid, touch FROM at_el WHERE eid NOT GLOB ?", (_EL_GLOB,)
            )
            if touch_at(marshal.loads(touch), self._cut) is not None
        ]


def moment_probe(db: sqlite3.Connection, cut: int) -> MomentProbe | None:
    """A probe of ``cut``, or ``None`` when the model does not cover it.

    Raises:
        ModelCorruptError: the moments' state does not decode.
    """
    source = cut_source(db, cut)
    if source is None:
        return None
    return MomentProbe(db, cut, source == "now")
