"""The export's rows read from the model's tables in print order, as they are printed.

At a million decisions the export is 300 MB of JSON; holding its rows cost 1.4 GB.
Here every part comes out of SQLite already sorted, a chunk at a time:

* elements by id: the ``el`` table's key;
* links by (from, kind, to): SQLite sorts the few link rows;
* decisions by id: one table scan through SQLite's sorter (it keeps a few MB and
  spills to a temporary file), not the ``dec_id`` index, whose row lookups in random
  order cost twice as long;
* shapes by decision id, then element id: each element's ``(decision row,
  authority)`` pairs, read before anything is printed (so a list that does not
  decode sends the export to the whole store before its first byte), sorted as
  numbers once the decisions pass has given every decision row its rank among the
  ids; the ids are then read again in id order from the ``dec_id`` index alone.

Rows travel as the dicts the export prints (kg's field names); the model layer does
not import the reads (:mod:`kgai_tui.core.reads.export` prints them).
"""

from __future__ import annotations

import functools
import re
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any, Final

import numpy as np

from kgai_tui.core.errors import KgaiError
from kgai_tui.core.model.rows import ModelCorruptError

__all__ = ["ModelExport"]

#: Rows fetched from SQLite at a time.
_BATCH: Final = 8192
_BOOL: Final = (False, True)


#: An element's shapes list as the model writes it (``model.build.el_row``):
#: ``[[decision row, 0 or 1], ...]``, digits only.
_PAIRS: Final = re.compile(r"\[(?:\[[0-9]{1,18},[01]\](?:,\[[0-9]{1,18},[01]\])*)?\]")
_BRACKETS: Final = str.maketrans("", "", "[]")


def _numbers(eid: str, shaped: str) -> str:
    """An element's shapes list as ``row,authority,row,authority...``, checked."""
    if type(shaped) is not str or _PAIRS.fullmatch(shaped) is None:
        raise ModelCorruptError(f"the shapes of {eid!r} do not decode")
    return shaped.translate(_BRACKETS)


def _guarded(
    part: Callable[[ModelExport], Iterator[list[dict[str, Any]]]],
) -> Callable[[ModelExport], Iterator[list[dict[str, Any]]]]:
    """A part whose file fails to read once printing began: one clear error (the
    export cannot fall back to the whole store half-way through its bytes)."""

    @functools.wraps(part)
    def rows(self: ModelExport) -> Iterator[list[dict[str, Any]]]:
        try:
            yield from part(self)
        except (sqlite3.DatabaseError, ModelCorruptError) as exc:
            raise KgaiError(
                f"the read model failed during the export ({exc}); "
                "the output is incomplete: run the export again"
            ) from exc

    return rows


class ModelExport:
    """The four export parts of the model open on ``db`` (one read transaction).

    Made by :meth:`check`, which reads the element rows and their shapes lists
    and raises before any part is iterated when they contradict the decision rows.
    Each part can be iterated again (the queries run again, in the same
    transaction); :meth:`shapes` needs :meth:`decisions` iterated first.
    """

    def __init__(
        self,
        db: sqlite3.Connection,
        decisions: int,
        elements: list[tuple[str, str, str, str]],
        pairs: tuple[np.ndarray, np.ndarray, np.ndarray],
    ) -> None:
        """Hold the checked element rows and the shapes as three arrays
        (decision row, element rank, authority); see :meth:`check`."""
        self._db = db
        self._decisions = decisions
        self._elements = elements
        self._pairs = pairs
        self._rank: np.ndarray | None = None

    @classmethod
    def check(cls, db: sqlite3.Connection, decisions: int) -> ModelExport:
        """The export of the model holding ``decisions`` decision rows.

        Raises:
            ModelCorruptError: decision rows are missing, or a shapes list is
                malformed or names a decision row that does not exist.
            sqlite3.DatabaseError: the file does not read.
        """
        count, low, high = db.execute(
            "SELECT count(*), min(ix), max(ix) FROM dec"
        ).fetchone()
        # Unique indices from 0 to n - 1, n of them: every row.
        if count != decisions or (count and (low, high) != (0, decisions - 1)):
            raise ModelCorruptError("decision rows are missing")
        elements: list[tuple[str, str, str, str]] = []
        texts: list[str] = []
        counts: list[int] = []
        for eid, kind, name, props, shaped in db.execute(
            "SELECT id, kind, name, props, shapes FROM el ORDER BY id"
        ):
            elements.append((eid, kind, name, props))
            text = "" if shaped is None else _numbers(eid, shaped)
            if text:
                texts.append(text)
            counts.append(text.count(",") // 2 + 1 if text else 0)
        # One parse of every pair, in C: "12,1,15,0,..." (the lists were checked).
        table = (
            np.fromstring(",".join(texts), dtype=np.int64, sep=",")
            if texts
            else np.zeros(0, dtype=np.int64)
        ).reshape(-1, 2)
        rows = table[:, 0]
        if len(rows) and rows.max() >= decisions:  # digits only: never negative
            raise ModelCorruptError("a shapes list names a missing decision row")
        arrays = (
            rows,
            np.repeat(np.arange(len(elements), dtype=np.int64), counts),
            (table[:, 1] != 0).astype(np.int8),
        )
        return cls(db, decisions, elements, arrays)

    def elements(self) -> Iterator[list[dict[str, Any]]]:
        """Elements by id: ``{id, kind, name, props}``."""
        rows = self._elements
        for i in range(0, len(rows), _BATCH):
            yield [
                {"id": e, "kind": k, "name": n, "props": p}
                for e, k, n, p in rows[i : i + _BATCH]
            ]

    @_guarded
    def links(self) -> Iterator[list[dict[str, Any]]]:
        """Links by from, kind, to: ``{f, k, t}``."""
        cursor = self._db.execute(
            "SELECT src, key, dst FROM link ORDER BY src, key, dst"
        )
        while batch := cursor.fetchmany(_BATCH):
            yield [{"f": f, "k": k, "t": t} for f, k, t in batch]

    @_guarded
    def decisions(self) -> Iterator[list[dict[str, Any]]]:
        """Decisions by id: ``{id, lamport, title}``; notes each row's rank.

        Raises:
            ModelCorruptError: the rows changed count (they cannot, in one
                transaction, unless the file does not read right).
        """
        n = self._decisions
        rank = np.full(n, -1, dtype=np.int64)
        seen = 0
        cursor = self._db.execute(
            "SELECT ix, id, lamport, title FROM dec NOT INDEXED ORDER BY id"
        )
        while batch := cursor.fetchmany(_BATCH):
            if seen + len(batch) > n:
                raise ModelCorruptError("decision rows changed during the export")
            rank[[row[0] for row in batch]] = np.arange(seen, seen + len(batch))
            seen += len(batch)
            yield [{"id": d, "lamport": lam, "title": t} for _, d, lam, t in batch]
        if seen != n or (n and rank.min() < 0):
            raise ModelCorruptError("decision rows changed during the export")
        self._rank = rank

    @_guarded
    def shapes(self) -> Iterator[list[dict[str, Any]]]:
        """Shapes by decision id, then element id: ``{authority, decision,
        element}``."""
        rank = self._rank
        if rank is None:
            raise RuntimeError("shapes are printed after the decisions")
        rows, elements, auths = self._pairs
        pair_rank = rank[rows]
        order = np.lexsort((elements, pair_rank))
        by_rank = pair_rank[order]
        element_at = elements[order]
        auth_at = auths[order]
        ids = [row[0] for row in self._elements]
        # The ids in rank order, a batch at a time; each batch's pairs are a slice.
        cursor = self._db.execute("SELECT id FROM dec ORDER BY id")
        low = 0
        while batch := cursor.fetchmany(_BATCH):
            high = low + len(batch)
            a, b = np.searchsorted(by_rank, (low, high)).tolist()
            if a < b:
                held = [row[0] for row in batch]
                yield [
                    {"authority": _BOOL[au], "decision": held[r], "element": ids[e]}
                    for r, e, au in zip(
                        (by_rank[a:b] - low).tolist(),
                        element_at[a:b].tolist(),
                        auth_at[a:b].tolist(),
                        strict=True,
                    )
                ]
            low = high
        if low != self._decisions:
            raise ModelCorruptError("decision ids changed during the export")
