"""A slider step keeps the user's place in an element's links and story when the
step did not change them, and rebuilds them when it did; the explorer owns the
cyclic collector for its session and gives it back."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

from builders import ShardWriter, decision, link, upsert, write_store
from settle import settle
from textual.widgets import OptionList, Static

from kgai_tui.ui.app import make_app
from kgai_tui.ui.idle_gc import FULL_EVERY, IdleCollector
from kgai_tui.ui.screens import DecisionModal

SIZE = (120, 40)


def _store(tmp_path: Path) -> Path:
    """``feature:alpha`` decided at 10:00 and 11:00 (linked to ``service:api``);
    then two decisions on ``service:zeta`` alone, at 12:00 and 13:00."""
    w = ShardWriter("i1")
    alpha, api, zeta = ("feature", "alpha"), ("service", "api"), ("service", "zeta")
    first = decision(
        "alpha starts",
        [upsert(*alpha), upsert(*api), link("add_link", alpha, api, "USES")],
    )
    w.add(first, lamport=1, recorded_at="2026-01-01T10:00:00Z")
    second = decision(
        "alpha caches", [upsert(*alpha, cache="on")], supersedes=[first.id]
    )
    w.add(second, lamport=2, recorded_at="2026-01-01T11:00:00Z")
    w.add(
        decision("zeta starts", [upsert(*zeta)]),
        lamport=3,
        recorded_at="2026-01-01T12:00:00Z",
    )
    w.add(
        decision("zeta grows", [upsert(*zeta, size="l")]),
        lamport=4,
        recorded_at="2026-01-01T13:00:00Z",
    )
    return write_store(tmp_path / "s", {"i1.ndjson": w.to_bytes()})


def _prompts(links: OptionList) -> list[str]:
    return [str(links.get_option_at_index(i).prompt) for i in range(links.option_count)]


def test_a_step_that_leaves_an_element_alone_keeps_the_highlighted_row(
    tmp_path: Path,
) -> None:
    app = make_app(_store(tmp_path), live=False)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert app.selected_element is not None
            assert "feature" in str(app.query_one("#element-details", Static).render())
            links = app.query_one("#element-links", OptionList)
            now = _prompts(links)
            assert now[0] == "→ USES service:api"
            assert any("alpha starts" in p for p in now)
            assert any("alpha caches" in p for p in now)
            first_row = next(i for i, p in enumerate(now) if "alpha starts" in p)
            links.focus()
            links.highlighted = first_row
            # Two steps back: 13:00, then 12:00; alpha's links and story are the same.
            for _ in range(2):
                await pilot.press("[")
                await settle(pilot)
                assert app.query_one("TimeSlider").moment is not None
                assert _prompts(links) == now
                assert links.highlighted == first_row
            # The row still opens its decision in the moment's own view.
            await pilot.press("enter")
            await settle(pilot)
            modal = app.screen
            assert isinstance(modal, DecisionModal)
            record = str(modal.query_one("#decision-record", Static).render())
            assert "alpha starts" in record
            await pilot.press("escape")
            await settle(pilot)
            # Back to 10:00: alpha's second decision does not exist yet; the story
            # is drawn again, one row shorter.
            await pilot.press("[", "[")
            await settle(pilot)
            then = _prompts(links)
            assert any("alpha starts" in p for p in then)
            assert not any("alpha caches" in p for p in then)
            assert len(then) == len(now) - 1

    asyncio.run(main())


def test_the_session_owns_the_collector_and_gives_it_back(tmp_path: Path) -> None:
    app = make_app(_store(tmp_path), live=False)
    assert gc.isenabled()

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            assert not gc.isenabled()  # collected between steps, not during
            assert app.collector.running
            await pilot.press("[")
            await settle(pilot)
            assert not gc.isenabled()

    asyncio.run(main())
    assert gc.isenabled()


def test_the_collector_collects_everything_once_idle_after_work() -> None:
    collector = IdleCollector(idle_seconds=0.0)
    assert gc.isenabled()
    try:
        collector.start()
        assert not gc.isenabled()
        assert collector.tick() == 1  # nothing asked for yet: young generations
        cycle: list[object] = []
        cycle.append(cycle)
        del cycle
        collector.busy()
        before = gc.get_stats()[2]["collections"]
        assert collector.tick() == 2
        assert gc.get_stats()[2]["collections"] == before + 1
        assert collector.tick() == 1  # once per burst of work
    finally:
        collector.stop()
    assert gc.isenabled()


def test_a_process_without_the_collector_keeps_it_off() -> None:
    gc.disable()
    try:
        collector = IdleCollector()
        collector.start()
        assert not collector.running
        assert collector.tick() == -1
        collector.stop()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_full_collection_comes_without_steps_too() -> None:
    """Cycles a modal or a search left behind are collected without a slider step."""
    collector = IdleCollector(idle_seconds=0.0)
    try:
        collector.start()
        ticks = [collector.tick() for _ in range(FULL_EVERY)]
        assert ticks == [1] * (FULL_EVERY - 1) + [2]
    finally:
        collector.stop()
