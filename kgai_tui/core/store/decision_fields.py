"""A decision's text fields, install id and time, read by the verifiers for the replay.

A cold open replays on one core while the other verifies. Copying each new
decision's title, rationale, author, refs, summary, install id and time into the
projection's columns cost the replay a good part of its time, yet the verifier holds
those strings already (in its pattern's match, or its parsed dict). So each verifier
keeps them per line, in file order, and sends them as one column each; the replay
records only which line carries which decision, and the columns are filled at the
end, one pass each (:meth:`Projection.fill_deferred`).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

from kgai_tui.core.gosem.gotext import recorded_epoch

if TYPE_CHECKING:
    # NumPy loads with the first column packed or unpacked (a cold open), not with
    # every importer of these names (a write session: ~0.1-0.2 s per record).
    import numpy as np
    import numpy.typing as npt

TEXT_FIELDS: Final = ("title", "rationale", "author", "refs", "summary")
# The text columns sent: the decision's fields and the event's install id.
COLUMNS: Final = (*TEXT_FIELDS, "install_id")
# Go's zero time: the projection shows it (and an unreadable time) as "no time".
ZERO_TIME: Final = -62135596800
# Past this many distinct values a column is sent whole, not as a table and codes.
_CODED_MAX: Final = 1024


@dataclass(frozen=True, slots=True)
class Coded:
    """A column with few distinct values (authors, install ids): each value once,
    and per line the index of its value. Cheap to send, join and pick, and the
    picked column shares one str object per value."""

    table: list[str]
    codes: npt.NDArray[np.int32]


@dataclass(frozen=True, slots=True)
class Lines:
    """A column of many distinct values (titles, rationales) joined across shards
    as it was sent: one ``"\n"``-joined UTF-8 blob, value ``k`` ending one byte
    before ``starts[k + 1]``. The projection reads values out of it when asked
    (:class:`~kgai_tui.core.replay.columns.TextColumn`) instead of holding a
    ``str`` per decision."""

    blob: bytes
    starts: array[int]

    def values(self) -> list[str]:
        """Every value, in order (no value holds a newline)."""
        if len(self.starts) < 2:
            return []
        return self.blob.decode("utf-8", "surrogatepass").split("\n")


# A column as sent: coded, "\n"-joined UTF-8, or (a value holds a newline) strs.
Column = bytes | list[str] | Coded
PackedFields = tuple[tuple[Column, ...], bytes]
# A column joined across shards; ``None`` when every value is empty.
Joined = list[str] | Coded | Lines | None


def epoch_or_zero(recorded_at: str) -> int:
    """The projection's time of a ``recorded_at``; :data:`ZERO_TIME` for none."""
    stamp = recorded_epoch(recorded_at)
    return ZERO_TIME if stamp is None else stamp


# The match groups a plain line's fields are read from, in the order rows hold them.
PLAIN_GROUPS: Final = (*TEXT_FIELDS, "install", "recorded")
_Row = tuple[bytes | None, ...]


@dataclass(slots=True)
class FieldColumns:
    """Per kept line, in file order: the decision's text fields and its time.

    Rows are kept as the pattern's group tuples (one call per line); a line
    without a decision, or a field Go left out, holds ``None``: read as empty.
    """

    rows: list[_Row] = field(default_factory=list)
    newline: bool = False

    def add_obj(self, obj: dict[str, Any]) -> None:
        """A line's fields from its canonical dict (lines off the plain path)."""
        dec = obj["decision"]
        values = ["" if dec is None else dec.get(name, "") for name in TEXT_FIELDS]
        values.append(obj["install_id"])
        values.append(obj["recorded_at"])
        if any("\n" in v for v in values[:-1]):
            self.newline = True
        self.rows.append(tuple(v.encode("utf-8", "surrogatepass") for v in values))

    def pack(self) -> PackedFields:
        """One blob per column: cheap to send between processes."""
        cols: list[list[bytes]] = [
            [v or b"" for v in col] for col in zip(*self.rows, strict=True)
        ] or [[] for _ in PLAIN_GROUPS]
        *text, recorded = cols
        return tuple(self._pack(col) for col in text), epochs(recorded).tobytes()

    def _pack(self, col: list[bytes]) -> Column:
        distinct = dict.fromkeys(col)
        if len(distinct) <= _CODED_MAX:
            import numpy as np

            index = {v: i for i, v in enumerate(distinct)}
            codes = np.fromiter(map(index.__getitem__, col), np.int32, len(col))
            return Coded([v.decode("utf-8", "surrogatepass") for v in distinct], codes)
        if self.newline:
            return [v.decode("utf-8", "surrogatepass") for v in col]
        return b"\n".join(col)


_DIGITS: Final = (0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18)
_MARKS: Final = {4: ord("-"), 7: ord("-"), 10: ord("T"), 13: ord(":"), 16: ord(":")}
_MONTH_DAYS: Final = (0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


def epochs(values: list[bytes]) -> npt.NDArray[np.int64]:
    """Each ``recorded_at`` (UTF-8) as :func:`epoch_or_zero` reads it.

    Writers stamp ``YYYY-MM-DDTHH:MM:SSZ``; those are read all at once with numpy
    (what :func:`gotext.recorded_epoch` checks and computes, column-wise), and any
    other shape one by one by ``recorded_epoch`` itself.
    """
    import numpy as np

    n = len(values)
    out = np.full(n, ZERO_TIME, dtype=np.int64)
    if not n:
        return out
    lengths = np.fromiter(map(len, values), dtype=np.int64, count=n)
    ok = lengths == 20
    u = np.array(values, dtype="S20").view(np.uint8).reshape(n, 20).astype(np.int64)
    ok &= u[:, 19] == ord("Z")
    for col, mark in _MARKS.items():
        ok &= u[:, col] == mark
    d = u[:, list(_DIGITS)] - ord("0")
    ok &= ((d >= 0) & (d <= 9)).all(axis=1)
    year = d[:, 0] * 1000 + d[:, 1] * 100 + d[:, 2] * 10 + d[:, 3]
    month = d[:, 4] * 10 + d[:, 5]
    day = d[:, 6] * 10 + d[:, 7]
    hour, minute, sec = (d[:, i] * 10 + d[:, i + 1] for i in (8, 10, 12))
    ok &= (month >= 1) & (month <= 12) & (day >= 1)
    ok &= (hour <= 23) & (minute <= 59) & (sec <= 59)
    leap = (year % 4 == 0) & ((year % 100 != 0) | (year % 400 == 0))
    last = np.array(_MONTH_DAYS)[np.clip(month, 0, 12)] + ((month == 2) & leap)
    ok &= day <= last
    # Days since 1970-01-01 of the proleptic Gregorian date (gotext._days_from_civil).
    y = year - (month <= 2)
    era = np.floor_divide(y, 400)
    yoe = y - era * 400
    doy = (153 * (month + np.where(month > 2, -3, 9)) + 2) // 5 + day - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    days = era * 146097 + doe - 719468
    stamps = days * 86400 + hour * 3600 + minute * 60 + sec
    out[ok] = stamps[ok]
    for i in np.flatnonzero(~ok).tolist():
        out[i] = epoch_or_zero(values[i].decode("utf-8", "surrogatepass"))
    return out


def unpack_column(col: Column, count: int) -> list[str]:
    """A packed column's values (``count`` of them)."""
    if isinstance(col, Coded):
        table = col.table
        return [table[c] for c in col.codes.tolist()]
    if isinstance(col, list):
        return col
    if count == 0:
        return []
    return col.decode("utf-8", "surrogatepass").split("\n")


def _join_lines(cols: list[Column], counts: list[int]) -> Lines | None:
    """Shards' columns as one :class:`Lines`; ``None`` when a value holds a
    newline (its shard sent strs). A shard of few distinct values sent them coded:
    they are joined as the others were.

    Raises:
        ValueError: the values do not number ``counts``.
    """
    import numpy as np

    total = sum(counts)
    if not total:
        return None
    parts: list[bytes] = []
    ends: list[npt.NDArray[np.int64]] = []
    at = 0
    for col, count in zip(cols, counts, strict=True):
        if not count:
            continue
        if isinstance(col, Coded):
            values = [v.encode("utf-8", "surrogatepass") for v in col.table]
            if any(b"\n" in v for v in values):
                return None
            col = b"\n".join(values[c] for c in col.codes.tolist())
        if not isinstance(col, bytes):
            return None
        # Each part's newlines, and the one that joins it to the next: a mask of
        # one shard's bytes at a time, not of the whole column.
        ends.append(np.flatnonzero(np.frombuffer(col, dtype=np.uint8) == 0x0A) + at)
        at += len(col) + 1
        ends.append(np.array([at - 1], dtype=np.int64))
        parts.append(col)
    blob = b"\n".join(parts)
    starts = array("q", [0])
    for part in ends[:-1]:
        starts.frombytes((part + 1).tobytes())
    if len(starts) != total:
        raise ValueError("a packed column does not match its shard")
    starts.append(len(blob) + 1)
    return Lines(blob, starts)


def unpack_times(blob: bytes) -> npt.NDArray[np.int64]:
    """A packed time column."""
    import numpy as np

    return np.frombuffer(blob, dtype=np.int64)


def _join_coded(cols: list[Coded]) -> Coded:
    """Shards' coded columns as one: one table, codes renumbered into it."""
    import numpy as np

    table: dict[str, int] = {}
    codes = []
    for col in cols:
        remap = np.array(
            [table.setdefault(v, len(table)) for v in col.table] or [0], dtype=np.int32
        )
        codes.append(remap[col.codes])
    joined = np.concatenate(codes) if codes else np.zeros(0, dtype=np.int32)
    return Coded(list(table), joined)


def concat_fields(
    packs: list[PackedFields], counts: list[int]
) -> tuple[list[Joined], npt.NDArray[np.int64]]:
    """Every shard's columns joined in shard order: indexed like the replay's keys.

    Columns coded in every shard stay coded; a column empty on every line (refs
    and summary often are) comes back as ``None``: nothing to split or pick.
    """
    import numpy as np

    text: list[Joined] = []
    for k in range(len(COLUMNS)):
        cols = [p[0][k] for p in packs]
        for col, count in zip(cols, counts, strict=True):
            if isinstance(col, Coded) and len(col.codes) != count:
                raise ValueError("a packed column does not match its shard")
        if all(isinstance(c, Coded) for c in cols):
            coded = _join_coded([c for c in cols if isinstance(c, Coded)])
            text.append(None if coded.table in ([], [""]) else coded)
            continue
        lines = _join_lines(cols, counts)
        if lines is not None:
            text.append(lines)
            continue
        values: list[str] = []
        for col, count in zip(cols, counts, strict=True):
            got = unpack_column(col, count)
            if len(got) != count:
                raise ValueError("a packed column does not match its shard")
            values.extend(got)
        text.append(values)
    times = [unpack_times(blob) for _, blob in packs]
    if [len(t) for t in times] != counts:
        raise ValueError("a packed column does not match its shard")
    return text, np.concatenate(times) if times else np.zeros(0, dtype=np.int64)
