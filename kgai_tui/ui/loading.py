"""Reading the store for the explorer: the present from the read model (built on a
first open, its history saved from the same replay right after), the slider's
history (with the first view, once the user is still, or when a key asks), and
the graph at the slider's moment.

A mixin of :class:`~kgai_tui.ui.app.KgaiApp`. All store work runs in thread
workers; results come back to the UI thread and are handed to the views as an
immutable :class:`Snapshot`. Every load and every projection is numbered when it
is asked for, on the UI thread, and only the latest one asked for is shown.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Final

from textual import on
from textual.worker import Worker, WorkerState

from kgai_tui.core.store.shards import log_extent
from kgai_tui.ui.idle_gc import IdleCollector
from kgai_tui.ui.live import LiveReload
from kgai_tui.ui.navigation import Navigation
from kgai_tui.ui.prepare import Prepared, prepare
from kgai_tui.ui.snapshot import ReloadRequested, Snapshot
from kgai_tui.ui.sync_actions import read_sync_status
from kgai_tui.ui.theme import Palette
from kgai_tui.ui.threads import thread_worker
from kgai_tui.ui.views.switcher import ViewSwitcher
from kgai_tui.ui.widgets.header import MomentBanner, StoreHeader
from kgai_tui.ui.widgets.time_slider import TimeSlider

if TYPE_CHECKING:
    from kgai_tui.core.engine.engine import Engine
    from kgai_tui.core.reads.moments import GraphDelta, TimeCursor
    from kgai_tui.core.reads.store import Store
    from kgai_tui.core.replay.projection_view import ProjectionView
    from kgai_tui.sync.status import SyncStatus


#: Below this many bytes of log (about 10k decisions) the slider's history comes
#: with the first view; above it, once the user has been still for a moment
#: after it (:data:`PRELOAD_IDLE_SECONDS`), or when a key asks for it.
EAGER_HISTORY_BYTES: Final = 8 << 20
#: Up to this many bytes of log (about 2.5M decisions) the history is read
#: unasked once the present is on screen and the user is still: at 1M decisions
#: it takes ~0.6 s and ~110 MB, which the first step back then waited on. Above
#: it a look at the present never pays for it (it grows with the log), and a
#: key asks. Once a session: a reload before the slider moved drops it.
PRELOAD_HISTORY_BYTES: Final = 2 << 30
#: How long the user is still (no load, no slider move) before the preload.
PRELOAD_IDLE_SECONDS: Final = 1.0


class StoreLoading(Navigation):
    """The load workers, the slider's history and moments, and presenting a
    snapshot."""

    label: str
    cursor: TimeCursor | None
    pending_approval: bool
    _live: LiveReload
    _revision: int
    _loads_asked: int
    _projections_asked: int
    _history_saving: bool
    _history_wanted: bool
    _history_preloaded: bool
    _preload_spent: bool
    _after_history: str | datetime | None
    _focus_after_load: tuple[str, str] | None
    collector: IdleCollector

    def _load(self, keep_moment: bool) -> None:
        """Read the store again in a worker; ``keep_moment`` keeps the slider's place.

        The store is read through its read model, built first when there is none
        for this log; the slider's history comes with it once it is wanted."""
        self._loads_asked += 1
        self.collector.busy()
        if self._history_preloaded:
            # Read unasked and never used: not kept current at every append (at
            # 1M, 3-4 s of folding and a 230 MB save each); a key asks again.
            self._history_preloaded = self._history_wanted = False
        # A reload while the present is shown (a teammate's events arrived, a
        # write) shows the new present first: bringing the history up to date
        # folds the appended lines into it and saves it (at 1M decisions, ~4 s
        # for 1,000 events), and the present never waited for it before either.
        present_first = (
            keep_moment
            and self.cursor is not None
            and self.query_one(TimeSlider).at_now
        )
        self._load_in_worker(
            keep_moment, self._history_wanted, self._loads_asked, present_first
        )

    @thread_worker("open")
    def _load_in_worker(
        self, keep_moment: bool, history: bool, asked: int, present_first: bool
    ) -> None:
        from kgai_tui.core.answers.config import pending_path
        from kgai_tui.core.model.read import read_store
        from kgai_tui.core.reads.moments import TimeCursor

        self.pending_approval = bool(pending_path())
        history = history or log_extent(self.root / "log")[1] < EAGER_HISTORY_BYTES
        replays: list[Engine] = []

        def replayed(replay: Engine) -> None:
            """A first open: the log's replay, made to build the model from. A
            big log's present is shown from it while the model is written."""
            replays.append(replay)
            if not history:
                self._history_saving = True  # from this replay, once the model is
                self._show(replay, None, keep_moment, asked)

        try:
            opened = read_store(self.root, replayed=replayed, any_thread=True)
        except BaseException:
            self._history_saving = False
            raise
        replay, kept = (replays[0] if replays else None), opened.kept
        if replay is not None and kept is not None and history:
            self._save_history(replay, kept.model_path, then=False)
            replay = None  # saved from it before the first view: a small log
        if history and present_first:
            self._show(opened, None, keep_moment, asked)
            try:
                history_now = TimeCursor.of_store(opened)
            except BaseException:
                self.call_from_thread(self._history_failed, opened)
                raise
            self.call_from_thread(self._cursor_ready, opened, history_now, keep_moment)
            return
        try:
            cursor = TimeCursor.of_store(opened) if history else None
            self._show(opened, cursor, keep_moment, asked)
        except BaseException:
            opened.close()
            raise
        if replay is not None and kept is not None:
            self._save_history(replay, kept.model_path)

    def _show(
        self,
        opened: Store,
        cursor: TimeCursor | None,
        keep_moment: bool,
        asked: int,
    ) -> None:
        """Prepare the first paint of ``opened`` here, in the worker, then show it."""
        from kgai_tui.core.reads.health import doctor_problems

        prepared = prepare(opened.projection, None, self.palette)
        problems = doctor_problems(opened)
        status = read_sync_status(self.root)
        self.call_from_thread(
            self._store_loaded,
            opened,
            prepared,
            problems,
            cursor,
            keep_moment,
            status,
            asked,
        )

    def _save_history(
        self, replay: Engine, model_file: Path, *, then: bool = True
    ) -> None:
        """Save the slider's history (the time index) from the replay a first open
        built the model from, so the first step back needs no second replay;
        ``then``: tell the app when it is saved (it was on screen without it)."""
        from kgai_tui.core.model.history import save_history

        try:
            save_history(replay, model_file)
        finally:
            if then:
                self.call_from_thread(self._history_saved)

    def _history_saved(self) -> None:
        self._history_saving = False
        if self._history_wanted and self.cursor is None:
            self._load(keep_moment=True)  # asked for while it was being saved

    def _store_loaded(
        self,
        opened: Store,
        prepared: Prepared,
        problems: list[str],
        cursor: TimeCursor | None,
        keep_moment: bool,
        status: SyncStatus | None,
        asked: int,
    ) -> None:
        """Show the present, and the slider's history when it came with it; else
        the history waits until it is asked for (:class:`TimeSlider.HistoryWanted`)."""
        if asked != self._loads_asked:
            opened.close()  # a newer load was asked for
            return
        self._opened(opened, problems, status)
        slider = self.query_one(TimeSlider)
        if cursor is None:
            slider.loading = self._history_wanted
            slider.set_moments([], keep=False)
            slider.on_demand = True
            self._present(opened, opened.projection, None, None, prepared)
            if not self._preload_spent:
                self.set_timer(PRELOAD_IDLE_SECONDS, lambda: self._preload(opened))
            return
        self._history_wanted = True  # it came: every reload brings it from now on
        if not keep_moment or slider.at_now:
            self._present(opened, opened.projection, None, None, prepared)
        self._cursor_ready(opened, cursor, keep_moment)

    def _opened(
        self, engine: Store, problems: list[str], status: SyncStatus | None
    ) -> None:
        self.engine, self.cursor, self.problems = engine, None, problems
        self.collector.loaded()
        if status is not None:
            self.sync_status = status
            self._show_remote()
        self._live.loaded()
        self.query_one(StoreHeader).opened()

    @on(TimeSlider.HistoryWanted)
    def _history_asked(self, event: TimeSlider.HistoryWanted) -> None:
        """Read the slider's history once; then do what the key asked.

        The slider's own line says the history is being read, and stops saying
        it when it is there (no notification that outlives the wait)."""
        event.stop()
        self._after_history = event.then
        if self._history_wanted:  # on its way (asked before, or read unasked)
            self.query_one(TimeSlider).loading = True
            return
        self._history_wanted = True
        self.query_one(TimeSlider).loading = True
        if self._history_saving:
            return  # the save asks for it when done
        if self.engine is None:
            self._load(keep_moment=True)
        else:
            self._history_in_worker(self.engine, asked=True)

    def _preload(self, engine: Store) -> None:
        """Read the slider's history unasked once the user is still, for a log
        small enough (:data:`PRELOAD_HISTORY_BYTES`): the first step back then
        shows at once. Nothing on screen changes until it is there."""
        if engine is not self.engine or self._history_wanted:
            return  # replaced by a newer load, or read already
        still = self.collector.still_for()
        if self._history_saving or still < PRELOAD_IDLE_SECONDS:
            wait = max(PRELOAD_IDLE_SECONDS - still, 0.1)
            self.set_timer(wait, lambda: self._preload(engine))
            return
        if log_extent(self.root / "log")[1] >= PRELOAD_HISTORY_BYTES:
            return
        self._history_wanted = self._history_preloaded = self._preload_spent = True
        self._history_in_worker(engine, asked=False)

    @thread_worker("history")
    def _history_in_worker(self, engine: Store, *, asked: bool) -> None:
        """The history of the store on screen (its time index), without opening
        it again: a reload re-read and re-drew the present first (at 1M, the first
        step back took 1.5 s, a third of it that). A log that changed meanwhile
        is reloaded by the live poll, which brings the history too.

        When it fails, history a key ``asked`` for is read with a fresh open;
        a preload's only leaves the slider as it was (a key asks again)."""
        from kgai_tui.core.reads.moments import TimeCursor

        try:
            cursor = TimeCursor.of_store(engine)
            cursor.warm()  # the first step back needs it
        except Exception:
            if asked:
                self.call_from_thread(self._load, True)  # read it with a fresh open
            else:
                self.call_from_thread(self._history_failed, engine)
            raise
        self.call_from_thread(self._cursor_ready, engine, cursor, True)

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

    def _history_failed(self, engine: Store) -> None:
        """The history could not be read after the present was shown: the slider
        stops saying it is on its way (the next move asks for it again)."""
        if engine is not self.engine:
            return
        self._history_wanted = False
        slider = self.query_one(TimeSlider)
        slider.loading = False
        slider.on_demand = True

    def _cursor_ready(
        self, engine: Store, cursor: TimeCursor, keep_moment: bool
    ) -> None:
        if engine is not self.engine:
            return  # a newer load replaced it
        self.cursor = cursor
        self.collector.loaded()
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

    @on(ReloadRequested)
    def _reload_requested(self, event: ReloadRequested) -> None:
        """A view wrote to the store: re-read it, then show what it asked for."""
        self._focus_after_load = event.focus
        self.action_reload()

    def action_reload(self) -> None:
        """Re-read the shards now (keeping the slider's moment)."""
        self._load(keep_moment=True)

    def _poll(self) -> None:
        if self._live.changed():
            self._load(keep_moment=True)

    @on(TimeSlider.Changed)
    def _slid(self, event: TimeSlider.Changed) -> None:
        self._history_preloaded = False  # used: kept current like one asked for
        self._project(event.slider.moment)

    def _project(self, moment: datetime | None) -> None:
        """Show the graph at ``moment`` (``None``: now), projected in a worker.

        What it projects from is taken here, on the UI thread, so a load landing
        meanwhile cannot mix into it."""
        engine, cursor = self.engine, self.cursor
        if engine is None or (moment is not None and cursor is None):
            return
        self._projections_asked += 1
        self.collector.busy()
        previous = self.snapshot.projection if self.snapshot is not None else None
        self._project_in_worker(
            engine, cursor, moment, previous, self.palette, self._projections_asked
        )

    @thread_worker("replay")
    def _project_in_worker(
        self,
        engine: Store,
        cursor: TimeCursor | None,
        moment: datetime | None,
        previous: ProjectionView | None,
        palette: Palette,
        asked: int,
    ) -> None:
        from kgai_tui.core.heap import GcPaused
        from kgai_tui.core.reads.moments import graph_delta

        # A step builds ~100k objects (the view, its graph, the tree's rows);
        # collecting while it does walks the views kept for going back too: one
        # step in three took 0.1 s more at 1M (measured). A session's collector
        # is off already (ui.idle_gc); this holds for a worker outside one.
        with GcPaused():
            projection = (
                engine.projection
                if moment is None or cursor is None
                else cursor.at(moment)
            )
            delta = graph_delta(previous, projection) if previous is not None else None
            prepared = prepare(projection, delta, palette)
        self.call_from_thread(
            self._projected, asked, engine, projection, moment, delta, prepared
        )

    def _projected(
        self,
        asked: int,
        engine: Store,
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
        engine: Store,
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
        views.present(self.snapshot, prepared.elements)
        if previous is not None and previous is not engine:
            previous.close()  # no view holds its rows any more
        # O(decisions) work waits until this view is painted: the timeline.
        self.call_after_refresh(views.show_timeline, self.snapshot)
        if prepared.palette != self.palette:  # the theme changed meanwhile
            self._restyle(self.snapshot, self.palette)
        focus, self._focus_after_load = self._focus_after_load, None
        if focus is not None and moment is None:
            self._show_new_decision(*focus)

    @thread_worker("restyle")
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
