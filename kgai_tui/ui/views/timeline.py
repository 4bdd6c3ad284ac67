"""TimelineView: every decision in time order, filtered, with a histogram over time."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import chain, compress, pairwise
from threading import Lock

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Select, Sparkline, Static
from textual.worker import get_current_worker

from kgai_tui.core.reads.kg import history_order
from kgai_tui.core.replay.projection_view import ProjectionView
from kgai_tui.ui.render import (
    CONTESTED,
    DEAD_END,
    DIM,
    HEAD,
    day,
    element_label,
    is_dead_end,
)
from kgai_tui.ui.safe_text import one_line, plain
from kgai_tui.ui.snapshot import DecisionRequested, Snapshot
from kgai_tui.ui.widgets.decision_list import DecisionList

_ALL = "__all__"
_WEEK = 7 * 24 * 3600

Filters = tuple[str | None, str | None, str | None, str | None]
"""Writer, author, element kind and status (``None``: any)."""


@dataclass(frozen=True, slots=True)
class TimelineBase:
    """What every filter of one snapshot starts from (one pass over all decisions)."""

    revision: int
    order: list[int]  # every real decision, oldest first
    head_set: frozenset[int]
    writers: list[str]
    authors: list[str]
    kinds: list[str]


@dataclass(frozen=True, slots=True)
class TimelineRows:
    """The rows and histogram of one snapshot under one set of filters."""

    base: TimelineBase
    filters: Filters
    rows: list[int]
    counts: list[float]
    unit: str


def timeline_base(p: ProjectionView, revision: int) -> TimelineBase:
    """Order and filter choices over every decision (O(decisions): run in a worker)."""
    real = list(compress(range(len(p.dec_id)), p.dec_hash))
    shaped = set(chain.from_iterable(p.dec_shapes[i] for i in real))
    kinds = sorted({(p.element(e) or ("", "", ""))[0] for e in shaped})
    return TimelineBase(
        revision=revision,
        order=history_order(p, real),
        head_set=frozenset(i for heads in p.heads.values() for i in heads),
        writers=sorted(set(map(p.dec_install.__getitem__, real))),
        authors=sorted(set(map(p.dec_author.__getitem__, real))),
        kinds=[k for k in kinds if k],
    )


def timeline_rows(
    p: ProjectionView, base: TimelineBase, filters: Filters
) -> TimelineRows:
    """Filter the base order and count decisions over time (run in a worker)."""
    writer, author, kind, status = filters
    head_set = base.head_set
    if filters == (None, None, None, None):
        rows = list(base.order)
    else:
        rows = []
        for i in base.order:
            if writer is not None and p.dec_install[i] != writer:
                continue
            if author is not None and p.dec_author[i] != author:
                continue
            if kind is not None and not any(
                (p.element(e) or ("", "", ""))[0] == kind for e in p.dec_shapes[i]
            ):
                continue
            if status == "head" and i not in head_set:
                continue
            if status == "superseded" and (i in head_set or is_dead_end(p, i)):
                continue
            if status == "dead" and not is_dead_end(p, i):
                continue
            rows.append(i)
    counts, unit = _histogram(p.dec_time, rows)
    return TimelineRows(base, filters, rows, counts, unit)


class TimelineView(Vertical):
    """Filters on top, a histogram, then the virtualised list.

    Ordering and filtering a million decisions takes seconds of Python, so it runs
    in a worker; until the first result the caption says the timeline is building.
    """

    def __init__(self, *, id: str | None = None) -> None:
        """Start empty."""
        super().__init__(id=id)
        self.snapshot: Snapshot | None = None
        self._base: TimelineBase | None = None
        self._shown: tuple[int, Filters] | None = None
        # One computation at a time: a cancelled worker cannot be stopped midway,
        # so while the slider is dragged the superseded ones leave at the lock.
        self._computing = Lock()

    def compose(self) -> ComposeResult:
        """Lay out the filters, histogram and list."""
        with Horizontal(id="timeline-filters"):
            yield Select[str]([], prompt="writer", id="filter-writer", allow_blank=True)
            yield Select[str]([], prompt="author", id="filter-author", allow_blank=True)
            yield Select[str](
                [], prompt="element kind", id="filter-kind", allow_blank=True
            )
            yield Select[str](
                [
                    ("in force", "head"),
                    ("superseded", "superseded"),
                    ("dead ends", "dead"),
                ],
                prompt="any status",
                id="filter-status",
                allow_blank=True,
            )
        yield Static(id="timeline-caption")
        yield Sparkline([], id="timeline-histogram")
        yield DecisionList(id="timeline-list")

    def show(self, snapshot: Snapshot) -> None:
        """Render a new snapshot (in a worker; the old rows stay until it is done)."""
        self.snapshot = snapshot
        if self._base is None:
            self.query_one("#timeline-caption", Static).update(
                Text("building the timeline…", "dim")
            )
        self._apply()

    def _set_options(self, selector: str, values: list[str]) -> None:
        select: Select[str] = self.query_one(selector, Select)
        current = select.value
        # Text, not str: a str prompt is parsed as markup (an author "[/]" crashes).
        select.set_options([(Text(one_line(v, 30) or "(none)"), v) for v in values])
        if isinstance(current, str) and current in values:
            select.value = current

    @on(Select.Changed)
    def _filters_changed(self) -> None:
        self._apply()

    def _value(self, selector: str) -> str | None:
        value = self.query_one(selector, Select).value
        return value if isinstance(value, str) else None

    def _filters(self) -> Filters:
        return (
            self._value("#filter-writer"),
            self._value("#filter-author"),
            self._value("#filter-kind"),
            self._value("#filter-status"),
        )

    def _apply(self) -> None:
        if self.snapshot is None:
            return
        filters = self._filters()
        if self._shown == (self.snapshot.revision, filters):
            return  # already on screen
        base = self._base
        if base is not None and base.revision != self.snapshot.revision:
            base = None
        self._compute(self.snapshot, base, filters)

    @work(thread=True, exclusive=True, group="timeline", exit_on_error=False)
    def _compute(
        self, snapshot: Snapshot, base: TimelineBase | None, filters: Filters
    ) -> None:
        worker = get_current_worker()
        p = snapshot.projection
        with self._computing:
            if worker.is_cancelled:
                return
            if base is None:
                base = timeline_base(p, snapshot.revision)
            if worker.is_cancelled:
                return
            result = timeline_rows(p, base, filters)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._present, snapshot, result)

    def _present(self, snapshot: Snapshot, result: TimelineRows) -> None:
        if snapshot is not self.snapshot:
            return  # a newer snapshot is being computed
        base = result.base
        if base is not self._base:
            self._base = base
            self._set_options("#filter-writer", base.writers)
            self._set_options("#filter-author", base.authors)
            self._set_options("#filter-kind", base.kinds)
        self._shown = (snapshot.revision, result.filters)
        p = snapshot.projection
        rows = result.rows
        self.query_one("#timeline-histogram", Sparkline).data = result.counts or [0]
        first = day(p, rows[0]) if rows else "—"
        last = day(p, rows[-1]) if rows else "—"
        self.query_one("#timeline-caption", Static).update(
            Text(
                f"{len(rows)} decision(s) · {first} → {last} · decisions per {result.unit}",
                "dim",
            )
        )
        head_set = base.head_set

        def render(idx: int, width: int) -> Text:
            return _row(p, idx, head_set, width)

        self.query_one("#timeline-list", DecisionList).set_rows(rows, render)
        if result.filters != self._filters():
            self._apply()  # the filters changed while this was computed

    @on(DecisionList.Opened)
    def _open(self, event: DecisionList.Opened) -> None:
        self.post_message(DecisionRequested(event.index))


def _histogram(times: Sequence[int | None], rows: list[int]) -> tuple[list[float], str]:
    """Decisions per week (up to 60 weeks) or per calendar month (UTC).

    Counts by bisecting the sorted stamps at each bucket's start: a million
    decisions cost one sort (linear, they come in time order), not a million
    ``datetime`` objects.
    """
    stamps = [s for s in map(times.__getitem__, rows) if s is not None]
    if not stamps:
        return [], "week"
    stamps.sort()
    lo, hi = stamps[0], stamps[-1]
    weeks = (hi - lo) // _WEEK + 1
    if weeks <= 60:
        edges = [lo + k * _WEEK for k in range(weeks + 1)]
        unit = "week"
    else:
        start = datetime.fromtimestamp(lo, UTC)
        end = datetime.fromtimestamp(hi, UTC)
        months = (end.year - start.year) * 12 + end.month - start.month + 1
        edges = [lo]
        for m in range(1, months + 1):
            year, month = divmod(start.month - 1 + m, 12)
            edges.append(
                int(datetime(start.year + year, month + 1, 1, tzinfo=UTC).timestamp())
            )
        edges[-1] = max(edges[-1], hi + 1)
        unit = "month"
    cuts = [bisect_left(stamps, edge) for edge in edges]
    cuts[-1] = len(stamps)
    return [float(b - a) for a, b in pairwise(cuts)], unit


def _row(p: ProjectionView, idx: int, head_set: AbstractSet[int], width: int) -> Text:
    if idx in head_set:
        contested = any(
            e in p.contested and idx in p.heads.get(e, ()) for e in p.dec_shapes[idx]
        )
        mark, style = ("●", CONTESTED) if contested else ("●", HEAD)
    elif is_dead_end(p, idx):
        mark, style = "✗", DEAD_END
    else:
        mark, style = "○", DIM
    line = Text(f"{day(p, idx)} ", DIM)
    line.append(f"{mark} ", style)
    line.append_text(
        plain(
            one_line(p.dec_title[idx], max(width // 2, 20)),
            "" if idx in head_set else DIM,
        )
    )
    line.append("  ")
    line.append_text(plain(one_line(p.dec_author[idx] or "unknown", 16), "cyan"))
    if p.dec_shapes[idx]:
        line.append(" · ", DIM)
        line.append_text(
            plain(one_line(element_label(p, p.dec_shapes[idx][0]), 30), DIM)
        )
        if len(p.dec_shapes[idx]) > 1:
            line.append(f" +{len(p.dec_shapes[idx]) - 1}", DIM)
    return line
