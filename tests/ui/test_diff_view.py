"""The explorer's diff: mark a slider position with m, move, press D."""

from __future__ import annotations

import asyncio
from pathlib import Path

from settle import settle
from textual.widgets import Static

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.reads.diff import diff_obj
from kgai_tui.text.diff import render_diff
from kgai_tui.ui.app import KgaiApp, make_app
from kgai_tui.ui.diff_view import DiffModal
from kgai_tui.ui.widgets.time_slider import TimeSlider


def _body(app: KgaiApp) -> str:
    return str(app.screen.query_one("#diff-body", Static).render())


def _title(app: KgaiApp) -> str:
    return str(app.screen.query_one("#diff-title", Static).render())


def _below_head(text: str) -> str:
    """The CLI's diff text without its first line, which the dialog's title says."""
    head, _, rest = text.partition("\n")
    assert head.startswith("What changed from ")
    return rest


def test_mark_then_diff_shows_the_cli_diff(demo_store: Path) -> None:
    app = make_app(demo_store, live=False)
    engine = open_engine(demo_store)

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            slider = app.query_one(TimeSlider)
            await pilot.press("D")  # nothing marked yet: a hint, no modal
            await settle(pilot)
            assert not isinstance(app.screen, DiffModal)
            slider.move_to(30)
            await settle(pilot)
            later = slider.moment
            await pilot.press("m")
            slider.move_to(10)  # marking the later position first is fine
            await settle(pilot)
            earlier = slider.moment
            await pilot.press("D")
            await settle(pilot)
            assert isinstance(app.screen, DiffModal)
            assert (app.screen.start, app.screen.end) == (earlier, later)
            assert _body(app) == _below_head(
                render_diff(diff_obj(engine.time_index, earlier, later))
            )
            assert "What changed" not in _body(app)
            await pilot.press("escape")
            await settle(pilot)
            slider.move_to(len(slider.moments))  # now
            await settle(pilot)
            await pilot.press("D")
            await settle(pilot)
            assert isinstance(app.screen, DiffModal)
            assert _body(app) == _below_head(
                render_diff(diff_obj(engine.time_index, later, None))
            )
            assert _title(app).endswith("→ now")

    asyncio.run(main())


def test_palette_offers_mark_and_diff(demo_store: Path) -> None:
    app = make_app(demo_store, live=False)

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            titles = [c.title for c in app.get_system_commands(app.screen)]
            assert "time: mark this position" in titles
            assert "time: diff since mark" in titles

    asyncio.run(main())


def test_diff_of_the_last_days_when_the_present_comes_from_the_model(
    demo_store: Path,
) -> None:
    """Opened through the read model (no slider move yet), the palette's "what
    changed in the last N days" reads the whole store for the diff: it used to
    hand the model to the diff, whose worker failed and left "computing…"."""
    from kgai_tui.core.model.open import ModelEngine, open_model

    open_model(demo_store).close()
    app = make_app(demo_store, live=False)
    engine = open_engine(demo_store)

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            assert isinstance(app.engine, ModelEngine)
            app.action_diff_last(3650)
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, DiffModal)
            assert screen.end is None
            want = render_diff(diff_obj(engine.time_index, screen.start, None))
            assert _body(app) == _below_head(want)

    asyncio.run(main())
