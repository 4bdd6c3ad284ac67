"""Point-in-time replay: the graph and decision plane as they stood at a moment (6.6).

The selection is by recorded time (``recorded_at`` parsed as RFC3339, not after the
cut), the gate is the hash check only, duplicates by hash apply once, and the replay
order is still canonical ``(lamport, hash)``, exactly as spec 6.6 and 14.8 say.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import Any

from kgai_tui.core.gotext import format_rfc3339, rfc3339_epoch
from kgai_tui.core.model import Event
from kgai_tui.core.projection import Projection
from kgai_tui.core.reads import conflict_groups
from kgai_tui.core.shards import ShardRead


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


def as_of_obj(p: Projection, cut: datetime) -> dict[str, Any]:
    """Return ``{ok, at, elements, links}`` plus the heads and conflicts then."""
    graph = p.graph
    names = sorted(a["name"] for _, a in graph.nodes(data=True))
    links = sorted(
        (
            {"from": graph.nodes[f]["name"], "kind": k, "to": graph.nodes[t]["name"]}
            for f, t, k in graph.edges(keys=True)
        ),
        key=lambda row: (row["from"], row["kind"], row["to"]),
    )
    heads = []
    for eid in sorted(e for e, h in p.heads.items() if h):
        order = p.heads_of(eid)
        heads.append(
            {
                "element_id": eid,
                "heads": [p.dec_id[i] for i in order],
                "kind": graph.nodes[eid]["kind"],
                "name": graph.nodes[eid]["name"],
                "titles": [p.dec_title[i] for i in order],
            }
        )
    conflicts = conflict_groups(p)
    return {
        "ok": True,
        "at": format_rfc3339(cut),
        "elements": names or None,
        "links": links or None,
        "heads": heads or None,
        "conflicts": conflicts or None,
    }
