"""What changed between two moments, and which decision made each change.

``diff FROM TO`` takes the store as of FROM and as of TO (exactly ``as-of``, spec
6.6, read from the store's time index) and compares the two: elements, their
kind/name and props, links, decisions, supersessions and conflicts. Each change
carries the decision behind it, named by :mod:`kgai_tui.core.reads.diff_attrib`
from the same index: the event, among those a replay as of TO applies, that gave
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

from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from kgai_tui.core.errors import UsageError
from kgai_tui.core.gosem.gotext import format_rfc3339
from kgai_tui.core.reads.diff_attrib import Causes, IndexCauses, LinkKey, because
from kgai_tui.core.reads.diff_decisions import DecisionChanges, decision_sections
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.replay.projection_view import element_label
from kgai_tui.core.timeindex.window import edges_between, recorded_between
from kgai_tui.core.wire.props import parse_props

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection_view import ProjectionView
    from kgai_tui.core.timeindex.index import TimeIndex
    from kgai_tui.core.timeindex.view import AsOfView

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
#: The sections whose rows name the decision behind them (``by``).
_CAUSED: Final = (
    "elements_added",
    "elements_changed",
    "props_changed",
    "links_added",
    "links_retired",
)

Obj = dict[str, Any]


def because_decision(p: ProjectionView, idx: int) -> Obj:
    """A projected decision as ``{id, title, author, when, rationale}``."""
    return because(
        p.dec_id[idx],
        p.dec_title[idx],
        p.dec_author[idx],
        p.dec_time[idx],
        p.dec_rationale[idx],
    )


def _element(p: ProjectionView, eid: str, by: int | None) -> Obj:
    kind, name, _ = p.element(eid) or ("", "", "")
    return {"element_id": eid, "kind": kind, "name": name, "by": by}


def _elements(before: ProjectionView, after: ProjectionView, why: Causes) -> Obj:
    old, new = set(before.graph.nodes), set(after.graph.nodes)
    changed = []
    for eid in sorted(old & new):
        was = before.element(eid) or ("", "", "")
        now = after.element(eid) or ("", "", "")
        if was[:2] != now[:2]:
            row = _element(after, eid, why.created(eid))
            row["was_kind"], row["was_name"] = was[0], was[1]
            changed.append(row)
    return {
        "elements_added": [
            _element(after, e, why.created(e)) for e in sorted(new - old)
        ],
        "elements_removed": [_element(before, e, None) for e in sorted(old - new)],
        "elements_changed": changed,
    }


def _props(before: ProjectionView, after: ProjectionView, why: Causes) -> list[Obj]:
    rows: list[Obj] = []
    for eid in sorted(set(before.graph.nodes) | set(after.graph.nodes)):
        old = parse_props((before.element(eid) or ("", "", ""))[2])
        new = parse_props((after.element(eid) or ("", "", ""))[2])
        for key in sorted(set(old) | set(new)):
            if old.get(key) == new.get(key):
                continue
            by = why.prop_set(eid, key) if key in new else None
            rows.append(
                {
                    "element_id": eid,
                    "element": element_label(
                        after if eid in after.graph else before, eid
                    ),
                    "key": key,
                    "old": old.get(key),
                    "new": new.get(key),
                    "by": by,
                }
            )
    return rows


def _link_rows(
    p: ProjectionView, keys: Iterable[LinkKey], why: Callable[[LinkKey], int | None]
) -> list[Obj]:
    return [
        {
            "from_id": f,
            "from": element_label(p, f),
            "kind": k,
            "to_id": t,
            "to": element_label(p, t),
            "by": why((f, k, t)),
        }
        for f, k, t in sorted(keys)
    ]


def _links(before: ProjectionView, after: ProjectionView, why: Causes) -> Obj:
    old = {(f, k, t) for f, t, k in before.graph.edges(keys=True)}
    new = {(f, k, t) for f, t, k in after.graph.edges(keys=True)}
    return {
        "links_added": _link_rows(after, new - old, why.link_added),
        "links_retired": _link_rows(after, old - new, why.link_retired),
    }


def index_changes(
    ix: TimeIndex, start: datetime | None, after: AsOfView
) -> DecisionChanges:
    """:class:`DecisionChanges` between ``start`` and ``after``'s cut, from the
    index both are read from (:mod:`~kgai_tui.core.timeindex.window`)."""
    lo = None if start is None else int(start.timestamp())
    vs_of = after.vs_of
    by, superseded = edges_between(ix, lo, after.cut)
    return DecisionChanges(
        vs_of(recorded_between(ix, lo, after.cut)), vs_of(superseded), vs_of(by)
    )


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
    before: ProjectionView,
    after: ProjectionView,
    why: Causes,
    changes: DecisionChanges,
) -> Obj:
    """Every section of the diff between two projections (see the module
    docstring), the decisions' from ``changes`` (two
    :class:`~kgai_tui.core.gosem.gojson.Blocks`, read from ``after`` as they are
    encoded)."""
    out: Obj = decision_sections(after, changes)
    out.update(_elements(before, after, why))
    out["props_changed"] = _props(before, after, why)
    out.update(_links(before, after, why))
    out.update(_conflicts(before, after))
    # The sections hold the causes as event numbers: named here, all at once.
    caused = [row for key in _CAUSED for row in out[key] if row["by"] is not None]
    named = why.because(row["by"] for row in caused)
    for row in caused:
        row["by"] = named.get(row["by"])
    return {key: out[key] for key in SECTIONS}


def _moment(cut: datetime | None, none: str) -> str:
    return none if cut is None else format_rfc3339(cut)


def diff_obj(ix: TimeIndex, start: datetime | None, end: datetime | None) -> Obj:
    """``diff FROM TO``: ``{ok, from, to, counts, <sections>}``.

    ``start`` ``None`` is the empty store before the first event; ``end`` ``None``
    is every verified event (as of the end of time).

    Both moments and the decision behind each change come from the store's time
    index, exactly as ``as-of`` answers them (spec 6.6: the hash-verified events
    recorded by then, in canonical order), with no replay and no pass over the log.
    The two decision sections are made as they are encoded, from the store the
    index reads (keep it open until then); :func:`~kgai_tui.core.gosem.gojson.plain`
    makes them lists.

    Raises:
        UsageError: ``start`` is after ``end``.
    """
    if start is not None and end is not None and start > end:
        raise UsageError(
            f"FROM ({format_rfc3339(start)}) is after TO ({format_rfc3339(end)}); "
            "swap them"
        )
    cut = end or _END_OF_TIME
    ix.columns()  # once per index version, before the two views read them
    before: ProjectionView = Projection() if start is None else ix.at(start)
    after = ix.at(cut)
    sections = diff_projections(
        before,
        after,
        IndexCauses(ix, after.cut),
        index_changes(ix, start, after),
    )
    return {
        "ok": True,
        "from": _moment(start, "beginning"),
        "to": _moment(end, "now"),
        "counts": {key: len(rows) for key, rows in sections.items()},
        **sections,
    }
