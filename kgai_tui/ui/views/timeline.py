"""TimelineView: every decision in time order, filtered, with a histogram over time."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Select, Sparkline, Static

from kgai_tui.core.projection_view import ProjectionView
from kgai_tui.core.reads import history_order
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


class TimelineView(Vertical):
    """Filters on top, a histogram, then the virtualised list."""

    def __init__(self, *, id: str | None = None) -> None:
        """Start empty."""
        super().__init__(id=id)
        self.snapshot: Snapshot | None = None
        self._order: list[int] = []

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
        """Render a new snapshot."""
        self.snapshot = snapshot
        p = snapshot.projection
        real = [i for i in range(len(p.dec_id)) if p.dec_hash[i]]
        self._order = history_order(p, real)
        self._set_options("#filter-writer", sorted({p.dec_install[i] for i in real}))
        self._set_options("#filter-author", sorted({p.dec_author[i] for i in real}))
        kinds = sorted(
            {(p.element(e) or ("", "", ""))[0] for i in real for e in p.dec_shapes[i]}
        )
        self._set_options("#filter-kind", [k for k in kinds if k])
        self._apply()

    def _set_options(self, selector: str, values: list[str]) -> None:
        select: Select[str] = self.query_one(selector, Select)
        current = select.value
        select.set_options([(one_line(v, 30) or "(none)", v) for v in values])
        if isinstance(current, str) and current in values:
            select.value = current

    @on(Select.Changed)
    def _filters_changed(self) -> None:
        self._apply()

    def _value(self, selector: str) -> str | None:
        value = self.query_one(selector, Select).value
        return value if isinstance(value, str) else None

    def _apply(self) -> None:
        if self.snapshot is None:
            return
        p = self.snapshot.projection
        writer = self._value("#filter-writer")
        author = self._value("#filter-author")
        kind = self._value("#filter-kind")
        status = self._value("#filter-status")
        head_set = {i for heads in p.heads.values() for i in heads}
        rows = []
        for i in self._order:
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
        self.query_one("#timeline-histogram", Sparkline).data = counts or [0]
        first = day(p, rows[0]) if rows else "—"
        last = day(p, rows[-1]) if rows else "—"
        self.query_one("#timeline-caption", Static).update(
            Text(
                f"{len(rows)} decision(s) · {first} → {last} · decisions per {unit}",
                "dim",
            )
        )

        def render(idx: int, width: int) -> Text:
            return _row(p, idx, head_set, width)

        self.query_one("#timeline-list", DecisionList).set_rows(rows, render)

    @on(DecisionList.Opened)
    def _open(self, event: DecisionList.Opened) -> None:
        self.post_message(DecisionRequested(event.index))


def _histogram(times: Sequence[int | None], rows: list[int]) -> tuple[list[float], str]:
    stamps = [times[i] for i in rows if times[i] is not None]
    if not stamps:
        return [], "week"
    lo, hi = (
        min(s for s in stamps if s is not None),
        max(s for s in stamps if s is not None),
    )
    weeks = (hi - lo) // _WEEK + 1
    if weeks <= 60:
        buckets = Counter((s - lo) // _WEEK for s in stamps if s is not None)
        return [float(buckets.get(b, 0)) for b in range(weeks)], "week"
    start = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=lo)
    months: Counter[int] = Counter()
    for s in stamps:
        if s is None:
            continue
        moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=s)
        months[(moment.year - start.year) * 12 + moment.month - start.month] += 1
    return [float(months.get(m, 0)) for m in range(max(months) + 1)], "month"


def _row(p: ProjectionView, idx: int, head_set: set[int], width: int) -> Text:
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
