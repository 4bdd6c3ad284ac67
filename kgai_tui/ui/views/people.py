"""PeopleView: who decided what as of the time slider, and what nobody touched since.

A table of :func:`people_obj` rows for the snapshot at the slider; under it the
highlighted person's supersession flow (how many of their decisions were replaced,
and by whom), each author's decisions per month as a sparkline, and the stale
elements (newest decision in force older than 180 days at the slider's moment, or
now). Enter on a person lists the elements they shaped in the side panel.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import DataTable, Static
from textual.worker import get_current_worker

from kgai_tui.core.reads.legend import MARKS, Status
from kgai_tui.ui.people import (
    Flow,
    elements_shaped,
    monthly_counts,
    spark,
    supersession_flows,
)
from kgai_tui.ui.safe_text import one_line, plain
from kgai_tui.ui.snapshot import Snapshot
from kgai_tui.ui.threads import thread_worker

STALE_AFTER: Final = 180 * 86400
"""An element is stale when its newest decision in force is older than this."""
MONTHS_SHOWN: Final = 48
"""The sparkline shows at most the last this many months."""
STALE_SHOWN: Final = 20
"""The stale list shows at most this many elements."""
COLUMNS: Final = (
    "who",
    "dec",
    f"{MARKS[Status.IN_FORCE]} force",
    f"{MARKS[Status.SUPERSEDED]} supers.",
    f"{MARKS[Status.DEAD_END]} dead",
    "elem.",
    f"{MARKS[Status.CONTESTED]} conf.",
    "first",
    "last",
)
"""The table's columns: the counts use the one legend's marks and add up to
``dec`` (in force + superseded + dead ends)."""
_DATES: Final = frozenset({"first", "last"})
_DATE_WIDTH: Final = len("2026-01-31")


def now() -> datetime:
    """The present (a function, so tests can fix it)."""
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class PeopleData:
    """Everything the view shows for one snapshot, computed off the UI thread."""

    people: list[dict[str, Any]]
    stale: list[dict[str, Any]]
    months: list[str]
    counts: dict[str, list[int]]
    at: datetime
    flows: dict[str, Flow]


def people_data(snapshot: Snapshot, at: datetime) -> PeopleData:
    """The people, the stale elements and the monthly counts of a snapshot."""
    from kgai_tui.core.reads.people import people_now, stale_obj

    p = snapshot.projection
    months, counts = monthly_counts(p)
    # As ``kgai-tui people`` reads them: the model's per-author totals (a walk
    # over a million decisions took 5.4 s); a view at a moment is walked.
    people = people_now(p)["people"]
    return PeopleData(
        people,
        stale_obj(p, STALE_AFTER, at)["stale"],
        months,
        counts,
        at,
        supersession_flows(p, people),
    )


def flow_line(flow: Flow) -> Text:
    """``alice: 2 of 5 decision(s) superseded — by bob ×1, carol ×1``."""
    line = plain(one_line(flow.author or "unknown", 24), "bold")
    if not flow.replaced:
        line.append(f": none of {flow.decisions} decision(s) superseded", "dim")
        return line
    line.append(f": {flow.replaced} of {flow.decisions} decision(s) superseded — by ")
    for n, (who, count) in enumerate(flow.by):
        if n:
            line.append(", ")
        line.append_text(plain(one_line(who or "unknown", 24)))
        line.append(f" ×{count}", "dim")
    return line


class PeopleView(Horizontal):
    """Left: people, flow, monthly bars and stale elements; right: shaped elements."""

    def __init__(self, *, id: str | None = None) -> None:
        """Start empty."""
        super().__init__(id=id)
        self.snapshot: Snapshot | None = None
        self.selected: str | None = None
        self.opened: str | None = None
        self.shaped: list[str] = []
        self._stale = False  # a snapshot arrived that is not counted yet
        self._flows: dict[str, Flow] = {}  # of the snapshot shown, per author

    def compose(self) -> ComposeResult:
        """Lay out the table, the lines under it and the side panel."""
        with Vertical(id="people-main"):
            yield Static(id="people-caption")
            table: DataTable[Text] = DataTable(
                id="people-table", cursor_type="row", zebra_stripes=True
            )
            yield table
            yield Static(id="people-flow")
            yield Static(id="people-bars")
            with VerticalScroll(id="people-stale-box"):
                yield Static(id="people-stale")
        with VerticalScroll(id="people-side"):
            yield Static(id="people-elements")

    def on_mount(self) -> None:
        """Add the columns once; the side panel waits for a person to be opened
        (until then the table has the whole width, its last column included).

        The two date columns are as wide as a date from the start: sized by their
        cells, their headers were drawn narrow when the screen was painted between
        the rows' arrival and the header's next refresh (a loaded machine caught it)."""
        table = self.query_one("#people-table", DataTable)
        for label in COLUMNS:
            table.add_column(label, width=_DATE_WIDTH if label in _DATES else None)
        self._show_elements()
        self.query_one("#people-side").display = self.opened is not None

    def show(self, snapshot: Snapshot) -> None:
        """Show the people as of a new snapshot (computed in a worker).

        Only while this view is on screen: counting every decision at the slider's
        moment takes seconds at a million, and every slider move used to start it
        here, hidden, competing with what the user was waiting for. Hidden, the
        view only notes the snapshot and counts when it is shown."""
        self.snapshot = snapshot
        self._stale = True
        if self.display:
            self._recount()

    def on_show(self) -> None:
        """Count for the snapshot that arrived while the view was hidden."""
        if self._stale:
            self._recount()

    def _recount(self) -> None:
        snapshot = self.snapshot
        if snapshot is None:
            return
        self._stale = False
        self._compute(snapshot, snapshot.moment or now())

    @thread_worker("people")
    def _compute(self, snapshot: Snapshot, at: datetime) -> None:
        data = people_data(snapshot, at)
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._present, snapshot, data)

    def _present(self, snapshot: Snapshot, data: PeopleData) -> None:
        if snapshot is not self.snapshot:
            return  # a newer snapshot is on its way
        table: DataTable[Text] = self.query_one("#people-table", DataTable)
        table.clear()
        self._flows = data.flows
        authors = [str(row["author"]) for row in data.people]
        for row in data.people:
            table.add_row(
                plain(
                    one_line(str(row["author"]) or "unknown", 16),
                    snapshot.palette.field,
                ),
                *(
                    Text(str(row[k]), justify="right")
                    for k in (
                        "decisions",
                        "in_force",
                        "superseded",
                        "dead_ends",
                        "elements",
                        "conflicts",
                    )
                ),
                Text((row["first"] or "—")[:10], "dim"),
                Text((row["last"] or "—")[:10], "dim"),
                key=str(row["author"]),
            )
        when = (
            "now" if snapshot.moment is None else data.at.strftime("%Y-%m-%d %H:%M UTC")
        )
        writers = len({w for row in data.people for w in row["writers"]})
        self.query_one("#people-caption", Static).update(
            Text(
                f"{len(authors)} people (authors) · {writers} writer(s) (installs) · "
                f"as of {when} · enter: what a person shaped",
                "dim",
            )
        )
        if self.selected not in authors:
            self.selected = authors[0] if authors else None
        if self.selected is not None:
            table.move_cursor(row=authors.index(self.selected))
        if self.opened is not None:
            self.shaped = (
                elements_shaped(snapshot.projection, self.opened)
                if self.opened in authors
                else []
            )
        self._show_flow()
        self._show_bars(data)
        self._show_stale(data)
        self._show_elements()

    @on(DataTable.RowHighlighted, "#people-table")
    def _highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.row_key.value is not None:
            self.selected = event.row_key.value
            self._show_flow()

    @on(DataTable.RowSelected, "#people-table")
    def _selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is None or self.snapshot is None:
            return
        self.opened = self.selected = event.row_key.value
        self.shaped = elements_shaped(self.snapshot.projection, self.opened)
        self._show_elements()
        self.query_one("#people-side").display = True

    def _show_flow(self) -> None:
        out = self.query_one("#people-flow", Static)
        if self.snapshot is None or self.selected is None:
            out.update(Text("No decisions recorded yet.", "dim"))
            return
        flow = self._flows.get(self.selected) or Flow(self.selected, 0, 0, ())
        out.update(flow_line(flow))

    def _show_bars(self, data: PeopleData) -> None:
        months = data.months[-MONTHS_SHOWN:]
        text = Text()
        if not months:
            text.append("no dated decisions", "dim")
        else:
            span = len(months)
            top = max(
                (max(c[-span:], default=0) for c in data.counts.values()), default=0
            )
            text.append(f"decisions per month, {months[0]} → {months[-1]}", "dim")
            for row in data.people:
                who = str(row["author"])
                counts = data.counts.get(who, [0] * len(data.months))[-span:]
                text.append("\n")
                text.append_text(plain(f"{one_line(who or 'unknown', 14):<14} "))
                text.append(f"{spark(counts, top)} ", self._palette_head())
                text.append(str(sum(counts)), "dim")
        self.query_one("#people-bars", Static).update(text)

    def _palette_head(self) -> Any:
        return self.snapshot.palette.head if self.snapshot is not None else ""

    def _show_stale(self, data: PeopleData) -> None:
        text = Text(
            f"stale (no decision in force for 180+ days): {len(data.stale)}", "dim"
        )
        for row in data.stale[:STALE_SHOWN]:
            age = row["age_days"]
            text.append("\n")
            text.append(f"{'undated' if age is None else f'{age}d':>6} ", "dim")
            text.append_text(plain(one_line(f"{row['kind']}:{row['name']}", 40)))
            text.append("  ")
            text.append_text(
                plain(
                    one_line(str(row["author"]) or "unknown", 16), self._palette_head()
                )
            )
        if len(data.stale) > STALE_SHOWN:
            text.append(f"\n… {len(data.stale) - STALE_SHOWN} more", "dim")
        self.query_one("#people-stale", Static).update(text)

    def _show_elements(self) -> None:
        out = self.query_one("#people-elements", Static)
        if self.opened is None:
            out.update(Text("enter on a person: the elements they shaped", "dim"))
            return
        text = plain(one_line(self.opened or "unknown", 24), "bold")
        text.append(f" shaped {len(self.shaped)} element(s)", "dim")
        for label in self.shaped:
            text.append("\n")
            text.append_text(plain(one_line(label, 60)))
        out.update(text)
