"""KgaiApp: the explorer. Owns the engine, the time slider, navigation and reloads.

All store work (open, replay at a moment, search, resolve) runs in thread workers;
results come back to the UI thread and are handed to the views as an immutable
:class:`Snapshot`. Navigation keeps a back stack across views (Escape and ``q``
pop it); the key bar under the slider shows the keys of the view in front. The
theme chosen in the palette is remembered in the user's config directory
(:mod:`kgai_tui.ui.preferences`). Sync lives in :mod:`kgai_tui.ui.sync_actions`.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, cast

from textual import on, work
from textual.app import ComposeResult, SystemCommand
from textual.binding import BindingType
from textual.events import DescendantFocus
from textual.screen import Screen
from textual.theme import Theme
from textual.widgets import Input
from textual.worker import Worker, WorkerState

from kgai_tui.ui.commands import bindings, system_commands
from kgai_tui.ui.diff_view import DiffMark, DiffModal
from kgai_tui.ui.live import LIVE_POLL_SECONDS, LiveReload
from kgai_tui.ui.palette import JumpProvider
from kgai_tui.ui.preferences import save_theme, saved_theme
from kgai_tui.ui.prepare import Prepared, prepare, prepare_preview
from kgai_tui.ui.screens import DecisionModal, HelpScreen, TextModal, doctor_report
from kgai_tui.ui.snapshot import (
    DecisionRequested,
    ElementRequested,
    ReloadRequested,
    Snapshot,
    StoryRequested,
)
from kgai_tui.ui.sync_actions import SyncActions, read_sync_status
from kgai_tui.ui.theme import Palette, palette_of
from kgai_tui.ui.views.agent import AgentScreen
from kgai_tui.ui.views.switcher import ViewSwitcher
from kgai_tui.ui.widgets.header import MomentBanner, StoreHeader
from kgai_tui.ui.widgets.key_bar import KeyBar
from kgai_tui.ui.widgets.time_slider import TimeSlider

if TYPE_CHECKING:
    from kgai_tui.core.engine.engine import Engine
    from kgai_tui.core.model.open import ModelEngine
    from kgai_tui.core.reads.moments import GraphDelta, TimeCursor
    from kgai_tui.core.replay.projection_view import ProjectionView
    from kgai_tui.sync.status import SyncStatus

#: How many places the back stack remembers.
BACK_DEPTH = 64


class KgaiApp(SyncActions):
    """Browse, search, time-travel and resolve a kgai store."""

    CSS_PATH = "styles/app.tcss"
    TITLE = "kgai-tui"
    COMMANDS = SyncActions.COMMANDS | {JumpProvider}

    BINDINGS: ClassVar[list[BindingType]] = bindings("app", "slider")

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
        self._live = LiveReload(root)
        self._revision = 0
        # Every load and every projection is numbered when asked for, on this
        # thread; only the latest one asked for is shown (a cancelled worker still
        # runs to its end, and a slow past moment can call back after a quick one).
        self._loads_asked = 0
        self._projections_asked = 0
        self.diff_mark = DiffMark()
        self._history_pending: tuple[Engine, bool] | None = None
        # Whether the slider's history was asked for (the whole store is read from
        # then on), and what the key that asked for it does once it is there.
        self._history_wanted = False
        self._after_history: str | datetime | None = None
        #: Where Escape and q go back to: (view, element shown there).
        self.back_stack: list[tuple[str, str | None]] = []
        #: An (element, decision id) to show once the next read lands.
        self._focus_after_load: tuple[str, str] | None = None
        #: Whether the project's .kgairc waits for approval (read with the store).
        self.pending_approval = False
        theme = saved_theme()
        if theme is not None and theme in self.available_themes:
            self.theme = theme
        self.palette: Palette = palette_of(self)
        self._theme_saved = True  # False once saving it has failed (warned once)
        self.sync_status: SyncStatus | None = None
        self.synced_at = None
        self._syncing = False

    def compose(self) -> ComposeResult:
        """Header, banner, the eight views, the slider and the key bar."""
        yield StoreHeader(id="header")
        yield MomentBanner(id="banner")
        yield ViewSwitcher(self.root, id="views")
        yield TimeSlider(id="slider")
        yield KeyBar("elements", id="keys")

    def on_mount(self) -> None:
        """Load the store in a worker; poll the shards for live changes."""
        self.query_one("#element-tree").focus()
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.query_one(StoreHeader).start_opening(self.label)
        self._load(keep_moment=False)
        if self.live:
            self.set_interval(LIVE_POLL_SECONDS, self._poll)

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Add the views and the store actions to the palette."""
        yield from super().get_system_commands(screen)
        yield from system_commands(self)

    # ------------------------------------------------------------------ loading

    def _load(self, keep_moment: bool) -> None:
        """Read the store again in a worker; ``keep_moment`` keeps the slider's place.

        The present is read through the read model when it holds the log:
        rows fetched from disk, no replay. The whole store is read once the
        history is wanted (the slider moved back), or when there is no model."""
        self._loads_asked += 1
        self._load_in_worker(keep_moment, self._history_wanted, self._loads_asked)

    @work(thread=True, exclusive=True, group="open", exit_on_error=False)
    def _load_in_worker(self, keep_moment: bool, whole: bool, asked: int) -> None:
        from kgai_tui.core.answers.config import pending_path
        from kgai_tui.core.reads.health import doctor_problems

        self.pending_approval = bool(pending_path())
        if not whole:
            model = self._open_model()
            if model is not None:
                self.call_from_thread(
                    self._model_loaded, *model, read_sync_status(self.root), asked
                )
                return
        from kgai_tui.core.engine.open import open_engine

        engine = open_engine(self.root)
        problems = doctor_problems(engine)
        status = read_sync_status(self.root)
        self.call_from_thread(
            self._loaded, engine, problems, keep_moment, status, asked=asked
        )

    def _open_model(self) -> tuple[ModelEngine, Prepared, list[str]] | None:
        """The read model, with the present's first paint and doctor's list, when
        it holds the log as it is (see :func:`open_model_if_current`)."""
        import sqlite3

        from kgai_tui.core.model.open import open_model_if_current
        from kgai_tui.core.model.rows import ModelCorruptError
        from kgai_tui.core.model.schema import model_enabled
        from kgai_tui.core.reads.health import doctor_problems

        model = open_model_if_current(self.root) if model_enabled() else None
        if model is None:
            return None
        try:
            prepared = prepare_preview(model.projection, self.palette)
            problems = doctor_problems(cast("Engine", model))
        except (sqlite3.Error, ModelCorruptError, OSError, ValueError, KeyError):
            model.close()  # the whole store answers instead, as without a model
            return None
        return model, prepared, problems

    def _model_loaded(
        self,
        model: ModelEngine,
        prepared: Prepared,
        problems: list[str],
        status: SyncStatus | None,
        asked: int,
    ) -> None:
        """Show the present from the read model; the slider's history waits until
        it is asked for (:class:`TimeSlider.HistoryWanted`)."""
        if asked != self._loads_asked or self._history_wanted:
            model.close()  # a newer load was asked for, or the whole store is
            return
        engine = cast("Engine", model)
        self._opened(engine, problems, status)
        self._history_pending = None
        slider = self.query_one(TimeSlider)
        slider.loading = False
        slider.set_moments([], keep=False)
        slider.on_demand = True
        projection = cast("ProjectionView", model.projection)
        self._present(engine, projection, None, None, prepared)

    def _opened(
        self, engine: Engine, problems: list[str], status: SyncStatus | None
    ) -> None:
        self.engine, self.cursor, self.problems = engine, None, problems
        if status is not None:
            self.sync_status = status
            self._show_remote()
        self._live.loaded()
        self.query_one(StoreHeader).opened()

    @on(TimeSlider.HistoryWanted)
    def _history_asked(self, event: TimeSlider.HistoryWanted) -> None:
        """Read the whole store once, for the slider; then do what the key asked.

        The slider's own line says the history is being read, and stops saying
        it when it is there (no notification that outlives the wait)."""
        event.stop()
        self._after_history = event.then
        if self._history_wanted:
            return  # on its way
        self._history_wanted = True
        self.query_one(TimeSlider).loading = True
        self._load(keep_moment=True)

    def _loaded(
        self,
        engine: Engine,
        problems: list[str],
        keep_moment: bool,
        status: SyncStatus | None = None,
        *,
        asked: int,
    ) -> None:
        if asked != self._loads_asked:
            return  # a newer load was asked for; its engine comes next
        self._history_wanted = True  # the whole store is read from now on
        self._opened(engine, problems, status)
        self._history_pending = (engine, keep_moment)
        slider = self.query_one(TimeSlider)
        slider.loading = True
        if not keep_moment or slider.at_now:
            self._project(None)
        else:  # the past stays on screen; its history comes next
            self._read_history()

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        """A failed open ends the opening clock and says why in the header."""
        worker = event.worker
        if worker.group != "open" or event.state != WorkerState.ERROR:
            return
        header = self.query_one(StoreHeader)
        header.opened()
        if self.snapshot is None:
            header.show_failure(str(worker.error), self.palette)

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
        then, self._after_history = self._after_history, None
        if then == "step":
            slider.action_step(-1)
        elif then == "month":
            slider.step_month(-1)
        elif then == "start":
            slider.jump(to_start=True)
        elif isinstance(then, datetime):
            slider.go_to(then)
        if not slider.at_now:  # the present is on screen already
            self._project(slider.moment)

    def _poll(self) -> None:
        if self._live.changed():
            self._load(keep_moment=True)

    @on(TimeSlider.Changed)
    def _slid(self, event: TimeSlider.Changed) -> None:
        self._project(event.slider.moment)

    def _project(self, moment: datetime | None) -> None:
        """Show the graph at ``moment`` (``None``: now), projected in a worker.

        What it projects from is taken here, on the UI thread, so a load landing
        meanwhile cannot mix into it."""
        engine, cursor = self.engine, self.cursor
        if engine is None or (moment is not None and cursor is None):
            return
        self._projections_asked += 1
        previous = self.snapshot.projection if self.snapshot is not None else None
        self._project_in_worker(
            engine, cursor, moment, previous, self.palette, self._projections_asked
        )

    @work(thread=True, exclusive=True, group="replay", exit_on_error=False)
    def _project_in_worker(
        self,
        engine: Engine,
        cursor: TimeCursor | None,
        moment: datetime | None,
        previous: ProjectionView | None,
        palette: Palette,
        asked: int,
    ) -> None:
        from kgai_tui.core.reads.moments import graph_delta

        projection = (
            engine.projection if moment is None or cursor is None else cursor.at(moment)
        )
        delta = graph_delta(previous, projection) if previous is not None else None
        prepared = prepare(projection, delta, palette)
        self.call_from_thread(
            self._projected, asked, engine, projection, moment, delta, prepared
        )

    def _projected(
        self,
        asked: int,
        engine: Engine,
        projection: ProjectionView,
        moment: datetime | None,
        delta: GraphDelta | None,
        prepared: Prepared,
    ) -> None:
        if asked != self._projections_asked:
            return  # the user moved on; the latest request's answer comes next
        self._present(engine, projection, moment, delta, prepared)

    def _present(
        self,
        engine: Engine,
        projection: ProjectionView,
        moment: datetime | None,
        delta: GraphDelta | None,
        prepared: Prepared,
        *,
        revision: int | None = None,
    ) -> None:
        """Show new data (or, given its ``revision``, the same data in a new look)."""
        if revision is None:
            self._revision += 1
            revision = self._revision
        previous = self.snapshot.engine if self.snapshot is not None else None
        self.snapshot = Snapshot(
            engine, projection, moment, delta, revision, prepared.palette
        )
        self.query_one(StoreHeader).show_snapshot(
            self.label,
            self.snapshot,
            decisions=prepared.decisions,
            writers=prepared.writers,
            problems=len(self.problems),
            pending=self.pending_approval,
        )
        self.query_one(MomentBanner).show_moment(moment, delta)
        views = self.query_one(ViewSwitcher)
        self.selected_element = views.present(
            self.snapshot, prepared.elements, self.selected_element
        )
        if previous is not None and previous is not engine:
            _close_model(previous)  # no view holds its rows any more
        # O(decisions) work waits until this view is painted: the timeline, then,
        # once per load, the time index for the slider.
        self.call_after_refresh(views.show_timeline, self.snapshot)
        self.call_after_refresh(self._read_history)
        if prepared.palette != self.palette:  # the theme changed meanwhile
            self._restyle(self.snapshot, self.palette)
        focus, self._focus_after_load = self._focus_after_load, None
        if focus is not None and moment is None:
            self._show_new_decision(*focus)

    # ------------------------------------------------------------------ theme

    def _theme_changed(self, theme: Theme) -> None:
        """Redraw in the new theme's colours and remember it for the next start."""
        palette = palette_of(self)
        if palette != self.palette:
            self.palette = palette
            if self.snapshot is not None:
                self._restyle(self.snapshot, palette)
        try:
            save_theme(theme.name)
        except OSError as exc:
            if self._theme_saved:
                self.notify(
                    f"Could not remember the theme: {exc}",
                    severity="warning",
                    markup=False,
                )
            self._theme_saved = False

    @work(thread=True, exclusive=True, group="restyle", exit_on_error=False)
    def _restyle(self, snapshot: Snapshot, palette: Palette) -> None:
        prepared = prepare(snapshot.projection, snapshot.delta, palette)
        self.call_from_thread(self._restyled, snapshot, prepared)

    def _restyled(self, snapshot: Snapshot, prepared: Prepared) -> None:
        if snapshot is not self.snapshot or prepared.palette != self.palette:
            return  # newer data or another theme is on its way
        self._present(
            snapshot.engine,
            snapshot.projection,
            snapshot.moment,
            snapshot.delta,
            prepared,
            revision=snapshot.revision,
        )

    # ------------------------------------------------------------------ navigation

    @property
    def current_view(self) -> str:
        """The id of the view in front."""
        return self.query_one(ViewSwitcher).current or "elements"

    def show_view(self, key: str, *, remember: bool = True) -> None:
        """Switch to a view by id; ``remember`` the one left for Escape and ``q``."""
        if remember and key != self.current_view:
            self._remember()
        self.query_one(ViewSwitcher).show_view(key)
        self._show_keys()

    def _remember(self) -> None:
        place = (self.current_view, self.selected_element)
        if not self.back_stack or self.back_stack[-1] != place:
            self.back_stack.append(place)
            del self.back_stack[:-BACK_DEPTH]

    def action_view(self, key: str) -> None:
        """Show one of the eight views (keys 1 to 8)."""
        self.show_view(key)

    def action_query_example(self, n: int) -> None:
        """A saved query of the palette, in the Query view, run."""
        from kgai_tui.ui.views.query import QueryView
        from kgai_tui.ui.views.query_examples import QUERY_EXAMPLES

        self.show_view("query")
        self.query_one(QueryView).set_query(QUERY_EXAMPLES[n][1])

    def action_search_box(self) -> None:
        """The Search view, its box focused (``/``)."""
        self.show_view("search")
        self.query_one("#search-input").focus()

    def action_go_back(self) -> None:
        """Back one level: leave a text box, else return to the previous place."""
        if self.query_one(ViewSwitcher).leave_text():
            self._show_keys()
            return
        if not self.back_stack:
            return
        view, element = self.back_stack.pop()
        if element is not None and element != self.selected_element:
            self.selected_element = element
            if self.snapshot is not None:
                self.query_one(ViewSwitcher).select_element(self.snapshot, element)
        self.show_view(view, remember=False)

    def action_quit_or_back(self) -> None:
        """``q``: back one level, or quit when there is nothing to go back to."""
        if self.back_stack:
            self.action_go_back()
        else:
            self.exit()

    @on(DescendantFocus)
    def _focus_moved(self, _: DescendantFocus) -> None:
        self._show_keys()

    def _show_keys(self) -> None:
        """The key bar follows the view in front (and says whether q goes back)."""
        self.query_one(KeyBar).show_scope(self.current_view, back=bool(self.back_stack))

    def action_slide(self, delta: int) -> None:
        """Step the slider by one recorded moment."""
        self.query_one(TimeSlider).action_step(delta)

    def action_slide_month(self, direction: int) -> None:
        """Step the slider by about a month."""
        self.query_one(TimeSlider).step_month(direction)

    def action_slide_to(self, where: str) -> None:
        """Jump the slider to the first moment or to now."""
        self.query_one(TimeSlider).jump(to_start=where == "start")

    def action_goto_moment(self) -> None:
        """Ask for a moment (a date, ``-3m``) and move the slider there."""
        from kgai_tui.core.clock import now
        from kgai_tui.ui.moment import MomentScreen

        slider = self.query_one(TimeSlider)
        first = slider.moments[0] if slider.moments else None
        self.push_screen(MomentScreen(now(), first), self._moment_chosen)

    def _moment_chosen(self, moment: datetime | None) -> None:
        if moment is not None:
            self.query_one(TimeSlider).go_to(moment)

    def action_agent(self) -> None:
        """Show the exact recall payload an agent gets for a path or topic."""
        paths = ""
        if self.current_view == "paths":
            paths = self.query_one("#paths-input", Input).value
        self.push_screen(AgentScreen(self.root, lambda: self.engine, paths=paths))

    def action_mark_moment(self) -> None:
        """Mark the slider position; ``D`` then shows what changed since."""
        self.diff_mark.mark(self)

    def action_diff_since_mark(self) -> None:
        """Show the diff between the marked slider position and this one."""
        self.diff_mark.show(self, self.engine)

    def action_diff_last(self, days: int) -> None:
        """Show what changed in the ``days`` up to the slider's moment."""
        from kgai_tui.core.clock import now

        if self.engine is None:
            self.notify("The store is still loading.", markup=False)
            return
        end = self.query_one(TimeSlider).moment
        start = (end or now()) - timedelta(days=days)
        self.push_screen(DiffModal(self.engine, start, end))

    def action_help(self) -> None:
        """Show every key."""
        self.push_screen(HelpScreen(self.palette))

    def action_doctor(self) -> None:
        """Show the integrity report."""
        self.push_screen(TextModal(doctor_report(self.problems, self.palette)))

    @on(ReloadRequested)
    def _reload_requested(self, event: ReloadRequested) -> None:
        """A view wrote to the store: re-read it, then show what it asked for."""
        self._focus_after_load = event.focus
        self.action_reload()

    def action_reload(self) -> None:
        """Re-read the shards now (keeping the slider's moment)."""
        self._load(keep_moment=True)

    def _show_new_decision(self, element_id: str, decision_id: str) -> None:
        """After a resolution: the element in Elements, the new decision selected."""
        self.open_element(element_id)
        self.query_one(ViewSwitcher).highlight_decision(decision_id)

    def open_element(self, element_id: str, view: str = "elements") -> None:
        """Show an element in the Elements (or Graph) view."""
        if element_id != self.selected_element or view != self.current_view:
            self._remember()
        self.selected_element = element_id
        if self.snapshot is not None:
            self.query_one(ViewSwitcher).select_element(self.snapshot, element_id)
        self.show_view(view, remember=False)

    def open_decision(self, index: int) -> None:
        """Open a decision's full record."""
        if self.snapshot is None:
            return
        self.push_screen(
            DecisionModal(
                self.snapshot.view,
                index,
                self.snapshot.mutations_of(index),
                palette=self.palette,
            ),
            self._after_decision,
        )

    def _after_decision(self, choice: str | None) -> None:
        if not choice or self.snapshot is None:
            return
        kind, _, ref = choice.partition(":")
        if kind == "e":
            self.open_element(ref)
        elif (index := self.snapshot.view.decision_index(ref)) is not None:
            self.open_decision(index)

    @on(ElementRequested)
    def _element_requested(self, event: ElementRequested) -> None:
        self.open_element(event.element_id, event.view)

    @on(DecisionRequested)
    def _decision_requested(self, event: DecisionRequested) -> None:
        self.open_decision(event.decision_index)

    @on(StoryRequested)
    def _story_requested(self, event: StoryRequested) -> None:
        from kgai_tui.ui.story import StoryScreen

        if self.snapshot is not None:
            self.push_screen(
                StoryScreen(self.snapshot.view, event.element_id, palette=self.palette),
                self._after_decision,
            )


def _close_model(engine: Engine) -> None:
    """Close a store read through its model (a whole store holds no connection)."""
    from kgai_tui.core.model.open import ModelEngine

    if isinstance(engine, ModelEngine):
        engine.close()


def make_app(root: Path, *, label: str | None = None, live: bool = True) -> KgaiApp:
    """Build the app exactly as the CLI does (tests call this too)."""
    return KgaiApp(root, label=label, live=live)
