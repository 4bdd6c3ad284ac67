"""The canonical export and its digest, the replay-determinism check (spec 6.7).

Both sources of an export (a replayed projection, or the read model's tables, see
:mod:`kgai_tui.core.model.export`) hand over the same plain rows; the orders and
the printed shapes are decided once, here.
"""

from __future__ import annotations

import hashlib
from operator import itemgetter
from typing import TYPE_CHECKING, Any, NamedTuple

from kgai_tui.core.gosem.gojson import marshal

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection_view import ProjectionView


class ExportRows(NamedTuple):
    """What an export holds, unordered. Every element id, link, decision id and
    (decision, element) pair is unique, so sorting gives the orders Go prints:
    elements by id, links by from/kind/to, decisions by id, shapes by decision then
    element."""

    elements: list[tuple[str, str, str, str]]  # id, kind, name, props
    links: list[tuple[str, str, str]]  # from, kind, to
    decisions: list[tuple[str, int, str]]  # id, lamport, title
    shapes: list[tuple[str, str, bool]]  # decision id, element id, authority


def projection_rows(p: ProjectionView) -> ExportRows:
    """The export rows of a replayed projection."""
    dec_id = p.dec_id
    return ExportRows(
        elements=[
            (eid, attrs["kind"], attrs["name"], attrs["props"])
            for eid, attrs in p.graph.nodes(data=True)
        ],
        links=[(f, k, t) for f, t, k in p.graph.edges(keys=True)],
        decisions=list(zip(dec_id, p.dec_lamport, p.dec_title, strict=True)),
        shapes=[
            (dec_id[idx], eid, auth)
            for eid, shapers in p.el_shapes.items()
            for idx, auth in shapers.items()
        ],
    )


def parts_of(rows: ExportRows) -> dict[str, list[dict[str, Any]]]:
    """The four export parts as Go would print them, each in its order.

    Sorts by one string key (CPython's fast path), never by a Python key function
    or by whole tuples: at a million decisions that is seconds, not tens of them.
    Shapes sort by element, then stably by decision.
    """
    first, second = itemgetter(0), itemgetter(1)
    rows.elements.sort(key=first)
    rows.links.sort()
    rows.decisions.sort(key=first)
    rows.shapes.sort(key=second)
    rows.shapes.sort(key=first)
    return {
        "elements": [
            {"id": e, "kind": k, "name": n, "props": p} for e, k, n, p in rows.elements
        ],
        "links": [{"f": f, "k": k, "t": t} for f, k, t in rows.links],
        "decisions": [
            {"id": d, "lamport": lamport, "title": title}
            for d, lamport, title in rows.decisions
        ],
        "shapes": [
            {"authority": auth, "decision": d, "element": e}
            for d, e, auth in rows.shapes
        ],
    }


def export_parts(p: ProjectionView) -> dict[str, list[dict[str, Any]]]:
    """Return the four export parts of a projection as Go would print them."""
    return parts_of(projection_rows(p))


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


def export_obj(
    parts: dict[str, list[dict[str, Any]]], *, canonical: bool
) -> dict[str, Any]:
    """Return the printed export object, with the digest when ``canonical``."""
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
