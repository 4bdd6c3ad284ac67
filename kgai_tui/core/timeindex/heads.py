"""Heads of one element as a step function of time, for the time index.

:func:`element_versions` sweeps the element's shapes entries and the supersedes
edges between its deciders in time order and yields each head set once per change.
"""

from __future__ import annotations

from array import array
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kgai_tui.core.timeindex.tables import IndexTables

# An atom: (time, 0, decision, pos, authority) for a shapes entry, or
# (time, 1, source, target, 0) for a supersedes edge entry.
Atom = tuple[int, int, int, int, int]


def _atoms(ix: IndexTables, eid: str) -> list[Atom]:
    quads = ix.pairs[eid]
    atoms: list[Atom] = []
    deciders: set[int] = set()
    for i in range(0, len(quads), 4):
        g, pos, t, flag = quads[i], quads[i + 1], quads[i + 2], quads[i + 3]
        deciders.add(g)
        if flag & 2:
            atoms.extend((tt, 0, g, p, a) for p, tt, a in ix.pair_more[(eid, g)])
        else:
            atoms.append((t, 0, g, pos, flag & 1))
    d_out, e_dst, e_nout, e_time, e_more = (
        ix.d_out,
        ix.e_dst,
        ix.e_nout,
        ix.e_time,
        ix.e_more,
    )
    for g in deciders:
        e = d_out[g]
        while e >= 0:
            dst = e_dst[e]
            if dst in deciders:
                more = e_more.get(e)
                if more:
                    atoms.extend((tt, 1, g, dst, 0) for _, tt in more)
                else:
                    atoms.append((e_time[e], 1, g, dst, 0))
            e = e_nout[e]
    atoms.sort()
    return atoms


def element_versions(ix: IndexTables, eid: str) -> tuple[array[int], array[int]]:
    """Return ``(times, values)``: the head set from each time on, encoded.

    A value is ``-1`` for no head, a decision index for one head, and ``-2 - i`` for
    the sorted tuple ``ix.vmulti[i]`` of two or more.
    """
    atoms = _atoms(ix, eid)
    first: dict[int, int] = {}  # decision -> pos * 2 + authority of its first entry
    cnt: dict[int, int] = {}  # decision -> authoritative superseders included
    outs: dict[int, list[int]] = {}
    seen: set[tuple[int, int]] = set()
    heads: set[int] = set()
    times: array[int] = array("q")
    vals: array[int] = array("q")
    last: frozenset[int] = frozenset()
    i, n = 0, len(atoms)
    while i < n:
        t = atoms[i][0]
        while i < n and atoms[i][0] == t:
            _, kind, a, b, c = atoms[i]
            i += 1
            if kind == 0:
                cur = first.get(a)
                if cur is not None and cur >> 1 <= b:
                    continue
                old = 0 if cur is None else cur & 1
                first[a] = b * 2 + c
                if old == c:
                    continue
                if c:
                    for prev in outs.get(a, ()):
                        k = cnt.get(prev, 0) + 1
                        cnt[prev] = k
                        if k == 1:
                            heads.discard(prev)
                    if not cnt.get(a):
                        heads.add(a)
                else:
                    for prev in outs.get(a, ()):
                        k = cnt[prev] - 1
                        cnt[prev] = k
                        if k == 0 and first.get(prev, 0) & 1:
                            heads.add(prev)
                    heads.discard(a)
            else:
                if (a, b) in seen:
                    continue
                seen.add((a, b))
                outs.setdefault(a, []).append(b)
                if first.get(a, 0) & 1:
                    k = cnt.get(b, 0) + 1
                    cnt[b] = k
                    if k == 1:
                        heads.discard(b)
        if heads != last:
            last = frozenset(heads)
            times.append(t)
            if not heads:
                vals.append(-1)
            elif len(heads) == 1:
                vals.append(next(iter(heads)))
            else:
                vals.append(-2 - len(ix.vmulti))
                ix.vmulti.append(tuple(sorted(heads)))
    return times, vals
