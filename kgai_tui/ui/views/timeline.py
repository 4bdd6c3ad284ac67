"""TimelineView: every decision in time order, filtered, with a histogram over time."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import pairwise
from threading import Lock
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Select, Sparkline, Static
from textual.worker import get_current_worker

from kgai_tui.core.reads.legend import MARKS, Status
from kgai_tui.core.reads.timeline import (
    Filters,
    TimelineColumns,
    timeline_columns,
    timeline_select,
)
from kgai_tui.core.reads.view import KgView
from kgai_tui.ui.commands import bindings
from kgai_tui.ui.render import DIM, day
from kgai_tui.ui.safe_text import one_line, plain
from kgai_tui.ui.snapshot import DecisionRequested, Snapshot
from kgai_tui.ui.theme import Palette
from kgai_tui.ui.threads import thread_worker
from kgai_tui.ui.widgets.decision_list import DecisionList

_ALL = "__all__"
_WEEK = 7 * 24 * 3600


@dataclass(frozen=True, slots=True)
class TimelineBase:
    """What every filter of one snapshot starts from (one pass over all decisions)."""

    revision: int
    columns: TimelineColumns


@dataclass(frozen=True, slots=True)
class TimelineRows:
    """The rows and histogram of one snapshot under one set of filters."""

    base: TimelineBase
    filters: Filters
    rows: Sequence[int]
    counts: list[float]
    unit: str


def timeline_base(v: KgView, revision: int) -> TimelineBase:
    """Order and filter choices over every decision (run in a worker)."""
    return TimelineBase(revision, timeline_columns(v))


def timeline_rows(v: KgView, base: TimelineBase, filters: Filters) -> TimelineRows:
    """Filter the base order and count decisions over time (run in a worker)."""
    rows, stamps = timeline_select(v, base.columns, filters)
    counts, unit = _histogram(stamps)
    return TimelineRows(base, filters, rows, counts, unit)


class TimelineView(Vertical):
    """Filters on top, a histogram, then the virtualised list.

    Ordering and filtering a million decisions takes seconds of Python, so it runs
    in a worker, and only while the view is shown: a slider step elsewhere does
    not pay for it. Until the first result the caption says it is building.
    """

    BINDINGS: ClassVar[list[BindingType]] = bindings("timeline")

    #: Where Tab goes, in turn: the list, then each filter.
    _CYCLE = (
        "#timeline-list",
        "#filter-writer",
        "#filter-author",
        "#filter-kind",
        "#filter-status",
    )

    def __init__(self, *, id: str | None = None) -> None:
        """Start empty."""
        super().__init__(id=id)
        self.snapshot: Snapshot | None = None
        self._base: TimelineBase | None = None
        self._shown: tuple[int, Palette, Filters] | None = None
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
                    (f"{MARKS[Status.IN_FORCE]} in force", "head"),
                    (f"{MARKS[Status.SUPERSEDED]} superseded", "superseded"),
                    (f"{MARKS[Status.DEAD_END]} dead ends", "dead"),
                ],
                prompt="any status",
                id="filter-status",
                allow_blank=True,
            )
        yield Static(id="timeline-caption")
        yield Sparkline([], id="timeline-histogram")
        yield DecisionList(id="timeline-list")

    def action_cycle(self, step: int) -> None:
        """Tab (``step`` 1) and shift+Tab (-1): the list and the four filters in
        turn, within the view (the slider below is moved by its own keys)."""
        order = [self.query_one(selector) for selector in self._CYCLE]
        focused = self.screen.focused
        at = next(
            (
                n
                for n, widget in enumerate(order)
                if focused is not None and widget in focused.ancestors_with_self
            ),
            -1 if step > 0 else 0,
        )
        order[(at + step) % len(order)].focus()

    def show(self, snapshot: Snapshot) -> None:
        """Take a new snapshot; render it now when the view is shown, else when it
        is (in a worker; the old rows stay until it is done)."""
        self.snapshot = snapshot
        if self._base is None:
            self.query_one("#timeline-caption", Static).update(
                Text("building the timeline…", "dim")
            )
        if self.display:
            self._apply()

    def on_show(self) -> None:
        """Shown: bring the rows up to the latest snapshot."""
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
        if self._shown == (self.snapshot.revision, self.snapshot.palette, filters):
            return  # already on screen
        base = self._base
        if base is not None and base.revision != self.snapshot.revision:
            base = None
        self._compute(self.snapshot, base, filters)

    @thread_worker("timeline")
    def _compute(
        self, snapshot: Snapshot, base: TimelineBase | None, filters: Filters
    ) -> None:
        worker = get_current_worker()
        v = snapshot.view
        with self._computing:
            if worker.is_cancelled:
                return
            if base is None:
                base = timeline_base(v, snapshot.revision)
            if worker.is_cancelled:
                return
            result = timeline_rows(v, base, filters)
        if not worker.is_cancelled:
            self.app.call_from_thread(self._present, snapshot, result)

    def _present(self, snapshot: Snapshot, result: TimelineRows) -> None:
        if snapshot is not self.snapshot:
            return  # a newer snapshot is being computed
        base = result.base
        if base is not self._base:
            self._base = base
            self._set_options("#filter-writer", base.columns.writers)
            self._set_options("#filter-author", base.columns.authors)
            self._set_options("#filter-kind", base.columns.kinds)
        self._shown = (snapshot.revision, snapshot.palette, result.filters)
        v = snapshot.view
        rows = result.rows
        self.query_one("#timeline-histogram", Sparkline).data = result.counts or [0]
        first = day(v.decision(rows[0])) if rows else "—"
        last = day(v.decision(rows[-1])) if rows else "—"
        self.query_one("#timeline-caption", Static).update(
            Text(
                f"{len(rows)} decision(s) · {first} → {last} · decisions per {result.unit}",
                "dim",
            )
        )
        palette = snapshot.palette

        def render(idx: int, width: int) -> Text:
            return _row(v, idx, width, palette)

        self.query_one("#timeline-list", DecisionList).set_rows(rows, render)
        if result.filters != self._filters():
            self._apply()  # the filters changed while this was computed

    @on(DecisionList.Opened)
    def _open(self, event: DecisionList.Opened) -> None:
        self.post_message(DecisionRequested(event.index))


def _histogram(stamps: Sequence[int]) -> tuple[list[float], str]:
    """Decisions per week (up to 60 weeks) or per calendar month (UTC), from
    ascending ``stamps``.

    Counts by bisecting the stamps at each bucket's start: a million decisions
    cost a few dozen bisections, not a million ``datetime`` objects.
    """
    if not stamps:
        return [], "week"
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


def _row(v: KgView, idx: int, width: int, palette: Palette) -> Text:
    d = v.decision(idx)
    status = v.status(idx)
    muted = status not in (Status.IN_FORCE, Status.CONTESTED)
    line = Text(f"{day(d)} ", DIM)
    line.append_text(palette.mark(status))
    line.append(" ")
    line.append_text(
        plain(one_line(d.title, max(width // 2, 20)), DIM if muted else "")
    )
    line.append("  ")
    line.append_text(plain(one_line(d.author or "unknown", 16), palette.field))
    if d.shapes:
        line.append(" · ", DIM)
        line.append_text(plain(one_line(v.label(d.shapes[0]), 30), DIM))
        if len(d.shapes) > 1:
            line.append(f" +{len(d.shapes) - 1}", DIM)
    return line
