"""KgaiApp: the explorer. Owns the engine, the time slider, the views and the theme.

The app is its parts: :class:`~kgai_tui.ui.loading.StoreLoading` reads the store
in workers and presents each :class:`~kgai_tui.ui.snapshot.Snapshot`,
:class:`~kgai_tui.ui.navigation.Navigation` keeps the views and the back stack,
:class:`~kgai_tui.ui.sync_actions.SyncActions` syncs. Here: the state they share,
the layout, the start, and the theme chosen in the palette, remembered in the
user's config directory (:mod:`kgai_tui.ui.preferences`).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from textual.app import ComposeResult, SystemCommand
from textual.binding import BindingType
from textual.screen import Screen
from textual.theme import Theme

from kgai_tui.ui.commands import bindings, system_commands
from kgai_tui.ui.diff_view import DiffMark
from kgai_tui.ui.idle_gc import TICK_SECONDS, IdleCollector
from kgai_tui.ui.key_order import OrderedKeys
from kgai_tui.ui.live import LIVE_POLL_SECONDS, LiveReload
from kgai_tui.ui.loading import StoreLoading
from kgai_tui.ui.palette import JumpProvider
from kgai_tui.ui.preferences import save_theme, saved_theme
from kgai_tui.ui.snapshot import Snapshot
from kgai_tui.ui.theme import Palette, palette_of
from kgai_tui.ui.views.switcher import ViewSwitcher
from kgai_tui.ui.widgets.header import MomentBanner, StoreHeader
from kgai_tui.ui.widgets.key_bar import KeyBar
from kgai_tui.ui.widgets.time_slider import TimeSlider

if TYPE_CHECKING:
    from datetime import datetime

    from kgai_tui.core.reads.moments import TimeCursor
    from kgai_tui.core.reads.store import Store
    from kgai_tui.sync.status import SyncStatus


class KgaiApp(OrderedKeys, StoreLoading):
    """Browse, search, time-travel and resolve a kgai store (its keys read in the
    order typed, :mod:`kgai_tui.ui.key_order`)."""

    CSS_PATH = "styles/app.tcss"
    TITLE = "kgai-tui"
    COMMANDS = StoreLoading.COMMANDS | {JumpProvider}

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
        self.engine: Store | None = None
        self.cursor: TimeCursor | None = None
        self.problems: list[str] = []
        self._live = LiveReload(root)
        self._revision = 0
        # Every load and every projection is numbered when asked for, on this
        # thread; only the latest one asked for is shown (a cancelled worker still
        # runs to its end, and a slow past moment can call back after a quick one).
        self._loads_asked = 0
        self._projections_asked = 0
        self.diff_mark = DiffMark()
        self._history_saving = False
        # Whether the slider's history was asked for (every load brings it from
        # then on), and what the key that asked for it does once it is there.
        self._history_wanted = False
        # The history was read unasked and the slider not moved since (a reload
        # then drops it), and whether this session read it unasked already.
        self._history_preloaded = False
        self._preload_spent = False
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
        self.collector = IdleCollector()
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
        # Before any worker: a worker's GcPaused would otherwise see the
        # collector on, and switch it back on after this took it over.
        self.collector.start()
        self.set_interval(TICK_SECONDS, self.collector.tick)
        self.query_one("#element-tree").focus()
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.query_one(StoreHeader).start_opening(self.label)
        self._load(keep_moment=False)
        if self.live:
            self.set_interval(LIVE_POLL_SECONDS, self._poll)

    def on_unmount(self) -> None:
        """Give the cyclic collector back (a test runs many sessions in one process)."""
        self.collector.stop()

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Add the views and the store actions to the palette."""
        yield from super().get_system_commands(screen)
        yield from system_commands(self)

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


def make_app(root: Path, *, label: str | None = None, live: bool = True) -> KgaiApp:
    """Build the app exactly as the CLI does (tests call this too)."""
    return KgaiApp(root, label=label, live=live)
