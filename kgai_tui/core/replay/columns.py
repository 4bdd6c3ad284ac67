"""Compact decision columns for the replay of a whole log.

A cold open fills each decision's text fields and time from the verifiers' columns
(:meth:`~kgai_tui.core.replay.projection.Projection.fill_deferred`). As lists of
Python objects, a million decisions' titles and rationales cost ~170 MB of ``str``
(more while they were split out of the bytes that carried them), their lamports
and times ~60 MB of ``int``: a third of what the first read at 1M held at its
peak, ten times that at 10M. Kept here as the bytes and machine integers they
arrived as, each value is made when read (a read of one decision, a pass of the
model's build); values appended later (a live reload's events) stay plain.

Slices come back as lists, so a copy of a column (the time index taking private
columns) is a plain list, as before.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from typing import Final, overload

from kgai_tui.core.store.packed_column import PackedColumn

__all__ = ["TextColumn", "TimeColumn"]

#: Values made at a time by a pass over a column.
_CHUNK: Final = 65536


class TextColumn(PackedColumn):
    """Per decision, one line of ``"\\n"``-joined UTF-8 (``at`` the decision's
    line; -1 for an empty value), then the values appended after."""

    __slots__ = ("_at", "_blob", "_starts")

    def __init__(self, blob: bytes, starts: array[int], at: array[int]) -> None:
        """Line ``k`` is ``blob[starts[k] : starts[k + 1] - 1]``; ``at`` is shared
        with the other columns of the same decisions (never changed after)."""
        super().__init__()
        self._blob, self._starts, self._at = blob, starts, at

    def _held(self) -> int:
        return len(self._at)

    def _packed(self, i: int) -> str:
        line = self._at[i]
        if line < 0:
            return ""
        s = self._starts
        return self._blob[s[line] : s[line + 1] - 1].decode("utf-8", "surrogatepass")

    def __iter__(self) -> Iterator[str]:
        blob, s = self._blob, self._starts
        for line in self._at:
            if line < 0:
                yield ""
            else:
                yield blob[s[line] : s[line + 1] - 1].decode("utf-8", "surrogatepass")
        yield from self._tail


class TimeColumn(Sequence["int | None"]):
    """Recorded times in Unix seconds as int64, ``none`` standing for no time
    (:data:`~kgai_tui.core.store.decision_fields.ZERO_TIME`, which the projection
    shows as ``None``)."""

    __slots__ = ("_none", "_stamps")

    def __init__(self, stamps: array[int], none: int) -> None:
        """``stamps``: per decision its time, ``none`` where it has none."""
        self._stamps, self._none = stamps, none

    def __len__(self) -> int:
        return len(self._stamps)

    @overload
    def __getitem__(self, i: int) -> int | None: ...
    @overload
    def __getitem__(self, i: slice) -> list[int | None]: ...
    def __getitem__(self, i: int | slice) -> int | list[int | None] | None:
        if isinstance(i, slice):
            none = self._none
            return [None if v == none else v for v in self._stamps[i]]
        v = self._stamps[i]
        return None if v == self._none else v

    def __iter__(self) -> Iterator[int | None]:
        stamps, none = self._stamps, self._none
        for at in range(0, len(stamps), _CHUNK):
            yield from [None if v == none else v for v in stamps[at : at + _CHUNK]]

    def append(self, value: int | None) -> None:
        """A decision added after the fill (``None``: no time)."""
        self._stamps.append(self._none if value is None else value)
