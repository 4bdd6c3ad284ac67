"""Many step functions at one cut, from a checkpoint and one block of changes.

The moments keep, per element, its heads as a step function of time and, per link,
whether it is alive (:mod:`kgai_tui.core.model.moments`). A cut needs the value of
every one of them. Kept as one step function per element, a cut read every step
ever taken: at 10M decisions 160 MB of blobs and 100k bisections for one
``as-of``. Here each family of step functions (a *channel*: element heads, link
liveness) is one log of changes ``(time, entity, value)`` in time order, cut into
blocks, each with the value of every entity before its first change (its
*state*). A cut reads the blocks' first times, one state and one block, and
replays the block's changes up to the cut: a few megabytes whatever the history.

Stored in two tables keyed by ``channel << 32 | block``: ``at_block`` (first time,
then the times, entities and values as int64 arrays) and ``at_state`` (the state,
one int64 per entity; entities past its end, and entities with no step yet, are
:data:`UNSET`). Within a block, changes at the same time keep the order their
entity's steps had, so a later step at an equal time wins, as a bisection of that
entity's own steps would choose.

Built whole from the moments' step functions (NumPy, in the process that writes
the moments) and extended by an append (plain Python: one ``record`` adds a few
changes, all at or after every stored time, see
:mod:`kgai_tui.core.model.moments_append`). A read uses no NumPy: one block is at
most :data:`MAX_BLOCK` changes.
"""

from __future__ import annotations

import sqlite3
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Final

from kgai_tui.core.model.rows import ModelCorruptError

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = [
    "HEADS",
    "LINKS",
    "UNSET",
    "Change",
    "append_changes",
    "block_size",
    "build_frames",
    "drop_frames",
    "values_at",
    "write_frames",
]

#: The element heads: entity = the element's number (``at_el.n``); value = a
#: decision index, -1 for none, -2 - i for ``at_multi`` row i.
HEADS: Final = 0
#: The links: entity = the link's number (``at_link.id``); value = 1 alive, 0 not.
LINKS: Final = 1
#: The value of an entity before its first step.
UNSET: Final = -(2**63)
#: Changes per block of a build; a channel of more entities gets blocks as long as
#: its state (a cut then reads about as much state as changes).
BLOCK: Final = 1 << 16
#: An append starts a new block once the last one holds this many changes, so
#: that the block an append rewrites stays small.
APPEND_BLOCK: Final = 1 << 12
#: The most changes one block may hold (a read replays at most this many).
MAX_BLOCK: Final = 1 << 22
#: Entities a channel may number (a damaged block cannot make a read allocate more).
MAX_ENTITIES: Final = 1 << 31


def block_size(entities: int) -> int:
    """Changes per block of a build for a channel of this many entities."""
    return min(MAX_BLOCK, max(BLOCK, entities))


#: One change: (time, entity, value).
Change = tuple[int, int, int]
#: One stored block: (id, first time, state, times, entities, values) as bytes.
Block = tuple[int, int, bytes, bytes, bytes, bytes]


def _key(channel: int, block: int) -> int:
    return (channel << 32) | block


def _ints(blob: object, what: str) -> array[int]:
    if not isinstance(blob, bytes) or len(blob) % 8:
        raise ModelCorruptError(f"the moments' {what} do not decode")
    out = array("q")
    out.frombytes(blob)
    return out


def _firsts(db: sqlite3.Connection, channel: int) -> tuple[list[int], list[int]]:
    """The channel's block ids and their first times, in block order."""
    ids: list[int] = []
    firsts: list[int] = []
    for bid, first in db.execute(
        "SELECT id, first FROM at_block WHERE id BETWEEN ? AND ? ORDER BY id",
        (_key(channel, 0), _key(channel, 0xFFFFFFFF)),
    ):
        if firsts and first < firsts[-1]:
            raise ModelCorruptError("the moments' blocks are out of time order")
        ids.append(bid)
        firsts.append(first)
    return ids, firsts


def _block(
    db: sqlite3.Connection, bid: int, first: int
) -> tuple[array[int], array[int], array[int], array[int]]:
    """A block's state, times, entities and values, checked for shape (its times
    start at ``first``, the time its id was listed with)."""
    row = db.execute("SELECT t, e, v FROM at_block WHERE id = ?", (bid,)).fetchone()
    state = db.execute("SELECT state FROM at_state WHERE id = ?", (bid,)).fetchone()
    if row is None or state is None:
        raise ModelCorruptError("a block of the moments is missing")
    t, e, v = (_ints(blob, "changes") for blob in row)
    if not len(t) == len(e) == len(v) or not 0 < len(t) <= MAX_BLOCK or t[0] != first:
        raise ModelCorruptError("a block of the moments is not laid out as written")
    return _ints(state[0], "states"), t, e, v


def _apply(state: array[int], e: Sequence[int], v: Sequence[int], j: int) -> None:
    """The first ``j`` changes applied to ``state`` in order (grown as needed)."""
    if not j:
        return
    entities = e[:j]
    low, high = min(entities), max(entities)
    if low < 0 or high >= MAX_ENTITIES:
        raise ModelCorruptError("a change names an entity out of range")
    if high >= len(state):
        state.extend(array("q", [UNSET]) * (high + 1 - len(state)))
    for i in range(j):
        state[e[i]] = v[i]


def values_at(db: sqlite3.Connection, channel: int, cut: int) -> array[int]:
    """Every entity's value at ``cut`` (:data:`UNSET` before its first step; the
    array may end before the last entities, which are then unset too).

    Raises:
        ModelCorruptError: a stored block does not decode.
    """
    ids, firsts = _firsts(db, channel)
    k = bisect_right(firsts, cut) - 1
    if k < 0:
        return array("q")
    state, t, e, v = _block(db, ids[k], firsts[k])
    _apply(state, e, v, bisect_right(t, cut))
    return state


def drop_frames(db: sqlite3.Connection) -> None:
    """Delete every channel's blocks (inside the caller's transaction)."""
    db.execute("DELETE FROM at_block")
    db.execute("DELETE FROM at_state")


def write_frames(db: sqlite3.Connection, blocks: Iterable[Block]) -> None:
    """Insert built blocks (inside the caller's transaction)."""
    for bid, first, state, t, e, v in blocks:
        db.execute("INSERT INTO at_state VALUES (?, ?)", (bid, state))
        db.execute("INSERT INTO at_block VALUES (?, ?, ?, ?, ?)", (bid, first, t, e, v))


def build_frames(
    channel: int,
    entities: int,
    times: npt.NDArray[Any],
    owners: npt.NDArray[Any],
    values: npt.NDArray[Any],
) -> list[Block]:
    """The blocks of a channel whose entity ``owners[i]`` takes ``values[i]`` from
    ``times[i]`` on, the changes of one entity listed in its steps' order.

    NumPy: the writer of the moments holds the whole store already; at 10M
    decisions this sorts ~10M changes once.
    """
    import numpy as np

    order = np.argsort(times, kind="stable")  # equal times keep the steps' order
    t = np.ascontiguousarray(times[order], dtype=np.int64)
    e = np.ascontiguousarray(owners[order], dtype=np.int64)
    v = np.ascontiguousarray(values[order], dtype=np.int64)
    size = block_size(entities)
    state = np.full(entities, UNSET, dtype=np.int64)
    blocks: list[Block] = []
    for k, start in enumerate(range(0, len(t), size)):
        part = slice(start, start + size)
        te, ee, ve = t[part], e[part], v[part]
        blocks.append(
            (
                _key(channel, k),
                int(te[0]),
                state.tobytes(),
                te.tobytes(),
                ee.tobytes(),
                ve.tobytes(),
            )
        )
        # The last change of each entity in the block is its value after it.
        _, back = np.unique(ee[::-1], return_index=True)
        last = len(ee) - 1 - back
        state[ee[last]] = ve[last]
    return blocks


def append_changes(
    db: sqlite3.Connection, channel: int, changes: Sequence[Change]
) -> None:
    """Add changes recorded at or after every stored one (inside the caller's
    transaction): into the last block while it is small, else into a new block
    whose state is the last one's replayed to its end.

    Raises:
        ModelCorruptError: a stored block does not decode, or a change is earlier
            than the last stored one (the caller's moments then get a gap).
    """
    if not changes:
        return
    ids, firsts = _firsts(db, channel)
    t_new = array("q", (c[0] for c in changes))
    e_new = array("q", (c[1] for c in changes))
    v_new = array("q", (c[2] for c in changes))
    if list(t_new) != sorted(t_new):
        raise ModelCorruptError("changes appended out of time order")
    if not ids:
        state = array("q")
        bid = _key(channel, 0)
    else:
        state, t, e, v = _block(db, ids[-1], firsts[-1])
        if t_new[0] < t[-1]:
            raise ModelCorruptError("a change appended before a stored one")
        if len(t) < APPEND_BLOCK:
            db.execute(
                "UPDATE at_block SET t = ?, e = ?, v = ? WHERE id = ?",
                (
                    (t + t_new).tobytes(),
                    (e + e_new).tobytes(),
                    (v + v_new).tobytes(),
                    ids[-1],
                ),
            )
            return
        _apply(state, e, v, len(t))
        bid = ids[-1] + 1
    db.execute("INSERT INTO at_state VALUES (?, ?)", (bid, state.tobytes()))
    db.execute(
        "INSERT INTO at_block VALUES (?, ?, ?, ?, ?)",
        (bid, t_new[0], t_new.tobytes(), e_new.tobytes(), v_new.tobytes()),
    )
