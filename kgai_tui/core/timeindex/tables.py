"""The time index's tables: what it keeps per decision, element, prop and link.

:class:`IndexTables` holds the data (decision fields and their packed build records,
supersedes edges, shapes pairs, record-low touches, prop and link histories) and the
lookups that need nothing else. :mod:`~kgai_tui.core.timeindex.fold` fills it,
:mod:`~kgai_tui.core.timeindex.index` answers from it.
"""

from __future__ import annotations

import marshal
from array import array
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection import Projection
    from kgai_tui.core.replay.projection_view import ProjectionView
    from kgai_tui.core.timeindex.columns import IndexColumns
    from kgai_tui.core.timeindex.counts import CutCounts
    from kgai_tui.core.timeindex.keys import Carry


# A decision's scalar fields: title, rationale, author, refs, summary, dec_time,
# lamport, install, hash.
Rec = tuple[str, str, str, str, str, int | None, int, str, str]
STUB_REC: Final[Rec] = ("", "", "", "", "", None, 0, "", "")
FIELD_COLUMNS: Final = (
    "d_title",
    "d_rationale",
    "d_author",
    "d_refs",
    "d_summary",
    "d_time",
    "d_lamport",
    "d_install",
    "d_hash",
)


def new_array() -> array[int]:
    """An empty array of signed 64-bit ints (every table's array type)."""
    return array("q")


def fields_of(p: Projection, g: int) -> Rec:
    """Decision ``g``'s scalar fields in a projection, in :data:`Rec` order."""
    return (
        p.dec_title[g],
        p.dec_rationale[g],
        p.dec_author[g],
        p.dec_refs[g],
        p.dec_summary[g],
        p.dec_time[g],
        p.dec_lamport[g],
        p.dec_install[g],
        p.dec_hash[g],
    )


class PackedRecs:
    """A build's decision fields: one ``marshal`` record each, in one buffer.

    Nine fields as a tuple of fresh strings and ints cost ~450 bytes a decision
    (440 MB at the peak of a 1M build, where the log pages and the engine are
    resident too), and are thrown away when :meth:`TimeIndex.finish` shares the
    projection's equal lists, the usual case. Packed, a record is ~190 bytes in one
    block that is handed back to the OS whole. With a ``mirror`` (the projection of
    the same log), a record equal to the mirror's decision at the same index is
    stored as an empty record and read from the mirror.
    """

    __slots__ = ("data", "ends", "mirror")

    def __init__(self, mirror: Projection | None = None) -> None:
        self.data = bytearray()
        self.ends: array[int] = new_array()
        self.mirror = mirror

    def __len__(self) -> int:
        return len(self.ends)

    def append(self, fields: Rec) -> None:
        g, mirror = len(self.ends), self.mirror
        if mirror is None or g >= len(mirror.dec_id) or fields_of(mirror, g) != fields:
            self.data += marshal.dumps(fields)
        self.ends.append(len(self.data))

    def __getitem__(self, g: int) -> Rec:
        start, end = self.ends[g - 1] if g else 0, self.ends[g]
        if start == end:  # a record is never empty: this one is the mirror's
            assert self.mirror is not None
            return fields_of(self.mirror, g)
        rec: Rec = marshal.loads(self.data[start:end])
        return rec


class IndexTables:
    """The time index's data: filled by the fold, read by the queries."""

    def __init__(self, packed: bool = True) -> None:
        """Start empty (the fold fills the tables; ``packed``: records while building)."""
        self.events = 0
        self.last_key: tuple[int, str] | None = None  # (lamport, hash) of the last add
        self.version = 0  # bumped by every add(): views of older versions are stale
        self.times: array[int] = new_array()  # sorted times of every indexed event
        self.skipped = 0  # events without an RFC3339 recorded_at (never in as-of)
        self.ungated = 0  # events that failed the decision-id gate
        self.shared: ProjectionView | None = None
        # Decisions by global index (creation order in the full replay): lists the
        # fold appends to, or a projection's own columns once shared (read only:
        # an add() after sharing takes private lists first, see _unshare).
        self.d_index: Mapping[str, int] = {}
        self.d_id: Sequence[str] = []
        self.d_title: Sequence[str] = []
        self.d_rationale: Sequence[str] = []
        self.d_author: Sequence[str] = []
        self.d_refs: Sequence[str] = []
        self.d_summary: Sequence[str] = []
        self.d_time: Sequence[int | None] = []
        self.d_lamport: Sequence[int] = []
        self.d_install: Sequence[str] = []
        self.d_hash: Sequence[str] = []
        self.d_shapes: Sequence[Sequence[str]] = []
        # While building, the scalar fields go to one packed record per decision;
        # finish() drops them when it shares an equal projection's lists, else
        # unpacks them into the lists above.
        self._recs: PackedRecs | None = PackedRecs() if packed else None
        # The projection of the same log, while building: equal ids and fields
        # are taken from it instead of kept twice (see TimeIndexBuilder).
        self._mirror: Projection | None = None
        # Extending a loaded index that shares a projection which already holds
        # the appended events (see IndexFold.begin_tail): the decisions it held
        # before, and the running shapes of those the tail creates.
        self._tail_from: int | None = None
        self._tail_shapes: dict[int, list[str]] = {}
        self.d_exist: array[int] = new_array()  # earliest time it exists
        self.d_stable: array[int] = new_array()  # from then on, fields equal the final
        self.d_ctime: array[int] = new_array()  # time of the creating event
        self.d_cpos: array[int] = new_array()  # its pos; ~pos when created by reference
        self.d_in: array[int] = new_array()  # first in-edge (linked list), -1 none
        self.d_out: array[int] = new_array()  # first out-edge
        self.d_carry: dict[int, list[Carry]] = {}  # carrying entries when needed
        # Supersedes edges (src supersedes dst) as linked lists per endpoint.
        self.e_src: array[int] = new_array()
        self.e_dst: array[int] = new_array()
        self.e_time: array[int] = new_array()
        self.e_ord: array[int] = new_array()
        self.e_nin: array[int] = new_array()
        self.e_nout: array[int] = new_array()
        self.e_more: dict[int, list[tuple[int, int]]] = {}  # edge -> [(ord, time)]
        # Shapes pairs per element: flat (decision, pos, time, flags) quads;
        # flags bit 0 = authority of the first entry, bit 1 = more entries exist.
        self.pairs: dict[str, array[int]] = {}
        self.pair_more: dict[tuple[str, int], list[tuple[int, int, int]]] = {}
        # Elements: record-low touches, flat (time, touch number, kind, name).
        self.touch: dict[str, list[Any]] = {}
        # Props: element -> key -> [times, seqs, trimmed lines, sufmin | None].
        self.props: dict[str, dict[str, list[Any]]] = {}
        self.raw_lines: dict[int, str] = {}  # seq -> untrimmed line, when different
        self.prop_seq = 0
        self.touch_seq = 0
        # The event behind a record (what ``diff`` names as the cause of a change):
        # the first prop seq of each indexed event (by pos), so a seq's event is a
        # bisection; and the pos of each touch number the touch lists hold.
        self.prop_start: array[int] = new_array()
        self.touch_pos: dict[int, int] = {}
        # Links: (from, to, kind) -> [run_is_add, run_min, (time, pos, add, by)...].
        self.links: dict[tuple[str, str, str], list[Any]] = {}
        self.unknown: list[tuple[int, str, str]] = []  # (time, hash, op)
        self._strs: dict[str, str] = {}
        self._keys: dict[str, str] = {}
        # Derived (rebuilt by refresh()).
        self.prefmax: array[int] = new_array()
        self.sufmin: array[int] = new_array()
        self.exceptions: list[int] = []
        self.versions: dict[str, tuple[array[int], array[int]]] = {}
        self.vmulti: list[tuple[int, ...]] = []
        self._dirty: set[str] | None = None  # None: every element
        self._stale = True
        self._columns: IndexColumns | None = None  # dropped by add() and refresh()
        self._counts: tuple[int, CutCounts] | None = None  # (version, counts)
        # (version, install -> first start) as saved with the index: computing it
        # reads every decision's install (0.4 s at 1M, the model's rows).
        self.saved_writers: tuple[int, dict[str, int]] | None = None

    def fields(self, g: int) -> Rec:
        """A decision's final scalar fields."""
        if self._recs is not None:
            return self._recs[g]
        return (
            self.d_title[g],
            self.d_rationale[g],
            self.d_author[g],
            self.d_refs[g],
            self.d_summary[g],
            self.d_time[g],
            self.d_lamport[g],
            self.d_install[g],
            self.d_hash[g],
        )

    def _materialize(self) -> None:
        """Unpack the build records into the field lists (author, install interned)."""
        recs = self._recs
        if recs is None:
            return
        self._recs = None
        cols: list[list[Any]] = [[] for _ in FIELD_COLUMNS]
        adds = [c.append for c in cols]
        intern = self._strs.setdefault
        data, mirror, start = recs.data, recs.mirror, 0
        for g, end in enumerate(recs.ends):
            if start == end:
                assert mirror is not None
                fields = fields_of(mirror, g)
            else:
                fields = marshal.loads(data[start:end])
            start = end
            for add, value in zip(adds, fields, strict=True):
                add(value)
        del recs, data
        for i in (2, 7):  # author, install: a few distinct values
            cols[i] = [intern(v, v) for v in cols[i]]
        for name, col in zip(FIELD_COLUMNS, cols, strict=True):
            setattr(self, name, col)

    def base_carry(self, g: int) -> Carry:
        """The carrying entry of a decision created by its own (only) event."""
        f = self.fields(g)
        return (
            self.d_cpos[g],
            self.d_ctime[g],
            f[0],
            f[1],
            f[2],
            f[3],
            f[4],
            f[6],
            f[7],
            f[8],
            f[5],
            list(self.d_shapes[g]),
        )

    def owned(self) -> tuple[dict[str, int], list[str], list[Sequence[str]]]:
        """The id map, ids and shapes as the lists the fold changes (an index that
        shares a projection's columns takes private ones before any change)."""
        index, ids, shapes = self.d_index, self.d_id, self.d_shapes
        if (
            isinstance(index, dict)
            and isinstance(ids, list)
            and isinstance(shapes, list)
        ):
            return index, ids, shapes
        raise AssertionError("the fold would change a shared projection's columns")

    def _unshare(self) -> None:
        """Take private copies of the projection's lists before changing them."""
        p = self.shared
        assert p is not None
        n = len(self.d_exist)
        self.d_index = {k: v for k, v in p.dec_index.items() if v < n}
        self.d_id = p.dec_id[:n]
        self.d_title = p.dec_title[:n]
        self.d_rationale = p.dec_rationale[:n]
        self.d_author = p.dec_author[:n]
        self.d_refs = p.dec_refs[:n]
        self.d_summary = p.dec_summary[:n]
        self.d_time = p.dec_time[:n]
        self.d_lamport = list(p.dec_lamport[:n])
        self.d_install = p.dec_install[:n]
        self.d_hash = p.dec_hash[:n]
        self.d_shapes = [list(s) for s in p.dec_shapes[:n]]
        self.shared = None

    def share(self, p: ProjectionView) -> None:
        """Read the decision lists of ``p``, equal to this index's, instead of its own."""
        self._recs = None
        self.shared = p
        self.d_index = p.dec_index
        self.d_id, self.d_title, self.d_rationale = (
            p.dec_id,
            p.dec_title,
            p.dec_rationale,
        )
        self.d_author, self.d_refs, self.d_summary = (
            p.dec_author,
            p.dec_refs,
            p.dec_summary,
        )
        self.d_time, self.d_lamport = p.dec_time, p.dec_lamport
        self.d_install, self.d_hash, self.d_shapes = (
            p.dec_install,
            p.dec_hash,
            p.dec_shapes,
        )

    def applied_at(self, limit: int) -> int:
        """Number of events recorded at or before ``limit`` (Unix seconds)."""
        return bisect_right(self.times, limit)
