"""Rows of the read model as the projection's containers, fetched on first use.

The replay and the reads index decision columns by a small integer and look elements
up by id; these classes answer the same operations from SQLite, one row at a time
(or a batch, :meth:`DecRows.prefetch`), and keep every row they fetched or changed so
an update can write exactly those back (:mod:`kgai_tui.core.model.commit`).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Iterator, MutableMapping, Sequence
from typing import Any, Final, overload

import orjson

from kgai_tui.core.errors import KgaiError
from kgai_tui.core.model.schema import DEC_COLUMNS, LIST_COLUMNS

_SELECT_DEC: Final = "SELECT ix, " + ", ".join(DEC_COLUMNS) + " FROM dec"
#: Rows a full-column pass reads per query (:meth:`DecColumn.__iter__`).
_BLOCK: Final = 8192
_LISTS: Final = tuple(i for i, c in enumerate(DEC_COLUMNS) if c in LIST_COLUMNS)
_INT_LISTS: Final = frozenset(
    i for i, c in enumerate(DEC_COLUMNS) if c in ("supersedes", "superseded_by")
)


def batchable(key: object) -> bool:
    """Whether ``key`` may be looked up among others in one query (passed through
    JSON to ``json_each``): a storable string without NUL, which SQLite's text
    functions would not keep whole. Any other key is looked up on its own."""
    return isinstance(key, str) and "\x00" not in key and storable(key)


def storable(key: str) -> bool:
    """Whether ``key`` can be a stored key (every stored string is valid UTF-8; an
    argument with a lone surrogate, from a non-UTF-8 command line, is not)."""
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


class ModelCorruptError(KgaiError):
    """The model's rows contradict each other: it is rebuilt, never believed.

    Found at the open, the model is rebuilt; found later, while a read fetches
    rows another program changed behind an intact seal, the read fails as every
    face reports a core error (one line and exit 1 on the CLI, a failure answer
    from an MCP tool), its message and advice saying what to do."""

    advice = "`kgai-tui rebuild` makes it again from the log"

    def __init__(self, reason: str) -> None:
        super().__init__(f"the read model kept for this store is damaged ({reason})")
        #: What was found, without the sentence around it.
        self.reason = reason


#: What a model that does not read as one raises while a writer that is only
#: housekeeping (the moments, the people steps, a tidy) reads and writes it: the
#: writer gives up, and the next read rebuilds the model.
UNREADABLE_MODEL: Final = (
    sqlite3.Error,
    ModelCorruptError,
    KeyError,
    TypeError,
    ValueError,
)


def _recall_inputs(row: list[Any]) -> tuple[Any, ...]:
    return (row[1], row[2], row[5], tuple(row[10]))


def _listed(value: str | bytes | None) -> list[Any]:
    """A list column's value (``NULL``: empty)."""
    out = [] if value is None else orjson.loads(value)
    if not isinstance(out, list):
        raise ModelCorruptError("a list column holds no list")
    return out


def _decode_row(raw: tuple[Any, ...]) -> list[Any]:
    row = list(raw[1:])
    for i in _LISTS:
        row[i] = _listed(row[i])
    return row


class DecRows:
    """Decision rows by index: the first ``base`` on disk, later ones in memory."""

    def __init__(self, db: sqlite3.Connection, base: int) -> None:
        """Read rows of ``db`` whose indices are below ``base`` (the model's count)."""
        self.db = db
        self.base = base
        self.rows: dict[int, list[Any]] = {}
        self.lengths = [base] * len(DEC_COLUMNS)
        # What recall reads of each row as fetched (title, rationale, summary,
        # shapes): an update compares to find decisions whose scores may change.
        self.orig: dict[int, tuple[Any, ...]] = {}

    def row(self, i: int) -> list[Any]:
        """The row at index ``i`` (fetched once)."""
        row = self.rows.get(i)
        if row is None:
            if not 0 <= i < self.base:
                raise IndexError(i)
            raw = self.db.execute(_SELECT_DEC + " WHERE ix = ?", (i,)).fetchone()
            if raw is None:
                raise ModelCorruptError(f"decision row {i} is missing")
            row = self.rows[i] = self._keep(i, _decode_row(raw))
        return row

    def _keep(self, i: int, row: list[Any]) -> list[Any]:
        self.orig[i] = _recall_inputs(row)
        return row

    def recall_stale(self) -> list[int]:
        """Rows on disk whose recall inputs changed since they were fetched."""
        return sorted(
            i
            for i, before in self.orig.items()
            if _recall_inputs(self.rows[i]) != before
        )

    def prefetch(self, indices: Iterable[int]) -> None:
        """Fetch the rows of ``indices`` not held yet, a block per query, and keep
        them (:meth:`fields` of every column)."""
        rows, base = self.rows, self.base
        missing = sorted({i for i in indices if i not in rows and 0 <= i < base})
        for i, fields in zip(missing, self.fields(missing, DEC_COLUMNS), strict=True):
            rows[i] = self._keep(i, list(fields))

    def fields(
        self, indices: Sequence[int], names: Sequence[str]
    ) -> list[tuple[Any, ...]]:
        """The columns ``names`` of the rows at ``indices``, a tuple each in the
        order asked: a block of rows per query, none of them kept (a row held in
        memory, a write session's, wins).

        Raises:
            IndexError: an index is of no row.
            ModelCorruptError: a row the count promises is missing.
        """
        ks = [DEC_COLUMNS.index(n) for n in names]
        listed = [at for at, k in enumerate(ks) if k in _LISTS]
        held, base = self.rows, self.base
        wanted = sorted({i for i in indices if i not in held})
        if wanted and (wanted[0] < 0 or wanted[-1] >= base):
            raise IndexError(wanted[0] if wanted[0] < 0 else wanted[-1])
        select = f"SELECT ix, {', '.join(names)} FROM dec"
        listed_in = select + " WHERE ix IN (SELECT value FROM json_each(?))"
        between = select + " WHERE ix >= ? AND ix <= ?"
        read: dict[int, tuple[Any, ...]] = {}
        for at in range(0, len(wanted), _BLOCK):
            chunk = wanted[at : at + _BLOCK]
            lo, hi = chunk[0], chunk[-1]
            if hi - lo < 2 * len(chunk):  # dense: a range scan, the rest dropped
                got = self.db.execute(between, (lo, hi)).fetchall()
                if len(got) != hi - lo + 1:
                    raise ModelCorruptError("decision rows are missing")
                if len(chunk) != len(got):
                    keep = set(chunk)
                    got = [raw for raw in got if raw[0] in keep]
            else:
                got = self.db.execute(listed_in, (orjson.dumps(chunk),)).fetchall()
            if len(got) != len(chunk):
                raise ModelCorruptError("decision rows are missing")
            if not listed:
                read.update((raw[0], raw[1:]) for raw in got)
                continue
            for raw in got:
                row = list(raw[1:])
                for p in listed:
                    row[p] = _listed(row[p])
                read[raw[0]] = tuple(row)
        return [
            read[i] if i in read else tuple(held[i][k] for k in ks) for i in indices
        ]

    def column(self, name: str) -> DecColumn:
        """One column as a list-like view."""
        return DecColumn(self, DEC_COLUMNS.index(name))

    def find_many(self, dec_ids: Iterable[str]) -> dict[str, int | None]:
        """:meth:`find` of each id, a block per query (only :func:`batchable`
        ids: a caller looks the others up on their own)."""
        wanted = sorted({d for d in dec_ids if batchable(d)})
        out: dict[str, int | None] = dict.fromkeys(wanted)
        for at in range(0, len(wanted), _BLOCK):
            chunk = orjson.dumps(wanted[at : at + _BLOCK])
            for dec_id, ix in self.db.execute(
                "SELECT id, ix FROM dec WHERE id IN (SELECT value FROM json_each(?))",
                (chunk,),
            ):
                out[dec_id] = int(ix)
        return out

    def find(self, dec_id: str) -> int | None:
        """The index of a decision id on disk, or ``None``."""
        if not storable(dec_id):
            return None
        hit = self.db.execute("SELECT ix FROM dec WHERE id = ?", (dec_id,)).fetchone()
        return None if hit is None else int(hit[0])


class DecColumn(Sequence[Any]):
    """One decision column: indexing, assignment, ``append`` past the end, iteration
    (a :class:`Sequence`, so it reads as the replay's lists do)."""

    def __init__(self, rows: DecRows, k: int) -> None:
        """View field ``k`` of ``rows``."""
        self._rows = rows
        self._k = k

    def __len__(self) -> int:
        return self._rows.lengths[self._k]

    @overload
    def __getitem__(self, i: int) -> Any: ...

    @overload
    def __getitem__(self, i: slice) -> list[Any]: ...

    def __getitem__(self, i: int | slice) -> Any:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        return self._rows.row(i)[self._k]

    def __setitem__(self, i: int, value: Any) -> None:
        self._rows.row(i)[self._k] = value

    def add(self, i: int, value: Any) -> bool:
        """Add ``value`` last to row ``i``'s list field unless it holds it already;
        whether it was added (as
        :meth:`~kgai_tui.core.replay.short_lists.IndexLists.add` does in memory)."""
        row = self._rows.row(i)
        held = row[self._k]
        if value in held:
            return False
        row[self._k] = [*held, value]
        return True

    def append(self, value: Any) -> None:
        """Set the field of the next index (a new decision's row grows column by column)."""
        rows, k = self._rows, self._k
        i = rows.lengths[k]
        row = rows.rows.get(i)
        if row is None:
            row = rows.rows[i] = [None] * len(DEC_COLUMNS)
        row[k] = value
        rows.lengths[k] = i + 1

    def __iter__(self) -> Iterator[Any]:
        """Every value in index order, a block of rows per query.

        One query per row would hand the interpreter lock back and forth a
        million times, and a UI thread that takes it meanwhile makes each row
        wait for it (measured: a 1 s pass took 10 s under the explorer). A block
        comes back as two JSON arrays built by SQLite in one step: the indices,
        checked to be the block's, and the values."""
        rows, k = self._rows, self._k
        name = DEC_COLUMNS[k]
        value = f"json({name})" if k in _LISTS else name
        sql = (
            f"SELECT json_group_array(ix), json_group_array({value})"
            " FROM dec WHERE ix >= ? AND ix < ?"
        )
        held = rows.rows
        for lo in range(0, rows.base, _BLOCK):
            hi = min(lo + _BLOCK, rows.base)
            ixs, values = rows.db.execute(sql, (lo, hi)).fetchone()
            if orjson.loads(ixs) != list(range(lo, hi)):
                raise ModelCorruptError("decision rows are missing or out of order")
            block = orjson.loads(values)
            if k in _LISTS:
                block = [[] if v is None else v for v in block]
            if held:  # rows held in memory (a write session's) win
                for at in range(lo, hi):
                    row = held.get(at)
                    if row is not None:
                        block[at - lo] = row[k]
            yield from block
        for i in range(rows.base, len(self)):
            yield rows.rows[i][k]


class ElRows:
    """Element rows by id: ``[seq, kind, name, props, shapes_seq, shapes, heads_seq,
    heads, max_auth]`` with shapes a dict and heads a set; ``None`` for no element."""

    def __init__(
        self,
        db: sqlite3.Connection,
        create: Callable[[str], list[Any] | None] | None = None,
    ) -> None:
        """Read rows of ``db``; ``create`` makes the row of an element not on disk
        (an update: a node the replay just added), or says there is none."""
        self.db = db
        self.rows: dict[str, list[Any] | None] = {}
        self.new: list[str] = []
        self._create = create

    def prefetch(self, eids: Iterable[str]) -> None:
        """Fetch the stored rows of ``eids`` not held yet, a block per query (as
        :meth:`get` would one by one; an element not stored is left to it)."""
        wanted = sorted({e for e in eids if e not in self.rows and batchable(e)})
        for at in range(0, len(wanted), _BLOCK):
            for raw in self.db.execute(
                "SELECT id, seq, kind, name, props, shapes_seq, shapes, heads_seq,"
                " heads, max_auth FROM el WHERE id IN (SELECT value FROM json_each(?))",
                (orjson.dumps(wanted[at : at + _BLOCK]),),
            ):
                self.rows[raw[0]] = _decode_el(raw[1:])

    def get(self, eid: str) -> list[Any] | None:
        """The row of element ``eid`` (fetched once), or ``None``."""
        if eid in self.rows:
            return self.rows[eid]
        if not storable(eid):
            return None
        raw = self.db.execute(
            "SELECT seq, kind, name, props, shapes_seq, shapes, heads_seq, heads,"
            " max_auth FROM el WHERE id = ?",
            (eid,),
        ).fetchone()
        row = None if raw is None else _decode_el(raw)
        if row is None and self._create is not None:
            row = self._create(eid)
            if row is None:
                return None  # not cached: the replay may add the node later
            self.new.append(eid)
        self.rows[eid] = row
        return row

    def all(self) -> Iterator[tuple[str, list[Any]]]:
        """Every element row in graph order (rows held in memory win)."""
        cursor = self.db.execute(
            "SELECT id, seq, kind, name, props, shapes_seq, shapes, heads_seq, heads,"
            " max_auth FROM el ORDER BY seq"
        )
        rows = self.rows
        for raw in cursor:
            eid = raw[0]
            held = rows.get(eid)
            if held is None:
                held = rows[eid] = _decode_el(raw[1:])
            yield eid, held
        for eid in self.new:
            row = self.rows[eid]
            assert row is not None
            yield eid, row


def _decode_el(raw: tuple[Any, ...]) -> list[Any]:
    """A row as fetched: the shapes and heads stay JSON until first read (:func:`field`)."""
    return list(raw)


def field(row: list[Any], k: int) -> Any:
    """Field ``k`` of an element row, decoding the shapes (5) or heads (7) once."""
    value = row[k]
    if isinstance(value, bytes | str):
        try:
            items = orjson.loads(value)
            if not isinstance(items, list):
                raise ModelCorruptError("an element's list is no list")
            value = {i: bool(a) for i, a in items} if k == 5 else set(items)
        except (orjson.JSONDecodeError, TypeError, ValueError) as exc:
            raise ModelCorruptError("an element row does not decode") from exc
        row[k] = value
    return value


_SHAPES: Final = 5
_HEADS: Final = 7
_SEQ_OF: Final = {_SHAPES: 4, _HEADS: 6}


class ElementField(MutableMapping[str, Any]):
    """``el_shapes`` or ``heads``: a per-element field, keyed like the projection's dict.

    Iteration follows the projection's dict order (the field's ``*_seq`` column);
    assigning a new key gives it the next position.
    """

    def __init__(self, rows: ElRows, field: int, next_seq: int) -> None:
        """View ``field`` (:data:`_SHAPES` or :data:`_HEADS`) of ``rows``."""
        self._rows = rows
        self._field = field
        self._next = next_seq

    def __getitem__(self, eid: str) -> Any:
        row = self._rows.get(eid)
        if row is None or row[self._field] is None:
            raise KeyError(eid)
        return field(row, self._field)

    def __setitem__(self, eid: str, value: Any) -> None:
        row = self._rows.get(eid)
        if row is None:
            raise ModelCorruptError(f"{eid} is not an element of the model")
        if row[self._field] is None:
            row[_SEQ_OF[self._field]] = self._next
            self._next += 1
        row[self._field] = value

    def __delitem__(self, eid: str) -> None:
        raise TypeError("the projection never removes a shapes or heads entry")

    def __contains__(self, eid: object) -> bool:
        if not isinstance(eid, str):
            return False
        row = self._rows.get(eid)
        return row is not None and row[self._field] is not None

    def _ordered(self) -> list[tuple[int, str, Any]]:
        f, s = self._field, _SEQ_OF[self._field]
        return sorted(
            (row[s], eid, field(row, f))
            for eid, row in self._rows.all()
            if row[f] is not None
        )

    def __iter__(self) -> Iterator[str]:
        return (eid for _, eid, _ in self._ordered())

    def __len__(self) -> int:
        return len(self._ordered())

    def items(self) -> Any:
        return [(eid, value) for _, eid, value in self._ordered()]

    def values(self) -> Any:
        return [value for _, _, value in self._ordered()]

    @property
    def next_seq(self) -> int:
        """The position the next new key gets."""
        return self._next


class MaxAuth(MutableMapping[str, int]):
    """Per element, the largest lamport of a decision with authority on it."""

    def __init__(self, rows: ElRows) -> None:
        """View the ``max_auth`` column of ``rows``."""
        self._rows = rows

    def __getitem__(self, eid: str) -> int:
        row = self._rows.get(eid)
        if row is None:
            raise KeyError(eid)
        return int(row[8])

    def __setitem__(self, eid: str, value: int) -> None:
        row = self._rows.get(eid)
        if row is None:
            raise ModelCorruptError(f"{eid} is not an element of the model")
        row[8] = value

    def __delitem__(self, eid: str) -> None:
        raise TypeError("never removed")

    def __iter__(self) -> Iterator[str]:
        return (eid for eid, _ in self._rows.all())

    def __len__(self) -> int:
        return sum(1 for _ in self._rows.all())
