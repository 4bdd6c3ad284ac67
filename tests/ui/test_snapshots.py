"""SVG snapshots of every view on the demo store, at 120x40 and at 80x24 (and a few more)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from settle import settle
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from kgai_tui.sync.s3_remote import set_session_remote
from kgai_tui.ui import preferences
from kgai_tui.ui.app import make_app
from kgai_tui.ui.views import people as people_view

#: Every view, and the keys that show it with something in it.
VIEWS: dict[str, tuple[str, ...]] = {
    "elements": ("1",),
    "graph": ("2",),
    "timeline": ("3",),
    "conflicts": ("4",),
    "search": ("5", *"invoice", "enter"),
    "paths": ("6", *"services/checkout/order/api.go", "enter"),
    "people": ("7",),
}

#: Every dialog, and the keys that open it (the resolve screen at each step).
DIALOGS: dict[str, tuple[str, ...]] = {
    "resolve-choose": ("4", "r"),
    "resolve-write": ("4", "r", "n", *"Sold-out stays 30 days, marked"),
    "resolve-confirm": ("4", "r", "1"),
    "story": ("1", "s"),
    "decision": ("3", "enter"),
    "help": ("question_mark",),
    "moment": ("t", *"-3m"),
    "diff": ("m", "left_curly_bracket", "left_curly_bracket", "D"),
    "agent": ("A", *"services/payments/*"),
}

SIZES = pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])


@pytest.fixture(autouse=True)
def fixed_now(monkeypatch: pytest.MonkeyPatch) -> None:
    """ "3 months ago" and the moment dialog read the clock: fix it."""
    monkeypatch.setenv("KGAI_TUI_NOW", "2026-06-15T00:00:00Z")
    monkeypatch.setattr(people_view, "now", lambda: datetime(2026, 12, 1, tzinfo=UTC))


def _steady_cursors(pilot: Pilot[None]) -> None:
    """Inputs show their cursor solid: a blinking one is drawn or not depending on
    when the screen is taken (a loaded machine caught it off)."""
    for box in pilot.app.screen.query(Input):
        box.cursor_blink = False
    for area in pilot.app.screen.query(TextArea):
        area.cursor_blink = False


def _before(key: str, extra: tuple[str, ...] = ()) -> Callable[[Pilot[None]], Any]:
    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        for one in (key, *extra):
            await pilot.press(one)
            await pilot.pause()
        await pilot.pause(0.4)  # past the search and path boxes' debounce timers
        await settle(pilot)
        _steady_cursors(pilot)
        # A toast lasts a few seconds of wall time: on a loaded machine it was
        # gone before the picture (the diff dialog's "Marked now"), so none is.
        pilot.app.clear_notifications()
        await pilot.pause()

    return run_before


@pytest.mark.snapshot
@SIZES
@pytest.mark.parametrize("view", list(VIEWS))
def test_view_snapshot(
    snap_compare: Any, demo_store: Path, view: str, size: tuple[int, int]
) -> None:
    """Each view of the demo store looks as reviewed."""
    app = make_app(demo_store, label="demo store", live=False)
    key, *rest = VIEWS[view]
    assert snap_compare(app, terminal_size=size, run_before=_before(key, tuple(rest)))


@pytest.fixture
def fixed_store(demo_store: Path) -> Iterator[Path]:
    """The demo copy at a path that is the same on every run: the agent dialog
    shows the store's path in the command it prints."""
    target = Path(tempfile.gettempdir()) / "kgai-tui-snapshot" / "demo-store"
    shutil.rmtree(target, ignore_errors=True)
    shutil.copytree(demo_store, target)
    yield target
    shutil.rmtree(target.parent, ignore_errors=True)


QUERY = (
    "MATCH (e:Element)<-[:SHAPES]-(d:Decision) "
    "RETURN e.name, e.kind, count(d) AS decisions ORDER BY decisions DESC, e.name"
)


@pytest.mark.snapshot
@SIZES
def test_query_view_snapshot(
    snap_compare: Any, demo_store: Path, size: tuple[int, int]
) -> None:
    """The Query view (8) after a query ran: the rows, the caption, the keys."""

    async def run_before(pilot: Pilot[None]) -> None:
        await settle(pilot)
        await pilot.press("8")
        await pilot.pause()
        pilot.app.query_one("#query-input", Input).value = QUERY
        await pilot.press("enter")
        await settle(pilot)
        _steady_cursors(pilot)
        await pilot.pause()

    app = make_app(demo_store, label="demo store", live=False)
    assert snap_compare(app, terminal_size=size, run_before=run_before)


@pytest.mark.snapshot
@SIZES
@pytest.mark.parametrize("dialog", list(DIALOGS))
def test_dialog_snapshot(
    snap_compare: Any, fixed_store: Path, dialog: str, size: tuple[int, int]
) -> None:
    """Each dialog looks as reviewed, its keys on its last line."""
    app = make_app(fixed_store, label="demo store", live=False)
    key, *rest = DIALOGS[dialog]
    assert snap_compare(app, terminal_size=size, run_before=_before(key, tuple(rest)))


@pytest.mark.snapshot
def test_slider_mid_history_snapshot(snap_compare: Any, demo_store: Path) -> None:
    """The graph replayed to mid-March, with the as-of banner."""
    app = make_app(demo_store, label="demo store", live=False)
    steps = ("left_curly_bracket", "left_curly_bracket", "left_curly_bracket")
    assert snap_compare(app, terminal_size=(120, 40), run_before=_before("1", steps))


@pytest.mark.snapshot
def test_conflicts_narrow_snapshot(snap_compare: Any, demo_store: Path) -> None:
    """At 60x20 the head cards stack, each decision id whole on its own line."""
    app = make_app(demo_store, label="demo store", live=False)
    assert snap_compare(app, terminal_size=(60, 20), run_before=_before("4"))


@pytest.mark.snapshot
def test_saved_theme_snapshot(
    snap_compare: Any, demo_store: Path, config_dir: Path
) -> None:
    """A theme saved by an earlier run colours every mark (here nord, on Elements)."""
    config_dir.mkdir(parents=True)
    (config_dir / preferences.FILE_NAME).write_text('{"theme": "nord"}')
    app = make_app(demo_store, label="demo store", live=False)
    steps = ("down",) * 7
    assert snap_compare(app, terminal_size=(120, 40), run_before=_before("1", steps))


@pytest.mark.snapshot
def test_header_with_remote_snapshot(snap_compare: Any, demo_store: Path) -> None:
    """A store with a remote: the header's second line names it, credentials hidden."""
    set_session_remote(
        demo_store, "https://bot:hunter2@git.example.com/team/decisions.git"
    )
    app = make_app(demo_store, label="demo store", live=False)
    assert snap_compare(app, terminal_size=(120, 40), run_before=_before("1"))
