"""The first view: prepared off the UI thread, robust, and honest while loading."""

from __future__ import annotations

import asyncio
import random
import re
from array import array
from collections import Counter
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from builders import ShardWriter, decision, link, upsert, write_store
from settle import settle
from textual.widgets import OptionList, Static

from kgai_tui.core.engine.engine import Engine
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.model import open as model_open
from kgai_tui.core.reads.view import KgView
from kgai_tui.core.safe_text import _BREAKS, _SPACES, one_line, visible
from kgai_tui.core.wire.ids import element_id
from kgai_tui.ui.app import KgaiApp, make_app
from kgai_tui.ui.theme import ANSI
from kgai_tui.ui.views.elements import element_rows
from kgai_tui.ui.views.timeline import _histogram
from kgai_tui.ui.widgets.decision_list import DecisionList
from kgai_tui.ui.widgets.time_slider import TimeSlider

SIZE = (120, 40)


def _self_loop_store(tmp_path: Path) -> Path:
    """One element linked to itself (twice reachable from its links list)."""
    w = ShardWriter("i1")
    a = ("feature", "loop")
    d = decision("loop", [upsert(*a), link("add_link", a, a, "DEPENDS_ON")])
    w.add(d, lamport=1, recorded_at="2026-01-01T00:00:00Z")
    return write_store(tmp_path / "s", {"i1.ndjson": w.to_bytes()})


def test_an_element_linked_to_itself_shows_every_view(tmp_path: Path) -> None:
    """A self-loop lists the neighbour twice; the rest of the views still fill."""
    app = make_app(_self_loop_store(tmp_path), live=False)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            links = app.query_one("#element-links", OptionList)
            prompts = [
                str(links.get_option_at_index(i).prompt)
                for i in range(links.option_count)
            ]
            assert prompts[:2] == [
                "→ DEPENDS_ON feature:loop",
                "← DEPENDS_ON feature:loop",
            ]
            await pilot.press("3")
            await settle(pilot)
            assert app.query_one(DecisionList).rows  # the timeline fills when shown
            await pilot.press("1")
            await settle(pilot)
            links.focus()
            links.highlighted = 1
            await pilot.press("enter")
            await settle(pilot)
            assert app.selected_element == element_id("feature", "loop")

    asyncio.run(main())


def test_a_store_that_fails_to_open_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The opening clock stops and the header shows the error as plain text."""

    def fail(*_: object, **__: object) -> Engine:
        raise RuntimeError("cache unreadable [/]")

    monkeypatch.setattr(model_open, "open_model", fail)
    app = make_app(tmp_path, live=False)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            header = str(app.query_one("#header", Static).render())
            assert header == "kgai-tui · could not open the store: cache unreadable [/]"

    asyncio.run(main())


def test_the_opening_screen_shows_progress(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Before the store is open the header counts the time; then the view fills.
    The open waits until the first screen was read, so it cannot land first."""
    import threading

    from kgai_tui.core.model import read as model_read

    gate = threading.Event()
    real = model_read.read_store

    def held(*args: Any, **kwargs: Any) -> Any:
        gate.wait(10)
        return real(*args, **kwargs)

    monkeypatch.setattr(model_read, "read_store", held)
    app: KgaiApp = make_app(_self_loop_store(tmp_path), live=False)
    seen: list[str] = []

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            seen.append(str(app.query_one("#header", Static).render()))
            gate.set()
            await settle(pilot)
            seen.append(str(app.query_one("#header", Static).render()))
            assert not app.query_one(TimeSlider).loading

    asyncio.run(main())
    assert seen[0].startswith("kgai-tui · opening")
    assert "1 elements · 1 decisions" in seen[1]


def test_element_rows_group_sort_and_filter(tmp_path: Path) -> None:
    """Rows come grouped by kind, by name; the filter matches names and kinds."""
    w = ShardWriter("i1")
    names = [("service", "Billing"), ("feature", "beta"), ("feature", "Alpha")]
    for n, ref in enumerate(names, start=1):
        d = decision(ref[1], [upsert(*ref)])
        w.add(d, lamport=n, recorded_at=f"2026-01-0{n}T00:00:00Z")
    engine = open_engine(write_store(tmp_path / "s", {"i1.ndjson": w.to_bytes()}))
    rows = element_rows(KgView(engine.projection), palette=ANSI)
    assert [(k, [r.label(ANSI).plain for r in rs]) for k, rs in rows.groups] == [
        ("feature", ["Alpha", "beta"]),
        ("service", ["Billing"]),
    ]
    assert [
        (b.plain, [x.plain for x, _ in ls], more)
        for b, ls, more in rows.filtered("bil")
    ] == [("service (1)", ["Billing"], 0)]
    assert [b.plain for b, _, _ in rows.filtered("feat")] == ["feature (2)"]
    # A branch shows its first leaves and counts the rest.
    assert [
        (b.plain, [x.plain for x, _ in ls], more)
        for b, ls, more in rows.filtered("", cap=1)
    ] == [("feature (2)", ["Alpha"], 1), ("service (1)", ["Billing"], 0)]


def _old_histogram(times: list[int | None], rows: list[int]) -> tuple[list[float], str]:
    """The histogram as the timeline computed it before (one datetime per stamp)."""
    week = 7 * 24 * 3600
    stamps = [times[i] for i in rows if times[i] is not None]
    if not stamps:
        return [], "week"
    lo = min(s for s in stamps if s is not None)
    hi = max(s for s in stamps if s is not None)
    weeks = (hi - lo) // week + 1
    if weeks <= 60:
        buckets = Counter((s - lo) // week for s in stamps if s is not None)
        return [float(buckets.get(b, 0)) for b in range(weeks)], "week"
    start = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=lo)
    months: Counter[int] = Counter()
    for s in stamps:
        if s is None:
            continue
        moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(seconds=s)
        months[(moment.year - start.year) * 12 + moment.month - start.month] += 1
    return [float(months.get(m, 0)) for m in range(max(months) + 1)], "month"


@pytest.mark.parametrize("span_days", [0, 3, 200, 420, 3000])
def test_histogram_matches_the_per_stamp_count(span_days: int) -> None:
    """Bisecting sorted stamps gives the same weeks and calendar months."""
    rng = random.Random(span_days)
    base = int(datetime(2024, 1, 31, 23, 59, 59, tzinfo=UTC).timestamp())
    times: list[int | None] = [
        None if rng.random() < 0.05 else base + rng.randint(0, span_days * 86400)
        for _ in range(3000)
    ]
    times += [base, base + span_days * 86400]
    rows = sorted(range(len(times)), key=lambda i: (times[i] is None, times[i] or 0))

    def stamps(order: list[int]) -> list[int]:
        return [s for s in map(times.__getitem__, order) if s is not None]

    assert _histogram(stamps(rows)) == _old_histogram(times, rows)
    # Rows in any other order: their stamps are handed over sorted
    # (timeline_select), an array as the read model gives them.
    shuffled = rows[:]
    rng.shuffle(shuffled)
    ascending = array("q", sorted(stamps(shuffled)))
    assert _histogram(ascending) == _old_histogram(times, shuffled)


@pytest.mark.parametrize(
    "text", ["plain", " padded ", "two  spaces", "line\nbreak", "esc\x1b", "\u2028x"]
)
def test_safe_text_fast_path_changes_nothing(text: str) -> None:
    """The printable shortcut gives what the full cleaning gives."""
    slow = re.sub(_SPACES, " ", visible(re.sub(_BREAKS, " ", text))).strip()
    assert one_line(text) == slow
