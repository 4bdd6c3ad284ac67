"""Point queries over a time index's tables at one cut (Unix seconds).

Each answers in global decision indices (creation order in the full replay);
:class:`~kgai_tui.core.timeindex.view.AsOfView` renumbers them for its cut.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import TYPE_CHECKING

from kgai_tui.core.timeindex.keys import SEQ, Carry

if TYPE_CHECKING:
    from kgai_tui.core.timeindex.tables import IndexTables


def decision_at(ix: IndexTables, cut: int, g: int) -> tuple[Carry | None, list[str]]:
    """Fields (``None`` for a stub) and shapes of decision ``g`` at the cut."""
    carries = ix.d_carry.get(g)
    if carries is None:
        carries = [ix.base_carry(g)] if ix.d_cpos[g] >= 0 else []
    included = [c for c in carries if c[1] <= cut]
    ref = -1
    e = ix.d_in[g]
    while e >= 0:
        more = ix.e_more.get(e) or [(ix.e_ord[e], ix.e_time[e])]
        for order, t in more:
            pos = order // SEQ
            if t <= cut and (ref < 0 or pos < ref):
                ref = pos
        e = ix.e_nin[e]
    fields = None
    if included and (ref < 0 or included[0][0] <= ref):
        fields = included[0]
    shapes: list[str] = []
    for c in included:
        shapes.extend(eid for eid in c[11] if eid not in shapes)
    return fields, shapes


def edges_at(ix: IndexTables, cut: int, first: int, dst: bool) -> list[int]:
    """The other ends of the included supersedes edges of one endpoint's list
    (``first`` edge; ``dst``: the out-list), in edge creation order."""
    found: list[tuple[int, int]] = []
    e = first
    while e >= 0:
        more = ix.e_more.get(e) or [(ix.e_ord[e], ix.e_time[e])]
        best = -1
        for order, t in more:
            if t <= cut and (best < 0 or order < best):
                best = order
        if best >= 0:
            found.append((best, ix.e_dst[e] if dst else ix.e_src[e]))
        e = ix.e_nout[e] if dst else ix.e_nin[e]
    found.sort()
    return [g for _, g in found]


def shapers_at(ix: IndexTables, cut: int, eid: str) -> list[tuple[int, int, bool]]:
    """``(pos, decision, authority)`` of the decisions shaping ``eid``, in creation order."""
    quads = ix.pairs.get(eid)
    if quads is None:
        return []
    found: list[tuple[int, int, bool]] = []
    for i in range(0, len(quads), 4):
        g, pos, t, flag = quads[i], quads[i + 1], quads[i + 2], quads[i + 3]
        if flag & 2:
            for p, tt, a in ix.pair_more[(eid, g)]:
                if tt <= cut:
                    found.append((p, g, bool(a)))
                    break
        elif t <= cut:
            found.append((pos, g, bool(flag & 1)))
    found.sort()
    return found


def nodes_at(ix: IndexTables, cut: int) -> list[tuple[int, str, str, str]]:
    """``(touch number, id, kind, name)`` of the elements present, in graph order."""
    nodes: list[tuple[int, str, str, str]] = []
    moved = False  # a first included touch that is not the first touch
    for eid, lows in ix.touch.items():
        if lows[-4] > cut:
            continue
        if lows[0] <= cut:
            nodes.append((lows[1], eid, lows[2], lows[3]))
            continue
        i = 4
        while lows[i] > cut:
            i += 4
        nodes.append((lows[i + 1], eid, lows[i + 2], lows[i + 3]))
        moved = True
    if moved:
        nodes.sort()
    return nodes


def links_at(ix: IndexTables, cut: int) -> list[tuple[int, str, str, str, str]]:
    """``(pos, from, to, kind, created_by)`` of the links alive, in creation order."""
    edges: list[tuple[int, str, str, str, str]] = []
    for (f, t, kind), ops in ix.links.items():
        alive, by, at = False, "", 0
        for i in range(2, len(ops), 4):
            if ops[i] > cut:
                continue
            if ops[i + 2]:
                if not alive:
                    alive, by, at = True, ops[i + 3], ops[i + 1]
            else:
                alive = False
        if alive:
            edges.append((at, f, t, kind, by))
    edges.sort()
    return edges


def props_at(ix: IndexTables, cut: int, eid: str) -> str:
    """An element's props blob at ``cut`` (a function, so nodes never hold a view)."""
    keys = ix.props.get(eid)
    if not keys:
        return ""
    parts: list[str] = []
    last = last_seq = -1
    for times, seqs, lines, sufmin in keys.values():  # kept sorted by key
        i = bisect_right(times if sufmin is None else sufmin, cut) - 1
        if i < 0:
            continue
        seq = seqs[i]
        if seq > last_seq:
            last, last_seq = len(parts), seq
        parts.append(lines[i])
    if not parts:
        return ""
    raw = ix.raw_lines.get(last_seq)
    if raw is not None:
        parts[last] = raw
    return parts[0] if len(parts) == 1 else "\n".join(parts)
