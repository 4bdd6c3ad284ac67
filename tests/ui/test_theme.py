"""The explorer's colours follow the theme, and the chosen theme is remembered."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from rich.style import Style
from settle import settle
from textual.app import App
from textual.color import Color
from textual.pilot import Pilot

from kgai_tui.ui import preferences
from kgai_tui.ui.app import KgaiApp, make_app
from kgai_tui.ui.theme import ANSI, palette_from_variables, palette_of
from kgai_tui.ui.widgets.decision_list import DecisionList

SIZE = (120, 40)


def _drive(app: KgaiApp, steps: Callable[[Pilot[None]], Awaitable[None]]) -> None:
    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await steps(pilot)

    asyncio.run(main())


async def _change_theme(pilot: Pilot[None], name: str) -> None:
    """Palette → "Theme" (change the current theme) → ``name``, as a user does it."""
    await pilot.press("ctrl+p")
    await pilot.pause()
    await pilot.press(*"theme")
    await asyncio.sleep(0.4)
    await pilot.pause()
    await pilot.press("enter")
    await pilot.pause()
    await pilot.press(*name)
    await asyncio.sleep(0.4)
    await pilot.pause()
    await pilot.press("enter")
    await settle(pilot)


def _colour(app: App[None], variable: str) -> object:
    return Color.parse(app.get_css_variables()[variable]).rich_color


def test_palette_takes_the_theme_variables() -> None:
    """Marks take the theme's text colours; a missing variable keeps the ANSI style."""
    app: App[None] = App()
    for theme in ("textual-dark", "nord", "ansi-dark", "solarized-light"):
        app.theme = theme
        variables = app.get_css_variables()
        palette = palette_from_variables(variables)
        assert palette.head == Style(color=_colour(app, "text-success"), bold=True)  # type: ignore[arg-type]
        assert palette.contested.color == _colour(app, "text-error")
        assert palette.dead_end.color == _colour(app, "text-warning")
        assert palette.link.color == _colour(app, "text-accent")
        assert palette.ok_badge.bgcolor == _colour(app, "success")
    assert palette_from_variables({}) == ANSI
    assert palette_from_variables({"text-success": "not a colour"}).head == ANSI.head


def test_a_chosen_theme_is_remembered_and_drawn(
    demo_store: Path, config_dir: Path
) -> None:
    """Change theme in the palette: every view redraws in it; the next start uses it."""
    first = make_app(demo_store, live=False)
    seen: list[object] = []

    async def steps(pilot: Pilot[None]) -> None:
        assert first.theme == "textual-dark"
        await _change_theme(pilot, "nord")
        seen.append(first.theme)
        snapshot = first.snapshot
        assert snapshot is not None
        seen.append(snapshot.palette == palette_of(first))
        seen.append(snapshot.palette.contested.color == _colour(first, "text-error"))
        await pilot.press("3")
        await settle(pilot)
        rows = first.query_one("#timeline-list", DecisionList)
        styles = {
            span.style for idx in rows.rows for span in rows.render_row(idx, 200).spans
        }
        seen.append(snapshot.palette.head in styles)
        seen.append(ANSI.head in styles)

    _drive(first, steps)
    assert seen == ["nord", True, True, True, False]
    saved = json.loads((config_dir / preferences.FILE_NAME).read_text())
    assert saved == {"theme": "nord"}

    second = make_app(demo_store, live=False)
    assert second.theme == "nord"
    assert second.palette == palette_of(second)

    async def check(pilot: Pilot[None]) -> None:
        assert second.snapshot is not None
        assert second.snapshot.palette.head.color == _colour(second, "text-success")

    _drive(second, check)


@pytest.mark.parametrize(
    "content",
    [b"", b"{not json", b"\xff\xfe", b"[1, 2]", b'{"theme": 3}', b'{"theme": "nope"}'],
    ids=["empty", "corrupt", "not-utf8", "not-object", "not-str", "unknown"],
)
def test_a_bad_preferences_file_is_ignored(
    demo_store: Path, config_dir: Path, content: bytes
) -> None:
    """A corrupt file or an unknown theme: the default theme, then a clean rewrite."""
    config_dir.mkdir(parents=True)
    (config_dir / preferences.FILE_NAME).write_bytes(content)
    app = make_app(demo_store, live=False)
    assert app.theme == "textual-dark"

    async def steps(pilot: Pilot[None]) -> None:
        app.theme = "dracula"
        await settle(pilot)

    _drive(app, steps)
    saved = json.loads((config_dir / preferences.FILE_NAME).read_text())
    assert saved["theme"] == "dracula"


def test_saving_keeps_other_keys(config_dir: Path) -> None:
    """The file may hold more than the theme; saving rewrites only the theme."""
    config_dir.mkdir(parents=True)
    path = config_dir / preferences.FILE_NAME
    path.write_text('{"theme": "nord", "later": [1]}')
    assert preferences.saved_theme() == "nord"
    preferences.save_theme("gruvbox")
    assert json.loads(path.read_text()) == {"later": [1], "theme": "gruvbox"}
    assert [p.name for p in config_dir.iterdir()] == [preferences.FILE_NAME]


def test_an_unwritable_config_dir_only_warns(
    demo_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """When the theme cannot be saved, it still applies; the user is told once."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setattr(preferences, "config_dir", lambda: blocker / "kgai-tui")
    app = make_app(demo_store, live=False)
    # Long enough that the toast is still listed when read on a loaded machine
    # (the default 5 s can pass between the first theme change and the read).
    monkeypatch.setattr(type(app), "NOTIFICATION_TIMEOUT", 600)
    notes: list[str] = []

    async def steps(pilot: Pilot[None]) -> None:
        for theme in ("nord", "gruvbox"):
            app.theme = theme
            await settle(pilot)
        notes.extend(str(n.message) for n in app._notifications)
        assert app.snapshot is not None
        assert app.snapshot.palette == palette_of(app)

    _drive(app, steps)
    assert app.theme == "gruvbox"
    assert len([n for n in notes if "Could not remember the theme" in n]) == 1
