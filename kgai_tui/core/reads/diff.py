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

from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final, TypeVar

from kgai_tui.core.errors import UsageError
from kgai_tui.core.gosem.gotext import format_rfc3339
from kgai_tui.core.reads.diff_attrib import Causes, IndexCauses, LinkKey, because
from kgai_tui.core.reads.kg import few_of
from kgai_tui.core.replay.projection import Projection
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
T = TypeVar("T")


def label(p: ProjectionView, eid: str) -> str:
    """``kind:name`` of an element, its name without a kind, else its id."""
    kind, name, _ = p.element(eid) or ("", "", "")
    if kind and name:
        return f"{kind}:{name}"
    return name or eid


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
                    "element": label(after if eid in after.graph else before, eid),
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
            "from": label(p, f),
            "kind": k,
            "to_id": t,
            "to": label(p, t),
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


class _Picked:
    """The fields a diff shows of some decisions.

    A view over the read model reads a column a block of rows per query, but a
    single item a query each (at a million decisions, item by item was 30 s):
    many decisions are picked from one pass per column, a few fetched together
    (:meth:`~kgai_tui.core.replay.projection_view.ProjectionView.prefetch`)."""

    def __init__(self, p: ProjectionView, wanted: Iterable[int]) -> None:
        keep = set(wanted)

        def pick(column: Sequence[T]) -> dict[int, T]:
            if few:
                return {i: column[i] for i in keep}
            return {i: v for i, v in enumerate(column) if i in keep}

        few = few_of(p, len(keep))
        if few:
            p.prefetch(keep)
        self.ids, self.titles = pick(p.dec_id), pick(p.dec_title)
        self.authors, self.times = pick(p.dec_author), pick(p.dec_time)
        self.rationales, self.lamports = pick(p.dec_rationale), pick(p.dec_lamport)
        self.shapes = pick(p.dec_shapes)
        self._named: dict[int, Obj] = {}

    def because(self, i: int) -> Obj:
        """Decision ``i`` as :func:`because_decision` names it (one object per
        decision: a caller that changes it takes a copy)."""
        got = self._named.get(i)
        if got is None:
            got = self._named[i] = because(
                self.ids[i],
                self.titles[i],
                self.authors[i],
                self.times[i],
                self.rationales[i],
            )
        return got

    def history_order(self, indices: Iterable[int]) -> list[int]:
        """:func:`~kgai_tui.core.reads.kg.history_order`, from the picked fields."""

        def key(i: int) -> tuple[bool, int, int, str]:
            stamp = self.times[i]
            return (stamp is None, stamp or 0, self.lamports[i], self.ids[i])

        return sorted(indices, key=key)


#: The decisions a diff lists, as view indices of TO: those recorded, and each
#: superseded decision with the decisions that newly supersede it.
DecisionChanges = tuple[list[int], dict[int, list[int]]]


def _decisions(after: ProjectionView, changes: DecisionChanges) -> Obj:
    recorded, superseded = changes
    wanted = set(recorded).union(superseded, *superseded.values())
    picked = _Picked(after, wanted)
    labels: dict[str, str] = {}

    def named(eid: str) -> str:
        got = labels.get(eid)
        if got is None:
            got = labels[eid] = label(after, eid)
        return got

    rows = []
    for i in picked.history_order(recorded):
        row = dict(picked.because(i))
        row["elements"] = sorted(named(e) for e in picked.shapes[i])
        rows.append(row)
    gone = []
    for o in picked.history_order(superseded):
        row = dict(picked.because(o))
        del row["rationale"]
        row["by"] = [picked.because(s) for s in picked.history_order(superseded[o])]
        gone.append(row)
    return {"decisions_recorded": rows, "decisions_superseded": gone}


def index_changes(
    ix: TimeIndex, start: datetime | None, after: AsOfView
) -> DecisionChanges:
    """:data:`DecisionChanges` between ``start`` and ``after``'s cut, from the
    index both are read from (:mod:`~kgai_tui.core.timeindex.window`)."""
    lo = None if start is None else int(start.timestamp())
    v_of = after.v_of
    recorded = [v_of(g) for g in recorded_between(ix, lo, after.cut)]
    superseded: dict[int, list[int]] = {}
    for s, o in edges_between(ix, lo, after.cut):
        superseded.setdefault(v_of(o), []).append(v_of(s))
    return recorded, superseded


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
) -> dict[str, list[Obj]]:
    """Every section of the diff between two projections (see the module
    docstring), the decisions' from ``changes``."""
    out: Obj = {}
    out.update(_decisions(after, changes))
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
