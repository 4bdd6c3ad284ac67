"""The store at a moment, as a story for a newcomer (the model behind ``report``).

:func:`build_report` reads one projection and returns plain data; the Markdown and
HTML renderers turn it into a document. Everything is sorted explicitly, nothing
depends on shard names, file order, the machine or the clock, so the same store gives
the same bytes:

* kinds by name (byte order), the kind-less stub elements last;
* elements by name, then id; props by key; links by kind, then the other end's label;
* decisions in force on an element newest first (lamport, then id), as ``heads``;
* conflicts by element id;
* the story: the last N decisions in history order (recorded time, lamport, id);
* decisions per calendar month (UTC), every month from the first dated decision to
  the last; the people in :func:`people_obj` order.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from kgai_tui.core.gosem.gotext import format_rfc3339
from kgai_tui.core.reads.kg import history_order, when_of
from kgai_tui.core.reads.people import people_now, people_obj
from kgai_tui.core.replay.projection_view import ProjectionView, element_label
from kgai_tui.core.wire.props import parse_props

DEFAULT_LAST: Final = 20


@dataclass(frozen=True, slots=True)
class DecisionEntry:
    """One decision as the report shows it."""

    id: str
    title: str
    author: str
    when: str
    rationale: str
    elements: tuple[str, ...]
    replaces: tuple[str, ...]
    replaced_by: tuple[str, ...]
    in_force: bool


@dataclass(frozen=True, slots=True)
class ElementEntry:
    """One element: its props, links and the decisions in force on it."""

    element_id: str
    kind: str
    name: str
    label: str
    props: tuple[tuple[str, str], ...]
    links_out: tuple[tuple[str, str, str], ...]  # (kind, label, element id)
    links_in: tuple[tuple[str, str, str], ...]
    in_force: tuple[DecisionEntry, ...]
    earlier: int  # decisions in its history that are not in force


@dataclass(frozen=True, slots=True)
class ConflictEntry:
    """An element with two or more decisions in force."""

    element_id: str
    label: str
    heads: tuple[DecisionEntry, ...]


@dataclass(frozen=True, slots=True)
class PersonEntry:
    """One author: their decisions and what became of them (``people_obj``)."""

    author: str
    decisions: int
    in_force: int
    superseded: int
    dead_ends: int
    elements: int
    conflicts: int
    first: str
    last: str


@dataclass(frozen=True, slots=True)
class Report:
    """Everything a rendered report shows."""

    at: str
    latest: bool  # ``at`` is the latest decision's time (no --as-of given)
    elements: int
    decisions: int
    in_force: int
    kinds: tuple[tuple[str, tuple[ElementEntry, ...]], ...]
    conflicts: tuple[ConflictEntry, ...]
    story: tuple[DecisionEntry, ...]
    last: int
    months: tuple[tuple[str, int], ...] = ()  # ("YYYY-MM", decisions), in order
    people: tuple[PersonEntry, ...] = ()


def _title(p: ProjectionView, idx: int) -> str:
    return p.dec_title[idx] or f"(decision {p.dec_id[idx]}, not recorded here)"


def _decision(p: ProjectionView, idx: int, heads: set[int]) -> DecisionEntry:
    return DecisionEntry(
        id=p.dec_id[idx],
        title=_title(p, idx),
        author=p.dec_author[idx],
        when=when_of(p, idx),
        rationale=p.dec_rationale[idx],
        elements=tuple(sorted(element_label(p, e) for e in p.dec_shapes[idx])),
        replaces=tuple(_title(p, o) for o in history_order(p, p.dec_supersedes[idx])),
        replaced_by=tuple(
            _title(p, o) for o in history_order(p, p.dec_superseded_by[idx])
        ),
        in_force=idx in heads,
    )


def _links(
    p: ProjectionView, eid: str, *, out: bool
) -> tuple[tuple[str, str, str], ...]:
    edges = (
        p.graph.out_edges(eid, keys=True) if out else p.graph.in_edges(eid, keys=True)
    )
    rows = {
        (kind, element_label(p, t if out else f), t if out else f)
        for f, t, kind in edges
    }
    return tuple(sorted(rows))


def _element(p: ProjectionView, eid: str, heads: set[int]) -> ElementEntry:
    kind, name, blob = p.element(eid) or ("", "", "")
    in_force = p.heads_of(eid)
    return ElementEntry(
        element_id=eid,
        kind=kind,
        name=name,
        label=element_label(p, eid),
        props=tuple(sorted(parse_props(blob).items())),
        links_out=_links(p, eid, out=True),
        links_in=_links(p, eid, out=False),
        in_force=tuple(_decision(p, i, heads) for i in in_force),
        earlier=len(p.el_shapes.get(eid, {})) - len(in_force),
    )


def _kinds(
    p: ProjectionView, heads: set[int]
) -> tuple[tuple[str, tuple[ElementEntry, ...]], ...]:
    by_kind: dict[str, list[ElementEntry]] = {}
    for eid in p.graph.nodes:
        entry = _element(p, eid, heads)
        by_kind.setdefault(entry.kind, []).append(entry)
    order = sorted(by_kind, key=lambda k: (k == "", k))
    return tuple(
        (k, tuple(sorted(by_kind[k], key=lambda e: (e.name, e.element_id))))
        for k in order
    )


@dataclass(frozen=True, slots=True)
class Timeline:
    """What the report reads of every decision: how many were recorded, the last
    ``last`` of them in history order, the newest one with a time, and how many
    were recorded per UTC day (days since 1970-01-01)."""

    recorded: int
    story: list[int]
    latest: int | None
    days: dict[int, int]


def timeline(p: ProjectionView, last: int) -> Timeline:
    """The report's pass over every decision, or the read model's few queries for
    it (``report_timeline``): at a million decisions, the difference between
    loading the whole store and reading a few columns."""
    stored = p.stored
    if stored is not None:
        return Timeline(*stored.report_timeline(last))
    recorded = [i for i, h in enumerate(p.dec_hash) if h]
    ordered = history_order(p, recorded)
    times = list(p.dec_time)  # one pass: an item at a time is a query each
    timed = [i for i in ordered if times[i] is not None]
    days: dict[int, int] = {}
    for i in timed:
        day = int(times[i] or 0) // 86400
        days[day] = days.get(day, 0) + 1
    return Timeline(
        len(recorded),
        ordered[-last:] if last > 0 else [],
        timed[-1] if timed else None,
        days,
    )


def build_report(
    p: ProjectionView,
    at: datetime | None,
    last: int = DEFAULT_LAST,
    people: list[dict[str, Any]] | None = None,
) -> Report:
    """Describe a projection; ``at`` is the --as-of moment (``None``: the latest).

    ``people``: the ``people`` rows at ``at`` when the read model has them (else
    they are counted from ``p``: at a cut, a walk over every decision then)."""
    heads = {i for hs in p.heads.values() for i in hs}
    p.prefetch(heads)
    line = timeline(p, last)
    if at is not None:
        moment = format_rfc3339(at)
    else:
        moment = "" if line.latest is None else when_of(p, line.latest)
    conflicts = tuple(
        ConflictEntry(
            eid,
            element_label(p, eid),
            tuple(_decision(p, i, heads) for i in p.heads_of(eid)),
        )
        for eid in sorted(p.contested)
    )
    return Report(
        at=moment,
        latest=at is None,
        elements=p.element_count(),
        decisions=line.recorded,
        in_force=len(heads),
        kinds=_kinds(p, heads),
        conflicts=conflicts,
        story=tuple(_decision(p, i, heads) for i in line.story),
        last=last,
        months=_months(line.days),
        people=tuple(
            PersonEntry(
                str(r["author"]),
                int(r["decisions"]),
                int(r["in_force"]),
                int(r["superseded"]),
                int(r["dead_ends"]),
                int(r["elements"]),
                int(r["conflicts"]),
                str(r["first"] or ""),
                str(r["last"] or ""),
            )
            for r in (_people(p, at) if people is None else people)
        ),
    )


def _people(p: ProjectionView, at: datetime | None) -> list[dict[str, Any]]:
    """The people rows (now: from the read model's totals when ``p`` keeps them)."""
    obj = people_now(p) if at is None else people_obj(p, at)
    rows: list[dict[str, Any]] = obj["people"]
    return rows


def _months(days: dict[int, int]) -> tuple[tuple[str, int], ...]:
    """Decisions per calendar month (UTC), every month from the first to the last."""
    counts: dict[tuple[int, int], int] = {}
    for day, n in days.items():
        moment = datetime.fromtimestamp(day * 86400, UTC)
        key = (moment.year, moment.month)
        counts[key] = counts.get(key, 0) + n
    if not counts:
        return ()
    (y, m), end = min(counts), max(counts)
    out: list[tuple[str, int]] = []
    while (y, m) <= end:
        out.append((f"{y:04d}-{m:02d}", counts.get((y, m), 0)))
        y, m = (y + 1, 1) if m == 12 else (y, m + 1)
    return tuple(out)
