"""The slider through the read model: once the whole store has saved its time
index, the slider's history comes with the model (no whole store read), and every
view at a past moment shows what the whole store shows there, screen for screen."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from counting import counting_opens
from settle import settle
from test_first_view import _contested_store, _screen

from kgai_tui.core.engine.engine import Engine
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.model.open import ModelEngine, open_model
from kgai_tui.core.reads.moments import TimeCursor
from kgai_tui.ui.app import KgaiApp
from kgai_tui.ui.widgets.time_slider import TimeSlider

SIZE = (120, 40)


@pytest.fixture(params=["demo", "contested"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    if request.param == "demo":
        return Path(request.getfixturevalue("demo_store"))
    return _contested_store(tmp_path)


def _saved(root: Path) -> list[Any]:
    """Build the model, then read the whole store once (it saves its time index);
    the moments the whole store's slider holds."""
    open_model(root).close()
    return list(TimeCursor.of_store(open_engine(root)).moments)


async def _back(pilot: Any, steps: int) -> None:
    """Step the slider back ``steps`` times, each left to settle."""
    for _ in range(steps):
        await pilot.press("left_square_bracket")
        await settle(pilot)


def _at_moments(root: Path, steps: int) -> tuple[list[list[str]], KgaiApp, Any]:
    """After each of ``steps`` steps back: the slider's line, then each view's
    screen (Elements, Graph, Timeline, Conflicts, People); the app; the slider's
    moments and position at the end."""
    app = KgaiApp(root, live=False)
    end: list[Any] = []

    async def main() -> list[list[str]]:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            out = []
            for _ in range(steps):
                await _back(pilot, 1)
                seen = [str(app.query_one(TimeSlider).render())]
                for key in ("1", "2", "3", "4", "7", "1"):
                    await pilot.press(key)
                    await settle(pilot)
                    seen.append(_screen(app))
                out.append(seen)
            slider = app.query_one(TimeSlider)
            end.extend([list(slider.moments), slider.position])
            return out

    return asyncio.run(main()), app, end


def test_the_slider_reads_its_history_through_the_model(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No whole store is opened for the slider; each moment's screens equal the
    whole store's at the same moment."""
    moments = _saved(store)
    steps = min(len(moments) - 1, 3)
    opened = counting_opens(monkeypatch)
    on_model, app, end = _at_moments(store, steps)
    assert isinstance(app.engine, ModelEngine), "the slider kept the model"
    assert opened == [], "no whole store was read"
    assert end == [moments, len(moments) - steps]  # the first step: the last moment
    monkeypatch.setenv("KGAI_TUI_READ_MODEL", "off")
    whole, whole_app, _ = _at_moments(store, steps)
    assert isinstance(whole_app.engine, Engine) and opened
    assert on_model == whole


def test_a_decision_appended_after_the_index_was_saved_keeps_the_slider_on_the_model(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A decision appended after the time index was saved (a record, a sync): the
    model is extended, and so is the index through it. No whole store is read,
    and every moment's screens equal the whole store's, the new one included."""
    from builders import ShardWriter, decision, upsert

    _saved(demo_store)
    w = ShardWriter("i-late", "late")
    w.add(
        decision("Written after the index", [upsert("feature", "Late")]),
        lamport=10_000,
        recorded_at="2027-01-01T00:00:00Z",
    )
    (demo_store / "log" / "i-late.ndjson").write_bytes(w.to_bytes())
    opened = counting_opens(monkeypatch)
    on_model, app, _ = _at_moments(demo_store, 3)
    assert isinstance(app.engine, ModelEngine), "the history came with the model"
    assert opened == [], "no whole store was read"
    assert (
        "Late" in on_model[0][2]
        or "Late" in on_model[0][1]
        or any("Late" in screen for screen in on_model[0])
    ), "the first step back is a moment with the appended decision"
    monkeypatch.setenv("KGAI_TUI_READ_MODEL", "off")
    whole, _, _ = _at_moments(demo_store, 3)
    assert on_model == whole


def test_a_time_index_of_another_log_is_built_again_through_the_model(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An index saved for a log with a line the store no longer has (a shard cut
    back) is not used: the log is replayed to build it again and it is saved,
    and the slider reads it through the model (no whole store opened), with the
    moments of the log as it is."""
    from builders import ShardWriter, decision, upsert

    w = ShardWriter("i-late", "late")
    w.add(
        decision("Written, then taken back", [upsert("feature", "Late")]),
        lamport=10_000,
        recorded_at="2027-01-01T00:00:00Z",
    )
    late = demo_store / "log" / "i-late.ndjson"
    late.write_bytes(w.to_bytes())
    with_late = _saved(demo_store)
    late.unlink()
    open_model(demo_store).close()
    opened = counting_opens(monkeypatch)
    _, app, end = _at_moments(demo_store, 1)
    assert isinstance(app.engine, ModelEngine)
    assert opened == [], "the history was built, not read from a whole store"
    whole = list(TimeCursor.of_store(open_engine(demo_store)).moments)
    assert end == [whole, len(whole) - 1] and end[0] != with_late


def test_the_timeline_is_ordered_only_while_it_is_shown(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Slider steps on Elements order no timeline (seconds at a million
    decisions); showing the Timeline orders the moment on screen, once."""
    from kgai_tui.ui.views import timeline

    built: list[int] = []
    real = timeline.timeline_base

    def counted(v: Any, revision: int) -> Any:
        built.append(revision)
        return real(v, revision)

    monkeypatch.setattr(timeline, "timeline_base", counted)
    app = KgaiApp(demo_store, live=False)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await _back(pilot, 3)
            assert built == [], "no timeline while Elements is shown"
            await pilot.press("3")
            await settle(pilot)
            assert app.snapshot is not None and built == [app.snapshot.revision]
            await pilot.press("left_square_bracket")
            await settle(pilot)
            assert built[-1] == app.snapshot.revision and len(built) == 2

    asyncio.run(main())


def test_a_slider_session_keeps_a_bounded_number_of_moments(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Twenty steps back in a big process (its heap frozen after the history
    loaded): only the views the cursor keeps and the one on screen stay alive."""
    import gc
    import weakref

    from kgai_tui.core import heap
    from kgai_tui.core.timeindex.view import AsOfView

    monkeypatch.setattr(heap, "BIG_ENGINE", 1)  # the demo store counts as big
    _saved(demo_store)
    alive: weakref.WeakSet[AsOfView] = weakref.WeakSet()
    made = AsOfView.__init__

    def counted(self: AsOfView, *args: Any) -> None:
        made(self, *args)
        alive.add(self)

    monkeypatch.setattr(AsOfView, "__init__", counted)
    app = KgaiApp(demo_store, live=False)

    async def main() -> int:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await _back(pilot, 20)
            gc.collect()
            return len(alive)

    try:
        assert asyncio.run(main()) <= 6, "views of past moments were kept"
    finally:
        gc.unfreeze()
