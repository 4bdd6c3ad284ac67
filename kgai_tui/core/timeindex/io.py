"""Storage of a time index's tables (the warm-open cache).

``marshal`` of plain containers, every ``array`` as its raw bytes. Decision lists
shared with an equal projection are not stored; :func:`load_index` takes them from
the projection given.
"""

from __future__ import annotations

import marshal
from array import array
from typing import TYPE_CHECKING, Any, Final, TypeVar

from kgai_tui.core.timeindex.tables import IndexTables

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection_view import ProjectionView

T = TypeVar("T", bound=IndexTables)

# 3: recorded times read with ASCII digits only (Go's); 4: the events behind
# props and touches (prop_start, touch_pos).
_FORMAT: Final = 4


def dump_index(self: IndexTables) -> bytes:
    """Serialise an index, refreshed (``marshal`` of plain containers and array bytes)."""
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
            a  # marshal writes a buffer as bytes: no tobytes() copy
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
        self.pairs,
        self.pair_more,
        self.touch,
        self.props,  # key -> [times, seqs, lines, sufmin]: arrays as bytes
        self.raw_lines,
        self.links,
        self.unknown,
        self.exceptions,
        self.versions,
        self.vmulti,
        self.touch_pos,
    )
    return marshal.dumps(state)


def load_index(
    ix: T,
    data: bytes | memoryview,
    projection: ProjectionView | None = None,
    grown: bool = False,
) -> T:
    """Fill the empty, unpacked ``ix`` from :func:`dump_index` (``projection`` when shared).

    ``data`` may be any buffer (a view of the mapped cache file: no copy needed).
    With ``grown``, the projection may hold more decisions after the index's own
    (the log was appended to since the index was saved).

    Raises:
        ValueError: the bytes are of another format, or the projection does not
            match the one the index shared.
    """
    state = marshal.loads(data)
    if not isinstance(state, tuple) or state[0] != _FORMAT:
        raise ValueError("not a time index of this format")
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
    blobs: list[bytes] = state[4]
    arrays = []
    while blobs:  # each bytes object goes as soon as its array exists
        arrays.append(_frombytes(blobs.pop(0)))
    (ix.times, ix.d_exist, ix.d_stable, ix.d_ctime, ix.d_cpos, ix.d_in) = arrays[:6]
    (ix.d_out, ix.e_src, ix.e_dst, ix.e_time, ix.e_ord, ix.e_nin) = arrays[6:12]
    ix.e_nout, ix.prefmax, ix.sufmin, ix.prop_start = arrays[12:16]
    ix.d_carry, ix.e_more = state[5], state[6]
    # The loaded dicts are converted in place (same keys, same order).
    pairs: dict[str, Any] = state[7]
    for k, v in pairs.items():
        pairs[k] = _frombytes(v)
    ix.pairs = pairs
    ix.pair_more, ix.touch = state[8], state[9]
    props: dict[str, dict[str, Any]] = state[10]
    for keys in props.values():
        for k, (t, s, lines, m) in keys.items():
            keys[k] = [
                _frombytes(t),
                _frombytes(s),
                lines,
                None if m is None else _frombytes(m),
            ]
    ix.props = props
    ix.raw_lines, ix.links, ix.unknown, ix.exceptions = state[11:15]
    versions: dict[str, Any] = state[15]
    for e, (t, v) in versions.items():
        versions[e] = (_frombytes(t), _frombytes(v))
    ix.versions = versions
    ix.vmulti, ix.touch_pos = state[16], state[17]
    return ix


def _frombytes(data: bytes) -> array[int]:
    out: array[int] = array("q")
    out.frombytes(data)
    return out
