"""Storage of a time index's tables (the warm-open cache).

``marshal`` of plain containers, each ``array`` replaced by where its raw bytes are:
they follow the containers end to end (205 of the 215 MB at 1M). Loading copies an
array straight from the mapped file and lets the map's pages go a step at a time,
so the file is never held whole beside what is made of it. Decision lists shared
with an equal projection are not stored; :func:`load_index` takes them from the
projection given.
"""

from __future__ import annotations

import marshal
import struct
from array import array
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any, Final, TypeVar, cast, overload

from kgai_tui.core.store.regular_file import RELEASE_STEP, release_view
from kgai_tui.core.timeindex.tables import IndexTables

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection_view import ProjectionView

T = TypeVar("T", bound=IndexTables)

# 3: recorded times read with ASCII digits only (Go's); 4: the events behind
# props and touches (prop_start, touch_pos); 5: arrays after the containers;
# 6: the prop lines as one text after them (read in place, not unmarshalled).
_FORMAT: Final = 6
_HEAD: Final = struct.Struct("<Q")  # the marshalled containers' length
_NL: Final = ord("\n")
#: Bytes of an array a mapped index copies instead of viewing in place: at 1M
#: decisions, 60k per-element histories of a few entries each, whose views
#: cost ~10 MB of objects.
_SMALL: Final = 256


class _Arrays:
    """The arrays of a dump, in the order written: each stands as ``(offset,
    length)`` in the containers."""

    def __init__(self) -> None:
        self.parts: list[array[int]] = []
        self.size = 0

    def put(self, a: array[int] | bytes) -> tuple[int, int]:
        n = memoryview(a).nbytes
        self.parts.append(a)  # type: ignore[arg-type]
        self.size += n
        return (self.size - n, n)


class _Lines:
    """Every prop line of a dump, in the order written, as one text: each history
    stands as ``(first, count)``, its lines' numbers in it."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def put(self, lines: Sequence[str]) -> tuple[int, int]:
        first = len(self.lines)
        self.lines.extend(lines)
        return (first, len(lines))

    def close(self, arrays: _Arrays) -> tuple[tuple[int, int], tuple[int, int]]:
        """Put the text (padded to 8 bytes) and where each line starts (one more
        entry: the end) into ``arrays``."""
        import numpy as np

        # A prop line holds no newline (the fold replaces them): it separates.
        text = "\n".join(self.lines).encode("utf-8", "surrogatepass")
        ends = np.flatnonzero(np.frombuffer(text, dtype=np.uint8) == _NL)
        starts = array("q", [0] if self.lines else [])
        starts.frombytes((ends + 1).astype(np.int64).tobytes())
        starts.append(len(text) + 1)
        if len(starts) != len(self.lines) + 1:
            raise ValueError("a prop line holds a newline")
        where = arrays.put(starts), arrays.put(text + bytes(-len(text) % 8))
        return where[0], (where[1][0], len(text))


class LinesView(Sequence[str]):
    """One history's prop lines, read from the mapped text on each access: at 1M
    decisions the lines are 27 MB of strings, of which a slider session reads the
    few its elements show."""

    __slots__ = ("_count", "_first", "_starts", "_text")

    def __init__(
        self, text: memoryview, starts: array[int], first: int, count: int
    ) -> None:
        """Lines ``first`` to ``first + count`` of ``text`` (``starts``: where each
        line starts)."""
        self._text, self._starts = text, starts
        self._first, self._count = first, count

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self._count))]
        if i < 0:
            i += self._count
        if not 0 <= i < self._count:
            raise IndexError(i)
        at = self._first + i
        piece = self._text[self._starts[at] : self._starts[at + 1] - 1]
        return bytes(piece).decode("utf-8", "surrogatepass")


class _Taken:
    """Arrays copied out of a payload's array part, its pages let go a step at a
    time; or, ``mapped``, read in place (views of the mapped file)."""

    def __init__(self, data: bytes | memoryview, start: int, mapped: bool) -> None:
        self.data = memoryview(data)
        self.start = start
        self.unreleased = 0
        self.mapped = mapped

    def text(self, where: tuple[int, int]) -> memoryview:
        """The text stored at ``where`` (its unpadded length), in place."""
        offset, n = where
        at = self.start + offset
        if offset < 0 or n < 0 or at + n > len(self.data):
            raise ValueError("a text lies outside the time index")
        return self.data[at : at + n]

    def take(self, where: tuple[int, int]) -> array[int]:
        offset, n = where
        at = self.start + offset
        if offset < 0 or n < 0 or at + n > len(self.data) or n % 8:
            raise ValueError("an array lies outside the time index")
        if self.mapped and n > _SMALL:
            # Read-only int64 views: indexing, slicing, bisection and NumPy read
            # them as they read arrays; an append or a store raises.
            return cast("array[int]", self.data[at : at + n].cast("q"))
        if self.mapped:  # a copy costs less than a view (~200 bytes each)
            return _frombytes(self.data[at : at + n])
        out = _frombytes(self.data[at : at + n])
        self.unreleased += n
        if self.unreleased >= RELEASE_STEP:
            release_view(self.data)
            self.unreleased = 0
        return out


def dump_index_parts(
    self: IndexTables, writers: dict[str, int] | None = None
) -> list[bytes | array[int]]:
    """Serialise an index, refreshed: the containers' length, the containers
    (``marshal``; each array as its place) and the arrays' bytes, as pieces to
    write one after another (joined, they were a second copy of the whole
    index at its save: 2.16 GB at 10M decisions). ``writers``: its
    :attr:`~kgai_tui.core.timeindex.counts.CutCounts.writers_from`, kept last
    (a reader of an index saved without it computes it)."""
    blobs = _Arrays()
    put = blobs.put
    texts = _Lines()
    shared = self.shared is not None
    dec: Any = None
    if not shared:
        dec = (
            self.d_id,
            self.d_title,
            self.d_rationale,
            self.d_author,
            self.d_refs,
            self.d_summary,
            self.d_time,
            self.d_lamport,
            self.d_install,
            self.d_hash,
            self.d_shapes,
        )
    state = (
        _FORMAT,
        (
            self.events,
            self.skipped,
            self.ungated,
            self.prop_seq,
            len(self.d_exist),
            self.touch_seq,
            self.last_key,
        ),
        dec,
        self.d_id[-1] if self.d_id else "",
        [
            put(a)
            for a in (
                self.times,
                self.d_exist,
                self.d_stable,
                self.d_ctime,
                self.d_cpos,
                self.d_in,
                self.d_out,
                self.e_src,
                self.e_dst,
                self.e_time,
                self.e_ord,
                self.e_nin,
                self.e_nout,
                self.prefmax,
                self.sufmin,
                self.prop_start,
            )
        ],
        self.d_carry,
        self.e_more,
        {k: put(v) for k, v in self.pairs.items()},
        self.pair_more,
        self.touch,
        {  # key -> [times, seqs, (first line, count), sufmin]
            e: {
                k: [put(t), put(q), texts.put(lines), None if m is None else put(m)]
                for k, (t, q, lines, m) in keys.items()
            }
            for e, keys in self.props.items()
        },
        self.raw_lines,
        self.links,
        self.unknown,
        self.exceptions,
        {e: (put(t), put(v)) for e, (t, v) in self.versions.items()},
        self.vmulti,
        self.touch_pos,
        writers,
        texts.close(blobs),
    )
    head = marshal.dumps(state)
    return [_HEAD.pack(len(head)), head, *blobs.parts]


def load_index(
    ix: T,
    data: bytes | memoryview,
    projection: ProjectionView | None = None,
    grown: bool = False,
    mapped: bool = False,
) -> T:
    """Fill the empty, unpacked ``ix`` from what :func:`dump_index_parts` wrote
    (``projection`` when shared).

    ``data`` may be any buffer (a view of the mapped cache file: no copy needed).
    With ``grown``, the projection may hold more decisions after the index's own
    (the log was appended to since the index was saved). With ``mapped``, the
    arrays are views of ``data`` (the index is only read: at 1M decisions 205 MB
    neither copied nor resident until a read touches them).

    Raises:
        ValueError: the bytes are of another format, or the projection does not
            match the one the index shared.
    """
    view = memoryview(data)
    if len(view) < _HEAD.size:
        raise ValueError("not a time index of this format")
    (head,) = _HEAD.unpack(view[: _HEAD.size])
    state = marshal.loads(view[_HEAD.size : _HEAD.size + head])
    if not isinstance(state, tuple) or state[0] != _FORMAT:
        raise ValueError("not a time index of this format")
    take = _Taken(view, _HEAD.size + head, mapped).take
    ix.events, ix.skipped, ix.ungated, ix.prop_seq, n, ix.touch_seq, last = state[1]
    ix.last_key = None if last is None else (last[0], last[1])
    dec, last_id = state[2], state[3]
    if dec is None:
        held = -1 if projection is None else len(projection.dec_id)
        if (
            projection is None
            or held < n
            or (held > n and not grown)
            or (n and projection.dec_id[n - 1] != last_id)
        ):
            raise ValueError("time index was shared with another projection")
        ix.share(projection)
    else:
        (ix.d_id, ix.d_title, ix.d_rationale, ix.d_author, ix.d_refs) = dec[:5]
        (ix.d_summary, ix.d_time, ix.d_lamport, ix.d_install, ix.d_hash) = dec[5:10]
        ix.d_shapes = dec[10]
        ix.d_index = {d: i for i, d in enumerate(ix.d_id)}
    arrays = [take(w) for w in state[4]]
    (ix.times, ix.d_exist, ix.d_stable, ix.d_ctime, ix.d_cpos, ix.d_in) = arrays[:6]
    (ix.d_out, ix.e_src, ix.e_dst, ix.e_time, ix.e_ord, ix.e_nin) = arrays[6:12]
    ix.e_nout, ix.prefmax, ix.sufmin, ix.prop_start = arrays[12:16]
    ix.d_carry, ix.e_more = state[5], state[6]
    # The loaded dicts are converted in place (same keys, same order).
    pairs: dict[str, Any] = state[7]
    for k, v in pairs.items():
        pairs[k] = take(v)
    ix.pairs = pairs
    ix.pair_more, ix.touch = state[8], state[9]
    props: dict[str, dict[str, Any]] = state[10]
    starts_at, text_at = state[19]
    in_place = _Taken(view, _HEAD.size + head, True)
    starts, text = in_place.take(starts_at), in_place.text(text_at)
    if len(starts) < 1 or starts[-1] != len(text) + 1:
        raise ValueError("the prop lines do not agree with their text")
    lines_of: Any = (
        partial(LinesView, text, starts)
        if mapped
        else _lists(bytes(text).decode("utf-8", "surrogatepass").split("\n"))
    )
    for keys in props.values():
        for k, (t, s, (first, count), m) in keys.items():
            if not (first >= 0 and first + count < len(starts)):
                raise ValueError("prop lines lie outside their text")
            lines = lines_of(first, count)
            keys[k] = [take(t), take(s), lines, None if m is None else take(m)]
    ix.props = props
    ix.raw_lines, ix.links, ix.unknown, ix.exceptions = state[11:15]
    versions: dict[str, Any] = state[15]
    for e, (t, v) in versions.items():
        versions[e] = (take(t), take(v))
    ix.versions = versions
    ix.vmulti, ix.touch_pos = state[16], state[17]
    writers = state[18] if len(state) > 18 else None
    if isinstance(writers, dict):
        ix.saved_writers = (ix.version, writers)
    release_view(view)
    return ix


def _lists(lines: list[str]) -> Any:
    """``(first, count) -> list``: the lines of a history, as lists the fold can
    append to."""

    def lines_of(first: int, count: int) -> list[str]:
        return lines[first : first + count]

    return lines_of


def _frombytes(data: bytes | memoryview) -> array[int]:
    out: array[int] = array("q")
    out.frombytes(data)
    return out
