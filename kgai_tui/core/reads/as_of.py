"""Point-in-time reads: the graph and decision plane as they stood at a moment (6.6).

The selection is by recorded time (``recorded_at`` parsed as RFC3339, not after the
cut), the gate is the hash check only, duplicates by hash apply once, and the replay
order is still canonical ``(lamport, hash)``, exactly as spec 6.6 and 14.8 say.

:func:`project_as_of` is that replay, kept as the reference; readers use
:func:`as_of_view`, which answers from the engine's
:class:`~kgai_tui.core.timeindex.index.TimeIndex` without replaying (equal by test).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kgai_tui.core.gosem.gotext import format_rfc3339, rfc3339_epoch
from kgai_tui.core.heap import GcPaused as gc_paused
from kgai_tui.core.reads.kg import conflict_groups
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.replay.projection_view import ProjectionView
from kgai_tui.core.store.shards import ShardRead
from kgai_tui.core.timeindex.view import AsOfView
from kgai_tui.core.wire.model import Event

if TYPE_CHECKING:
    from kgai_tui.core.reads.store import Store


def events_as_of(shards: Iterable[ShardRead], cut: datetime) -> list[Event]:
    """Return the hash-verified events recorded at or before ``cut``, canonically."""
    kept: list[Event] = []
    limit = int(cut.timestamp())
    for shard in shards:
        for item in shard.events:
            if not item.decoded.hash_ok:
                continue
            ev = item.decoded.event
            stamp = rfc3339_epoch(ev.recorded_at)
            if stamp is not None and stamp <= limit:
                kept.append(ev)
    kept.sort(key=lambda ev: (ev.lamport, ev.hash))
    return kept


def project_as_of(shards: Iterable[ShardRead], cut: datetime) -> Projection:
    """Replay exactly the events recorded at or before ``cut``."""
    projection = Projection()
    projection.apply_all(events_as_of(shards, cut))
    return projection


def as_of_view(opened: Store, cut: datetime) -> ProjectionView:
    """The store as of ``cut``, from its time index (the replay's, or the one read
    through the model: see :func:`~kgai_tui.core.reads.store.time_index_of`).

    The index's columns that :func:`as_of_obj` reads are built here, once per index
    version (tens of ms at 1M decisions), so the first read after a load is as fast
    as the next ones.
    """
    from kgai_tui.core.reads.store import time_index_of

    index = time_index_of(opened)
    index.columns()
    return index.at(cut)


def as_of_obj(p: ProjectionView, cut: datetime) -> dict[str, Any]:
    """Return ``{ok, at, elements, links}`` plus the heads and conflicts then."""
    with gc_paused():
        return _as_of_obj(p, cut)


def _as_of_obj(p: ProjectionView, cut: datetime) -> dict[str, Any]:
    if isinstance(p, AsOfView) and p.cut == int(cut.timestamp()):
        names, links, heads, conflicts = p.as_of_parts()
        return _obj(cut, names, links, heads, conflicts)
    return _graph_obj(p, cut)


def _obj(
    cut: datetime,
    names: list[str],
    links: list[dict[str, str]],
    heads: list[dict[str, Any]],
    conflicts: list[dict[str, Any]],
) -> dict[str, Any]:
    return {
        "ok": True,
        "at": format_rfc3339(cut),
        "elements": names or None,
        "links": links or None,
        "heads": heads or None,
        "conflicts": conflicts or None,
    }


def _graph_obj(p: ProjectionView, cut: datetime) -> dict[str, Any]:
    """The read through the element graph and heads (any projection; the reference)."""
    # networkx's own dicts (read only): its views cost a Python call per item.
    inner = vars(p.graph)
    attrs: dict[str, dict[str, Any]] = inner["_node"]
    succ: dict[str, dict[str, dict[str, Any]]] = inner["_succ"]
    names = sorted([a["name"] for a in attrs.values()])
    rows = sorted(
        [
            (attrs[f]["name"], k, attrs[t]["name"])
            for f, nbrs in succ.items()
            for t, keys in nbrs.items()
            for k in keys
        ]
    )
    links = [{"from": f, "kind": k, "to": t} for f, k, t in rows]
    heads = []
    all_heads = p.heads
    orders = [
        (eid, list(held) if len(held) == 1 else p.heads_of(eid))
        for eid, held in sorted([(e, h) for e, h in all_heads.items() if h])
    ]
    # Every head's id and title fetched in one pass (a view's columns are lazy).
    flat = [i for _, order in orders for i in order]
    fields = p.decision_fields(flat, ("id", "title"))
    ids: list[str] = [f[0] for f in fields]
    titles: list[str] = [f[1] for f in fields]
    at = 0
    for eid, order in orders:
        node = attrs[eid]
        end = at + len(order)
        heads.append(
            {
                "element_id": eid,
                "heads": ids[at:end],
                "kind": node["kind"],
                "name": node["name"],
                "titles": titles[at:end],
            }
        )
        at = end
    return _obj(cut, names, links, heads, conflict_groups(p))
