"""The slider's history read unasked, once the present is on screen and the user
is still, for a log below :data:`~kgai_tui.ui.loading.PRELOAD_HISTORY_BYTES`: the
first step back then shows at once (at 1M it waited ~0.6 s on the read)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from counting import counting_opens
from settle import settle
from textual.pilot import Pilot

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.model.open import ModelEngine, open_model
from kgai_tui.core.reads.moments import TimeCursor
from kgai_tui.ui import loading
from kgai_tui.ui.app import KgaiApp
from kgai_tui.ui.widgets.time_slider import TimeSlider

SIZE = (120, 40)


def _counting_history(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every read of a store's history from now on (``TimeCursor.of_store``)."""
    reads: list[object] = []
    real = TimeCursor.of_store

    def counted(store: Any) -> TimeCursor:
        reads.append(store)
        return real(store)

    monkeypatch.setattr(TimeCursor, "of_store", counted)
    return reads


async def _until(pilot: Pilot[None], done: Any, timeout_s: float = 10.0) -> bool:
    """Let the app run until ``done()`` holds (or the time is up)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if done():
            return True
        await pilot.pause(0.05)
    return bool(done())


async def _preloaded(pilot: Pilot[None], app: KgaiApp) -> TimeSlider:
    """The slider once the history read unasked is in it, the app settled."""
    slider = app.query_one(TimeSlider)
    assert await _until(pilot, lambda: bool(slider.moments))
    await settle(pilot)
    return slider


@pytest.fixture
def big_log(demo_store: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The demo store read as a big log: its history is not in the first view."""
    monkeypatch.setattr(loading, "EAGER_HISTORY_BYTES", 0)
    monkeypatch.setattr(loading, "PRELOAD_IDLE_SECONDS", 0.3)
    open_model(demo_store).close()
    return demo_store


def test_the_history_comes_unasked_and_the_first_step_back_reads_nothing(
    big_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The present first, the slider on demand; moments later the slider holds
    every moment, still at now, through the model (no store opened whole); ``[``
    then steps back without reading the history again."""
    opened = counting_opens(monkeypatch)
    reads = _counting_history(monkeypatch)
    app = KgaiApp(big_log, live=False)
    whole = list(TimeCursor.of_store(open_engine(big_log)).moments)
    reads.clear()

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            slider = app.query_one(TimeSlider)
            assert await _until(pilot, lambda: app.snapshot is not None)
            assert await _until(pilot, lambda: bool(slider.moments))
            await settle(pilot)
            assert list(slider.moments) == whole
            assert slider.at_now and not slider.loading and not slider.on_demand
            assert app.snapshot is not None and app.snapshot.moment is None
            assert isinstance(app.engine, ModelEngine)
            assert len(reads) == 1
            await pilot.press("left_square_bracket")
            await settle(pilot)
            assert slider.position == len(whole) - 1
            assert app.snapshot is not None and app.snapshot.moment == whole[-1]

    asyncio.run(main())
    assert len(reads) == 1, "the step back read the history again"
    assert opened == [], "the history came through the model"


def test_the_preload_waits_while_the_user_moves(
    big_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While the user keeps asking for things the history is not read; once
    they are still it comes."""
    # Asked every 0.05 s: a second still is far more than a loaded machine's
    # longest pause between two asks.
    monkeypatch.setattr(loading, "PRELOAD_IDLE_SECONDS", 1.0)
    app = KgaiApp(big_log, live=False)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            slider = app.query_one(TimeSlider)
            assert await _until(pilot, lambda: app.snapshot is not None)
            busy_until = time.monotonic() + 1.5
            while time.monotonic() < busy_until:
                app.collector.busy()
                await pilot.pause(0.05)
                assert not slider.moments, "read while the user was busy"
            assert await _until(pilot, lambda: bool(slider.moments))

    asyncio.run(main())


def test_a_failed_preload_leaves_the_slider_on_demand(
    big_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A preload that fails changes nothing on screen and tries no reload: the
    slider still says how to read the history, and ``[`` reads it and steps back."""
    of_store = TimeCursor.of_store
    failures: list[object] = []

    def broken(store: Any) -> TimeCursor:
        failures.append(store)
        raise OSError("the cache directory went away")

    monkeypatch.setattr(TimeCursor, "of_store", broken)
    app = KgaiApp(big_log, live=False)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            slider = app.query_one(TimeSlider)
            assert await _until(pilot, lambda: bool(failures))
            await pilot.pause(0.5)
            await settle(pilot)
            assert len(failures) == 1, "a failed preload is not tried again"
            assert slider.on_demand and not slider.moments and not slider.loading
            assert "read the history" in str(slider.render())
            monkeypatch.setattr(TimeCursor, "of_store", of_store)
            await pilot.press("left_square_bracket")
            await settle(pilot)
            assert slider.moments and not slider.at_now

    asyncio.run(main())


def test_a_log_over_the_preload_size_waits_for_a_key(
    big_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Above :data:`~kgai_tui.ui.loading.PRELOAD_HISTORY_BYTES` a look at the
    present never reads the history."""
    monkeypatch.setattr(loading, "PRELOAD_HISTORY_BYTES", 1)
    reads = _counting_history(monkeypatch)
    app = KgaiApp(big_log, live=False)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            slider = app.query_one(TimeSlider)
            assert await _until(pilot, lambda: app.snapshot is not None)
            await pilot.pause(1.5)
            await settle(pilot)
            assert slider.on_demand and not slider.moments and reads == []
            await pilot.press("left_square_bracket")
            await settle(pilot)
            assert slider.moments and not slider.at_now and len(reads) == 1

    asyncio.run(main())


def test_a_key_during_the_preload_says_so_and_is_done_when_it_comes(
    big_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``[`` pressed while the history is being read unasked: the slider says it
    is reading it, and steps back once it is there."""
    import threading

    of_store = TimeCursor.of_store
    started, release = threading.Event(), threading.Event()

    def held(store: Any) -> TimeCursor:
        started.set()
        release.wait(10)
        return of_store(store)

    monkeypatch.setattr(TimeCursor, "of_store", held)
    app = KgaiApp(big_log, live=False)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            slider = app.query_one(TimeSlider)
            assert await _until(pilot, started.is_set)
            assert not slider.loading, "a preload shows nothing"
            await pilot.press("left_square_bracket")
            await pilot.pause()
            assert slider.loading and "reading the history" in str(slider.render())
            release.set()
            assert await _until(pilot, lambda: bool(slider.moments))
            await settle(pilot)
            assert slider.position == len(slider.moments) - 1 and not slider.at_now
            assert app.snapshot is not None and app.snapshot.moment is not None

    try:
        asyncio.run(main())
    finally:
        release.set()


def test_a_reload_drops_a_preloaded_history_the_slider_never_used(
    big_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A teammate's append (a reload) before the slider moved: the history read
    unasked is dropped, not brought up to date (at 1M, 3-4 s of folding and a
    230 MB save per append), and not read unasked again this session; a key
    still reads it."""
    reads = _counting_history(monkeypatch)
    app = KgaiApp(big_log, live=False)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            slider = await _preloaded(pilot, app)
            assert len(reads) == 1
            app.action_reload()
            await settle(pilot)
            await pilot.pause(1.0)  # past the idle time: no second preload
            await settle(pilot)
            assert len(reads) == 1, "the reload read the history"
            assert slider.on_demand and not slider.moments and app.cursor is None
            await pilot.press("left_square_bracket")
            await settle(pilot)
            assert len(reads) == 2 and slider.moments and not slider.at_now

    asyncio.run(main())


def test_a_preloaded_history_the_slider_used_is_kept_current(
    big_log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the slider moved, a reload brings the history with it, as after a
    history a key asked for."""
    reads = _counting_history(monkeypatch)
    app = KgaiApp(big_log, live=False)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            slider = await _preloaded(pilot, app)
            await pilot.press("left_square_bracket")
            await settle(pilot)
            assert len(reads) == 1 and not slider.at_now
            app.action_reload()
            await settle(pilot)
            assert len(reads) == 2 and slider.moments and not slider.at_now

    asyncio.run(main())


def test_a_first_open_preloads_the_history_it_saved_without_a_second_replay(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty cache: the present comes from the replay the model is built
    from, the history is saved from that replay, and the preload waits for the
    save, then reads it through the model: one replay in all."""
    from test_first_view import counting_replays

    monkeypatch.setattr(loading, "EAGER_HISTORY_BYTES", 0)
    monkeypatch.setattr(loading, "PRELOAD_IDLE_SECONDS", 0.3)
    from kgai_tui.core.model import history

    real_save = history.save_history

    def slow_save(*args: Any) -> Any:
        time.sleep(1.0)  # the preload's timer comes first: it must wait
        return real_save(*args)

    monkeypatch.setattr(history, "save_history", slow_save)
    replays = counting_replays(monkeypatch)
    app = KgaiApp(demo_store, live=False)
    whole = list(TimeCursor.of_store(open_engine(demo_store)).moments)
    replays.clear()

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            slider = await _preloaded(pilot, app)
            assert isinstance(app.engine, ModelEngine)
            assert list(slider.moments) == whole and slider.at_now

    asyncio.run(main())
    assert replays == [demo_store], "one replay: the model, its history, the preload"
