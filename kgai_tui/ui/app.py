"""KgaiApp: the explorer. Owns the engine, the time slider and the live reload.

All store work (open, replay at a moment, search, resolve) runs in thread workers;
results come back to the UI thread and are handed to the views as an immutable
:class:`Snapshot`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from time import monotonic
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on, work
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import ContentSwitcher, Input, Static
from textual.worker import Worker, WorkerState

from kgai_tui.ui.diff_view import DiffMark
from kgai_tui.ui.render import element_label
from kgai_tui.ui.safe_text import one_line, plain
from kgai_tui.ui.screens import DecisionModal, HelpScreen, ResolveModal, TextModal
from kgai_tui.ui.snapshot import DecisionRequested, ElementRequested, Snapshot
from kgai_tui.ui.views.agent import AgentScreen
from kgai_tui.ui.views.conflicts import ConflictsView
from kgai_tui.ui.views.elements import ElementRows, ElementsView, element_rows
from kgai_tui.ui.views.graph import GraphView
from kgai_tui.ui.views.search import SearchView
from kgai_tui.ui.views.timeline import TimelineView
from kgai_tui.ui.widgets.footer import QuietFooter
from kgai_tui.ui.widgets.time_slider import TimeSlider

if TYPE_CHECKING:
    # Imported where used: the engine (and networkx under it) loads in the opening
    # worker while the first screen is already up.
    from kgai_tui.core.engine.engine import Engine
    from kgai_tui.core.reads.moments import GraphDelta, TimeCursor
    from kgai_tui.core.replay.projection_view import ProjectionView
    from kgai_tui.core.store.shard_print import LogPrint

VIEWS: list[tuple[str, str]] = [
    ("elements", "Elements"),
    ("graph", "Graph"),
    ("timeline", "Timeline"),
    ("conflicts", "Conflicts"),
    ("search", "Search"),
]
LIVE_POLL_SECONDS = 1.0
OPENING_TICK_SECONDS = 0.1


def shard_fingerprint(root: Path) -> LogPrint:
    """The log's fingerprint (:mod:`shard_print`): changes on every append or edit."""
    from kgai_tui.core.store.shard_print import log_print

    return log_print(root / "log")


class JumpProvider(Provider):
    """Command palette: jump to any element or decision by name."""

    def _items(self) -> list[tuple[str, str, str]]:
        app = self.app
        assert isinstance(app, KgaiApp)
        snapshot = app.snapshot
        if snapshot is None:
            return []
        p = snapshot.projection
        items = [(f"element: {element_label(p, e)}", "e", e) for e in p.graph.nodes]
        items += [
            (f"decision: {p.dec_title[i]}", "d", str(i))
            for i in range(len(p.dec_id))
            if p.dec_title[i]
        ]
        return items

    async def discover(self) -> Hits:
        """Offer the views when the palette opens."""
        app = self.app
        assert isinstance(app, KgaiApp)
        for key, title in VIEWS:
            yield DiscoveryHit(
                f"view: {title}",
                partial(app.show_view, key),
                help=f"Show the {title} view",
            )

    async def search(self, query: str) -> Hits:
        """Fuzzy-match element names and decision titles."""
        app = self.app
        assert isinstance(app, KgaiApp)
        matcher = self.matcher(query)
        for label, kind, ref in self._items():
            score = matcher.match(label)
            if score > 0:
                action = (
                    partial(app.open_element, ref)
                    if kind == "e"
                    else partial(app.open_decision, int(ref))
                )
                yield Hit(score, matcher.highlight(one_line(label, 100)), action)


class KgaiApp(App[None]):
    """Browse, search, time-travel and resolve a kgai store."""

    CSS_PATH = "styles/app.tcss"
    TITLE = "kgai-tui"
    COMMANDS = App.COMMANDS | {JumpProvider}

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1", "view('elements')", "Elements", id="kgai.view.elements"),
        Binding("2", "view('graph')", "Graph", id="kgai.view.graph"),
        Binding("3", "view('timeline')", "Timeline", id="kgai.view.timeline"),
        Binding("4", "view('conflicts')", "Conflicts", id="kgai.view.conflicts"),
        Binding("5", "view('search')", "Search", id="kgai.view.search"),
        Binding("6", "agent", "Agent", show=False, id="kgai.view.agent"),
        Binding("slash", "focus_search", "Search", show=False, id="kgai.search.focus"),
        Binding(
            "left_square_bracket",
            "slide(-1)",
            "Earlier",
            show=False,
            id="kgai.slider.prev",
        ),
        Binding(
            "right_square_bracket",
            "slide(1)",
            "Later",
            show=False,
            id="kgai.slider.next",
        ),
        Binding(
            "left_curly_bracket",
            "slide_month(-1)",
            "Month back",
            show=False,
            id="kgai.slider.month-back",
        ),
        Binding(
            "right_curly_bracket",
            "slide_month(1)",
            "Month on",
            show=False,
            id="kgai.slider.month-on",
        ),
        Binding(
            "home",
            "slide_to('start')",
            "First",
            show=False,
            priority=True,
            id="kgai.slider.first",
        ),
        Binding(
            "end",
            "slide_to('end')",
            "Now",
            show=False,
            priority=True,
            id="kgai.slider.now",
        ),
        Binding("d", "doctor", "Doctor", show=False, id="kgai.store.doctor"),
        Binding("m", "mark_moment", "Mark", show=False, id="kgai.slider.mark"),
        Binding("D", "diff_since_mark", "Diff", show=False, id="kgai.slider.diff"),
        Binding("escape", "leave_text", "Back", show=False, id="kgai.back"),
        Binding("question_mark", "help", "Help", id="kgai.help"),
        Binding("q", "quit", "Quit", id="kgai.quit"),
    ]

    def __init__(
        self, root: Path, *, label: str | None = None, live: bool = True
    ) -> None:
        """Explore the store at ``root``; ``label`` names it in the header."""
        super().__init__()
        self.root = root
        self.label = label or str(root)
        self.live = live
        self.snapshot: Snapshot | None = None
        self.engine: Engine | None = None
        self.cursor: TimeCursor | None = None
        self.problems: list[str] = []
        self.selected_element: str | None = None
        self._fingerprint = shard_fingerprint(root)
        self._revision = 0
        self.diff_mark = DiffMark()
        self._history_pending: tuple[Engine, bool] | None = None
        self._opening: Timer | None = None
        self._opened_at = 0.0

    def compose(self) -> ComposeResult:
        """Header, banner, the five views, the slider and the footer."""
        yield Static(Text("kgai-tui · opening…", "bold"), id="header")
        yield Static(id="banner")
        with ContentSwitcher(initial="elements", id="views"):
            yield ElementsView(id="elements")
            yield GraphView(id="graph")
            yield TimelineView(id="timeline")
            yield ConflictsView(id="conflicts")
            yield SearchView(id="search")
        yield TimeSlider(id="slider")
        yield QuietFooter()

    def on_mount(self) -> None:
        """Load the store in a worker; poll the shards for live changes."""
        self.query_one("#element-tree").focus()
        self._opened_at = monotonic()
        self._opening = self.set_interval(OPENING_TICK_SECONDS, self._show_opening)
        self._load(keep_moment=False)
        if self.live:
            self.set_interval(LIVE_POLL_SECONDS, self._poll)

    def _show_opening(self) -> None:
        """Until the store is open, say so and how long it has taken."""
        if self.snapshot is not None:
            return
        text = Text("kgai-tui · opening ", "bold")
        text.append_text(plain(one_line(self.label, 60), "dim"))
        text.append(f" … {monotonic() - self._opened_at:.1f} s", "dim")
        self.query_one("#header", Static).update(text)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Add the views and the store actions to the palette."""
        yield from super().get_system_commands(screen)
        for key, title in VIEWS:
            yield SystemCommand(
                f"view: {title}", f"Show the {title} view", partial(self.show_view, key)
            )
        yield SystemCommand(
            "store: Doctor", "Integrity report of every shard", self.action_doctor
        )
        yield SystemCommand(
            "agent: what an agent sees",
            "Recall JSON for a path/topic",
            self.action_agent,
        )
        yield SystemCommand(
            "time: mark this position",
            "Remember the slider position for a diff",
            self.action_mark_moment,
        )
        yield SystemCommand(
            "time: diff since mark",
            "What changed between the marked position and this one, and why",
            self.action_diff_since_mark,
        )
        yield SystemCommand(
            "store: Reload",
            "Re-read the shards now",
            lambda: self._load(keep_moment=True),
        )

    # ------------------------------------------------------------------ loading

    @work(thread=True, exclusive=True, group="open", exit_on_error=False)
    def _load(self, keep_moment: bool) -> None:
        # The present first. The time index (built once per log, then cached) is
        # read only after the first view is on screen (see _present): threads share
        # one GIL, so reading it now would slow the first paint down.
        from kgai_tui.core.engine.open import open_engine
        from kgai_tui.core.reads.health import doctor_problems

        engine = open_engine(self.root)
        problems = doctor_problems(engine)
        self.call_from_thread(self._loaded, engine, problems, keep_moment)

    def _loaded(self, engine: Engine, problems: list[str], keep_moment: bool) -> None:
        self.engine, self.cursor, self.problems = engine, None, problems
        self._history_pending = (engine, keep_moment)
        self._fingerprint = shard_fingerprint(self.root)
        if self._opening is not None:
            self._opening.stop()
            self._opening = None
        slider = self.query_one(TimeSlider)
        slider.loading = True
        if not keep_moment or slider.at_now:
            self._show_position(None)
        else:  # the past stays on screen; its history comes next
            self._read_history()

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        """A failed open ends the opening clock and says why in the header."""
        worker = event.worker
        if worker.group != "open" or event.state != WorkerState.ERROR:
            return
        if self._opening is not None:
            self._opening.stop()
            self._opening = None
        if self.snapshot is None:
            text = Text("kgai-tui · could not open the store: ", "bold red")
            text.append_text(plain(one_line(str(worker.error), 100)))
            self.query_one("#header", Static).update(text)

    def _read_history(self) -> None:
        """Read the time index (the slider's moments) once per load, in a worker."""
        pending, self._history_pending = self._history_pending, None
        if pending is not None:
            self._history(*pending)

    @work(thread=True, exclusive=True, group="history", exit_on_error=False)
    def _history(self, engine: Engine, keep_moment: bool) -> None:
        from kgai_tui.core.reads.moments import TimeCursor

        cursor = TimeCursor.of_engine(engine)
        self.call_from_thread(self._cursor_ready, engine, cursor, keep_moment)

    def _cursor_ready(
        self, engine: Engine, cursor: TimeCursor, keep_moment: bool
    ) -> None:
        if engine is not self.engine:
            return  # a newer load replaced it
        self.cursor = cursor
        slider = self.query_one(TimeSlider)
        slider.loading = False
        slider.set_moments(cursor.moments, keep=keep_moment)
        if not slider.at_now:  # the present is on screen already
            self._show_position(slider.moment)

    def _poll(self) -> None:
        current = shard_fingerprint(self.root)
        if current != self._fingerprint:
            self._fingerprint = current
            self._load(keep_moment=True)

    @on(TimeSlider.Changed)
    def _slid(self, event: TimeSlider.Changed) -> None:
        self._show_position(event.slider.moment)

    def _show_position(self, moment: datetime | None) -> None:
        self._project(moment)

    @work(thread=True, exclusive=True, group="replay", exit_on_error=False)
    def _project(self, moment: datetime | None) -> None:
        from kgai_tui.core.reads.moments import graph_delta

        engine, cursor = self.engine, self.cursor
        if engine is None or (moment is not None and cursor is None):
            return
        projection = (
            engine.projection if moment is None or cursor is None else cursor.at(moment)
        )
        previous = self.snapshot.projection if self.snapshot is not None else None
        delta = graph_delta(previous, projection) if previous is not None else None
        prepared = _prepare(projection, delta)
        self.call_from_thread(
            self._present, engine, projection, moment, delta, prepared
        )

    def _present(
        self,
        engine: Engine,
        projection: ProjectionView,
        moment: datetime | None,
        delta: GraphDelta | None,
        prepared: Prepared,
    ) -> None:
        self._revision += 1
        self.snapshot = Snapshot(engine, projection, moment, delta, self._revision)
        self._render_chrome(prepared.decisions)
        self.query_one(ElementsView).show(self.snapshot, prepared.elements)
        if self.selected_element is None:
            self.selected_element = self.query_one(ElementsView).selected
        self.query_one(GraphView).show(self.snapshot, self.selected_element)
        self.query_one(ConflictsView).show(self.snapshot)
        self.query_one(SearchView).show(self.snapshot)
        # O(decisions) work waits until this view is painted: the timeline (ordering
        # every decision), then, once per load, the time index for the slider.
        self.call_after_refresh(self.query_one(TimelineView).show, self.snapshot)
        self.call_after_refresh(self._read_history)

    def _header_text(
        self, *, elements: int, decisions: int, writers: int, conflicts: int
    ) -> Text:
        """The header line; it abbreviates itself to fit narrow terminals."""
        narrow = self.size.width < 100
        label = self.label
        room = 18 if narrow else 34
        if len(label) > room:
            label = "…" + label[-(room - 1) :]
        header = Text("kgai-tui ", "bold")
        header.append_text(plain(one_line(label), "dim"))
        header.append(" │ ", "dim")
        if narrow:
            header.append(f"{elements} el · {decisions} dec · {writers} wr │ ")
        else:
            header.append(
                f"{elements} elements · {decisions} decisions · {writers} writers │ "
            )
        plural = "s" if conflicts != 1 else ""
        header.append(
            f"{conflicts} conflict{plural}"
            if narrow
            else f"{conflicts} open conflict{plural}",
            "bold red" if conflicts else "green",
        )
        header.append(" ")
        if self.problems:
            header.append(
                f" ✗ {len(self.problems)} problem(s) · d ", "bold white on red"
            )
        else:
            header.append(" ✓ healthy ", "bold black on green")
        return header

    def _render_chrome(self, decisions: int) -> None:
        snap = self.snapshot
        if snap is None:
            return
        p = snap.projection
        header = self._header_text(
            elements=p.graph.number_of_nodes(),
            decisions=decisions,
            writers=snap.writers,
            conflicts=len(p.contested),
        )
        self.query_one("#header", Static).update(header)
        banner = self.query_one("#banner", Static)
        if snap.moment is None:
            banner.update(Text("now · End returns here · [ ] step · { } month", "dim"))
            banner.remove_class("-past")
        else:
            text = Text(
                f"as of {snap.moment.strftime('%Y-%m-%d %H:%M:%S')} UTC", "bold"
            )
            if snap.delta is not None:
                text.append(f" · since last position: {snap.delta.describe()}")
            banner.update(text)
            banner.add_class("-past")

    # ------------------------------------------------------------------ navigation

    def show_view(self, key: str) -> None:
        """Switch to a view by id."""
        self.query_one(ContentSwitcher).current = key
        focus_target = {
            "elements": "#element-tree",
            "graph": "#graph",
            "timeline": "#timeline-list",
            "conflicts": "#conflict-list",
            "search": "#search-input",
        }[key]
        self.query_one(focus_target).focus()

    def action_leave_text(self) -> None:
        """Leave a text box for its view's main list."""
        current = self.query_one(ContentSwitcher).current or "elements"
        self.show_view(current if current != "search" else "search")
        if current == "search":
            self.query_one("#search-results").focus()

    def action_view(self, key: str) -> None:
        """Show one of the five views."""
        self.show_view(key)

    def action_focus_search(self) -> None:
        """Jump to the search box."""
        self.show_view("search")

    def action_slide(self, delta: int) -> None:
        """Step the slider by one recorded moment."""
        self.query_one(TimeSlider).action_step(delta)

    def action_slide_month(self, direction: int) -> None:
        """Step the slider by about a month."""
        self.query_one(TimeSlider).step_month(direction)

    def action_slide_to(self, where: str) -> None:
        """Jump the slider to the first moment or to now (in a text box: the cursor)."""
        focused = self.focused
        if isinstance(focused, Input):
            if where == "start":
                focused.action_home()
            else:
                focused.action_end()
            return
        slider = self.query_one(TimeSlider)
        slider.move_to(0 if where == "start" else len(slider.moments))

    def action_agent(self) -> None:
        """Show the exact recall payload an agent gets for a path or topic."""
        self.push_screen(AgentScreen(self.root, lambda: self.engine))

    def action_mark_moment(self) -> None:
        """Mark the slider position; ``D`` then shows what changed since."""
        self.diff_mark.mark(self)

    def action_diff_since_mark(self) -> None:
        """Show the diff between the marked slider position and this one."""
        self.diff_mark.show(self, self.engine)

    def action_help(self) -> None:
        """Show every key."""
        self.push_screen(HelpScreen())

    def action_doctor(self) -> None:
        """Show the integrity report."""
        if not self.problems:
            body = Text(
                "✓ every shard is sound: hashes, decision ids and chains check out.",
                "green",
            )
        else:
            body = Text(f"✗ {len(self.problems)} problem(s)\n\n", "bold red")
            for problem in self.problems:
                body.append_text(plain(problem))
                body.append("\n")
        self.push_screen(TextModal(body))

    def open_element(self, element_id: str, view: str = "elements") -> None:
        """Show an element in the Elements (or Graph) view."""
        self.selected_element = element_id
        if self.snapshot is not None:
            self.query_one(ElementsView).select(element_id)
            self.query_one(GraphView).show(self.snapshot, element_id)
        self.show_view(view)

    def open_decision(self, index: int) -> None:
        """Open a decision's full record."""
        if self.snapshot is None:
            return
        self.push_screen(
            DecisionModal(
                self.snapshot.projection, index, self.snapshot.mutations_of(index)
            ),
            self._after_decision,
        )

    def _after_decision(self, choice: str | None) -> None:
        if not choice or self.snapshot is None:
            return
        kind, _, ref = choice.partition(":")
        if kind == "e":
            self.open_element(ref)
        elif ref in self.snapshot.projection.dec_index:
            self.open_decision(self.snapshot.projection.dec_index[ref])

    @on(ElementRequested)
    def _element_requested(self, event: ElementRequested) -> None:
        self.open_element(event.element_id, event.view)

    @on(DecisionRequested)
    def _decision_requested(self, event: DecisionRequested) -> None:
        self.open_decision(event.decision_index)

    # ------------------------------------------------------------------ resolving

    @on(ConflictsView.ResolveDialogRequested)
    def _resolve_dialog(self, event: ConflictsView.ResolveDialogRequested) -> None:
        if self.snapshot is None:
            return
        element_id = event.element_id
        self.push_screen(
            ResolveModal(self.snapshot.projection, element_id),
            partial(self._resolve_chosen, element_id),
        )

    def _resolve_chosen(
        self, element_id: str, choice: tuple[str | None, str, str] | None
    ) -> None:
        if choice is None:
            return
        keep, title, rationale = choice
        self._resolve(element_id, keep, title, rationale)

    @work(thread=True, exclusive=True, group="write", exit_on_error=False)
    def _resolve(
        self, element_id: str, keep: str | None, title: str, rationale: str
    ) -> None:
        from kgai_tui.core.errors import KgaiError
        from kgai_tui.core.write.writes import resolve_conflict

        try:
            resolve_conflict(
                self.root,
                element_id,
                keep=keep,
                title=title or None,
                rationale=rationale or None,
            )
        except KgaiError as exc:
            self.call_from_thread(
                self.notify, str(exc).splitlines()[0], severity="error", markup=False
            )
            return
        self.call_from_thread(
            self.notify,
            "Conflict resolved: recorded one decision replacing every side.",
            markup=False,
        )
        self.call_from_thread(self._load, True)


@dataclass(frozen=True, slots=True)
class Prepared:
    """What the first view of a snapshot needs, computed in the worker that made it."""

    decisions: int
    elements: ElementRows


def _prepare(projection: ProjectionView, delta: GraphDelta | None) -> Prepared:
    """Do a snapshot's O(decisions) work for the header and the Elements view.

    Also builds the projection's lazy per-element index (``el_shapes``) here, which
    the details pane would otherwise build on the UI thread on first use.
    """
    projection.el_shapes.get("")
    return Prepared(
        decisions=len(projection.dec_hash) - projection.dec_hash.count(""),
        elements=element_rows(projection, delta.elements_added if delta else ()),
    )


def make_app(root: Path, *, label: str | None = None, live: bool = True) -> KgaiApp:
    """Build the app exactly as the CLI does (tests call this too)."""
    return KgaiApp(root, label=label, live=live)
