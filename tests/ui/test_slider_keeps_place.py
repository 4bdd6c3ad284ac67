"""A slider step keeps the user's place in an element's links and story when the
step did not change them, and rebuilds them when it did; the explorer owns the
cyclic collector for its session and gives it back."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path
from typing import Any

from builders import ShardWriter, decision, link, upsert, write_store
from settle import settle
from textual.widgets import OptionList, Static, Tree

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


def test_the_element_chosen_comes_back_when_the_slider_returns_to_it(
    tmp_path: Path,
) -> None:
    """Choosing ``service:zeta`` and stepping back to before it existed shows
    another element (the first listed), without forgetting the choice: stepping
    forward again shows zeta, with the tree's cursor on it, and the Graph and the
    back stack follow the same one choice."""
    app = make_app(_store(tmp_path), live=False)

    def cursor() -> str | None:
        tree = app.query_one("#element-tree", Tree)
        node = tree.cursor_node
        return None if node is None else node.data

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("f", *"zeta", "enter")
            await settle(pilot)
            await pilot.press("f", *["backspace"] * 4, "enter")  # the filter cleared
            await settle(pilot)
            elements = app.query_one("#elements")
            assert app.selected_element == elements.selected == cursor()  # type: ignore[attr-defined]
            zeta = app.selected_element
            assert zeta is not None and "zeta" in _details(app)
            await pilot.press("[", "[", "[")  # 11:00: no zeta yet
            await settle(pilot)
            assert "11:00" in _banner(app)
            shown = elements.selected  # type: ignore[attr-defined]
            assert shown is not None and shown != zeta
            assert shown == cursor()
            # The details say the chosen one is absent, above the one shown.
            note, _, rest = _details(app).partition("\n\n")
            absent = (
                "service:zeta does not exist at this moment · first decided 2026-01-01"
            )
            assert note == absent
            assert "zeta" not in rest and rest.strip()
            await pilot.press("2")
            await settle(pilot)
            graph = app.query_one("#graph")
            assert _graph_text(app) == absent
            await pilot.press("1", "]", "]", "]")  # now again
            await settle(pilot)
            assert app.query_one("TimeSlider").moment is None  # type: ignore[attr-defined]
            assert elements.selected == zeta == cursor() == app.selected_element  # type: ignore[attr-defined]
            assert "zeta" in _details(app) and "does not exist" not in _details(app)
            await pilot.press("2")
            await settle(pilot)
            assert graph.center == zeta  # type: ignore[attr-defined]

    asyncio.run(main())


def _details(app: Any) -> str:
    return str(app.query_one("#element-details", Static).render())


def _banner(app: Any) -> str:
    return str(app.query_one("MomentBanner").render())


def _graph_text(app: Any) -> str:
    graph = app.query_one("#graph")
    return "\n".join(line.text.plain for line in graph._lines)


def test_a_filter_that_hides_every_element_at_a_moment_shows_none(
    tmp_path: Path,
) -> None:
    """``zeta`` filtered, then a step to 11:00, before zeta existed: the tree says
    nothing matches, and the details say the filter hides every element (below the
    chosen zeta's absence), not some other element of the store."""
    app = make_app(_store(tmp_path), live=False)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("f", *"zeta", "enter", "[", "[", "[")
            await settle(pilot)
            assert "11:00" in _banner(app)
            note, _, rest = _details(app).partition("\n\n")
            assert note.startswith("service:zeta does not exist at this moment")
            assert rest == "the filter hides every element"

    asyncio.run(main())


class _Node:
    """A container that can hold itself (a cycle only the collector frees)."""

    me: object


def test_what_a_load_brought_is_set_aside_until_the_next_load() -> None:
    """The first full collection after a load sets what survives it aside
    (``gc.freeze``): later ones walk only what came since (at 1M with the
    slider's history, 203 ms -> 21 ms on the UI thread). The next load gives
    it back, so the old store's cycles are collected then."""
    import weakref

    collector = IdleCollector(idle_seconds=0.0)
    try:
        collector.start()
        kept = _Node()
        kept.me = kept  # what the load keeps (its rows, its history)
        collector.loaded()
        assert collector.tick() == 2 and gc.get_freeze_count() > 0
        later = _Node()
        later.me = later
        gone = weakref.ref(later)
        del later
        collector.busy()
        assert collector.tick() == 2 and gone() is None  # what came since: walked
        old = weakref.ref(kept)
        del kept
        collector.busy()
        assert collector.tick() == 2 and old() is not None  # set aside: not walked
        collector.loaded()
        assert collector.tick() == 2 and old() is None  # the next load: collected
        assert gc.get_freeze_count() > 0
    finally:
        collector.stop()
    assert gc.get_freeze_count() == 0 and gc.isenabled()


def test_a_loaded_store_is_set_aside_once_the_user_is_still(tmp_path: Path) -> None:
    """The explorer tells its collector about each load: once the user is still,
    the store it loaded is set aside; the session gives it back as it ends."""
    import time

    app = make_app(_store(tmp_path), live=False)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            deadline = time.monotonic() + 15
            while not gc.get_freeze_count() and time.monotonic() < deadline:
                await pilot.pause(0.1)
            assert gc.get_freeze_count() > 0

    asyncio.run(main())
    assert gc.get_freeze_count() == 0
