"""The canonical export and its digest, the replay-determinism check (spec 6.7)."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

from kgai_tui.core.gosem.gojson import marshal

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection import Projection


def export_parts(p: Projection) -> dict[str, list[dict[str, Any]]]:
    """Return the four export parts as Go would print them, each in its order."""
    graph = p.graph
    nodes = graph.nodes
    elements = [
        {
            "id": eid,
            "kind": nodes[eid]["kind"],
            "name": nodes[eid]["name"],
            "props": nodes[eid]["props"],
        }
        for eid in sorted(nodes)
    ]
    links = sorted(
        ({"f": f, "k": k, "t": t} for f, t, k in graph.edges(keys=True)),
        key=lambda row: (row["f"], row["k"], row["t"]),
    )
    decisions = [
        {"id": p.dec_id[i], "lamport": p.dec_lamport[i], "title": p.dec_title[i]}
        for i in sorted(range(len(p.dec_id)), key=p.dec_id.__getitem__)
    ]
    shapes = [
        {"authority": auth, "decision": p.dec_id[idx], "element": eid}
        for eid, shapers in p.el_shapes.items()
        for idx, auth in shapers.items()
    ]
    shapes.sort(key=lambda row: (row["decision"], row["element"]))
    return {
        "elements": elements,
        "links": links,
        "decisions": decisions,
        "shapes": shapes,
    }


def export_digest(parts: dict[str, list[dict[str, Any]]]) -> str:
    """Return ``sha256:`` over ``{"ok":false,elements,links,decisions,shapes}``."""
    body = {
        "ok": False,
        "elements": parts["elements"] or None,
        "links": parts["links"] or None,
        "decisions": parts["decisions"] or None,
        "shapes": parts["shapes"] or None,
    }
    return "sha256:" + hashlib.sha256(marshal(body)).hexdigest()


def export_obj(p: Projection, *, canonical: bool) -> dict[str, Any]:
    """Return the printed export object, with the digest when ``canonical``."""
    parts = export_parts(p)
    out: dict[str, Any] = {
        "ok": True,
        "elements": parts["elements"] or None,
        "links": parts["links"] or None,
        "decisions": parts["decisions"] or None,
        "shapes": parts["shapes"] or None,
    }
    if canonical:
        out["digest"] = export_digest(parts)
    return out
