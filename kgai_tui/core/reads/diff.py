"""What changed between two moments, and which decision made each change.

``diff FROM TO`` takes the store as of FROM and as of TO (exactly ``as-of``, spec
6.6, read from the engine's time index) and compares the two: elements, their
kind/name and props, links, decisions, supersessions and conflicts. Each change
carries the decision behind it, found by :mod:`kgai_tui.core.reads.diff_attrib` over
the events a replay as of TO applies: the last event, in canonical order, that gave
the thing its state at TO. Because that replay applies a superset of FROM's events,
the event behind a change is one recorded in (FROM, TO].

Every list is sorted, so the output is a function of the store alone (the order of
shard files and of lines does not matter):

* ``elements_added``, ``elements_removed``, ``elements_changed``: by element id;
* ``props_changed``: by element id, then key;
* ``links_added``, ``links_retired``: by from id, link kind, to id;
* ``decisions_recorded``: by recorded time, lamport, decision id (history order);
* ``decisions_superseded``: the superseded decision in history order; its ``by``
  list in history order too;
* ``conflicts_opened``, ``conflicts_resolved``: by element id; heads newest first.

Arrays are always arrays (``[]`` when empty), never null.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from kgai_tui.core.errors import UsageError
from kgai_tui.core.gosem.gotext import format_rfc3339, rfc3339_seconds
from kgai_tui.core.reads.as_of import as_of_view
from kgai_tui.core.reads.diff_attrib import Attribution, EventObj, LinkKey
from kgai_tui.core.reads.kg import history_order, when_of
from kgai_tui.core.replay.order import LineSource, canonical_order
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.wire.props import parse_props

if TYPE_CHECKING:
    from kgai_tui.core.engine.engine import Engine
    from kgai_tui.core.replay.projection_view import ProjectionView

_END_OF_TIME: Final = datetime.max.replace(tzinfo=UTC)
SECTIONS: Final = (
    "decisions_recorded",
    "decisions_superseded",
    "elements_added",
    "elements_removed",
    "elements_changed",
    "props_changed",
    "links_added",
    "links_retired",
    "conflicts_opened",
    "conflicts_resolved",
)

Obj = dict[str, Any]


def label(p: ProjectionView, eid: str) -> str:
    """``kind:name`` of an element, its name without a kind, else its id."""
    kind, name, _ = p.element(eid) or ("", "", "")
    if kind and name:
        return f"{kind}:{name}"
    return name or eid


def because_event(ev: EventObj | None) -> Obj | None:
    """The decision of an event as ``{id, title, author, when, rationale}``."""
    d = None if ev is None else ev.get("decision")
    if ev is None or d is None:
        return None
    return {
        "id": d.get("id", ""),
        "title": d.get("title", ""),
        "author": d.get("author", ""),
        "when": ev.get("recorded_at", ""),
        "rationale": d.get("rationale", ""),
    }


def because_decision(p: ProjectionView, idx: int) -> Obj:
    """A projected decision as ``{id, title, author, when, rationale}``."""
    return {
        "id": p.dec_id[idx],
        "title": p.dec_title[idx],
        "author": p.dec_author[idx],
        "when": when_of(p, idx),
        "rationale": p.dec_rationale[idx],
    }


def _element(p: ProjectionView, eid: str, by: EventObj | None) -> Obj:
    kind, name, _ = p.element(eid) or ("", "", "")
    return {"element_id": eid, "kind": kind, "name": name, "by": because_event(by)}


def _elements(before: ProjectionView, after: ProjectionView, why: Attribution) -> Obj:
    old, new = set(before.graph.nodes), set(after.graph.nodes)
    changed = []
    for eid in sorted(old & new):
        was = before.element(eid) or ("", "", "")
        now = after.element(eid) or ("", "", "")
        if was[:2] != now[:2]:
            row = _element(after, eid, why.created.get(eid))
            row["was_kind"], row["was_name"] = was[0], was[1]
            changed.append(row)
    return {
        "elements_added": [
            _element(after, e, why.created.get(e)) for e in sorted(new - old)
        ],
        "elements_removed": [_element(before, e, None) for e in sorted(old - new)],
        "elements_changed": changed,
    }


def _props(
    before: ProjectionView, after: ProjectionView, why: Attribution
) -> list[Obj]:
    rows: list[Obj] = []
    for eid in sorted(set(before.graph.nodes) | set(after.graph.nodes)):
        old = parse_props((before.element(eid) or ("", "", ""))[2])
        new = parse_props((after.element(eid) or ("", "", ""))[2])
        for key in sorted(set(old) | set(new)):
            if old.get(key) == new.get(key):
                continue
            ev = why.prop_set.get((eid, key)) if key in new else None
            rows.append(
                {
                    "element_id": eid,
                    "element": label(after if eid in after.graph else before, eid),
                    "key": key,
                    "old": old.get(key),
                    "new": new.get(key),
                    "by": because_event(ev),
                }
            )
    return rows


def _link_rows(
    p: ProjectionView, keys: Iterable[LinkKey], why: dict[LinkKey, EventObj]
) -> list[Obj]:
    return [
        {
            "from_id": f,
            "from": label(p, f),
            "kind": k,
            "to_id": t,
            "to": label(p, t),
            "by": because_event(why.get((f, k, t))),
        }
        for f, k, t in sorted(keys)
    ]


def _links(before: ProjectionView, after: ProjectionView, why: Attribution) -> Obj:
    old = {(f, k, t) for f, t, k in before.graph.edges(keys=True)}
    new = {(f, k, t) for f, t, k in after.graph.edges(keys=True)}
    return {
        "links_added": _link_rows(after, new - old, why.link_added),
        "links_retired": _link_rows(after, old - new, why.link_retired),
    }


def _decisions(before: ProjectionView, after: ProjectionView) -> Obj:
    # Whole columns are iterated (C speed for an as-of view's), not indexed one by
    # one: at a million decisions the per-item lookups were a quarter of a diff.
    before_ids, after_ids = list(before.dec_id), list(after.dec_id)
    real_before = {d for d, h in zip(before_ids, before.dec_hash, strict=True) if h}
    recorded = [
        i
        for i, (d, h) in enumerate(zip(after_ids, after.dec_hash, strict=True))
        if h and d not in real_before
    ]
    rows = []
    for i in history_order(after, recorded):
        row = because_decision(after, i)
        row["elements"] = sorted(label(after, e) for e in after.dec_shapes[i])
        rows.append(row)
    # An edge is new unless its superseding decision held it already (ids are
    # unique, so that decision's own supersedes then are all it could have held).
    before_index = before.dec_index
    superseded: dict[int, list[int]] = {}
    for s, sup in enumerate(after.dec_supersedes):
        if not sup:
            continue
        then = before_index.get(after_ids[s])
        held = (
            set()
            if then is None
            else {before_ids[o] for o in before.dec_supersedes[then]}
        )
        for o in sup:
            if after_ids[o] not in held:
                superseded.setdefault(o, []).append(s)
    gone = []
    for o in history_order(after, list(superseded)):
        row = because_decision(after, o)
        del row["rationale"]
        row["by"] = [
            because_decision(after, s) for s in history_order(after, superseded[o])
        ]
        gone.append(row)
    return {"decisions_recorded": rows, "decisions_superseded": gone}


def _conflicts(before: ProjectionView, after: ProjectionView) -> Obj:
    opened = []
    for eid in sorted(after.contested - before.contested):
        kind, name, _ = after.element(eid) or ("", "", "")
        heads = [because_decision(after, i) for i in after.heads_of(eid)]
        opened.append({"element_id": eid, "kind": kind, "name": name, "heads": heads})
    resolved = []
    for eid in sorted(before.contested - after.contested):
        kind, name, _ = after.element(eid) or before.element(eid) or ("", "", "")
        was = [
            {"id": before.dec_id[i], "title": before.dec_title[i]}
            for i in before.heads_of(eid)
        ]
        old_ids = {before.dec_id[i] for i in before.heads_of(eid)}
        by = [
            because_decision(after, i)
            for i in after.heads_of(eid)
            if after.dec_id[i] not in old_ids
        ]
        resolved.append(
            {
                "element_id": eid,
                "kind": kind,
                "name": name,
                "heads_before": was,
                "by": by,
            }
        )
    return {"conflicts_opened": opened, "conflicts_resolved": resolved}


def diff_projections(
    before: ProjectionView, after: ProjectionView, why: Attribution
) -> dict[str, list[Obj]]:
    """Every section of the diff between two projections (see the module docstring)."""
    out: Obj = {}
    out.update(_decisions(before, after))
    out.update(_elements(before, after, why))
    out["props_changed"] = _props(before, after, why)
    out.update(_links(before, after, why))
    out.update(_conflicts(before, after))
    return {key: out[key] for key in SECTIONS}


def _moment(cut: datetime | None, none: str) -> str:
    return none if cut is None else format_rfc3339(cut)


def diff_obj(engine: Engine, start: datetime | None, end: datetime | None) -> Obj:
    """``diff FROM TO``: ``{ok, from, to, counts, <sections>}``.

    ``start`` ``None`` is the empty store before the first event; ``end`` ``None``
    is every verified event (as of the end of time).

    Both moments come from the engine's time index, exactly as ``as-of`` answers
    them (spec 6.6: the hash-verified events recorded by then, in canonical
    order), with no replay. The attribution walks TO's events from the engine's
    line columns: each line parsed straight into its canonical dict (Go's reading
    of an odd line comes from the scan), never decoded into an event object.

    Raises:
        UsageError: ``start`` is after ``end``.
    """
    if start is not None and end is not None and start > end:
        raise UsageError(
            f"FROM ({format_rfc3339(start)}) is after TO ({format_rfc3339(end)}); "
            "swap them"
        )
    why = Attribution()
    order = canonical_order(engine.scans)
    source = LineSource(engine.log_dir, engine.scans)
    try:
        _attribute(order, source, int((end or _END_OF_TIME).timestamp()), why)
    finally:
        source.release()
    before: ProjectionView = (
        Projection() if start is None else as_of_view(engine, start)
    )
    after = as_of_view(engine, end or _END_OF_TIME)
    sections = diff_projections(before, after, why)
    return {
        "ok": True,
        "from": _moment(start, "beginning"),
        "to": _moment(end, "now"),
        "counts": {key: len(rows) for key, rows in sections.items()},
        **sections,
    }


def _attribute(
    order: list[tuple[int, str, int, int]],
    source: LineSource,
    limit: int,
    why: Attribution,
) -> None:
    """Walk ``why`` over the events recorded at or before ``limit`` (epoch seconds),
    each once, in canonical order: the events TO's replay applies."""
    last = None
    for _, ev_hash, si, i in order:
        if ev_hash == last:
            continue  # the same event in two shards: adjacent, once
        last = ev_hash
        obj = source.load(si, i)
        stamp = rfc3339_seconds(obj.get("recorded_at", ""))
        if stamp is not None and stamp <= limit:
            why.apply(obj)
