"""Long histories in the explorer: what a slider step lays out stays bounded.

An element decided hundreds of times, an element with hundreds of links and a
store with many conflicts each made every slider step lay out all of them on the
UI thread (an element decided 5,000 times: 0.3-1.1 s a step). The details list
the newest part of a story and the first links; the story screen shows a page at
a time; hidden views draw when shown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from builders import ShardWriter, decision, link, upsert, write_store
from settle import settle
from textual import events
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, Static

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.reads.view import KgView
from kgai_tui.core.wire.ids import element_id
from kgai_tui.ui import palette
from kgai_tui.ui.app import KgaiApp, make_app
from kgai_tui.ui.diff_view import DIFF_ROWS, DiffModal
from kgai_tui.ui.render import decision_record, element_details
from kgai_tui.ui.safe_text import PROSE_LINES, TEXT_CHARS, TITLE_CHARS, bounded
from kgai_tui.ui.story import STORY_PAGE, StoryScreen
from kgai_tui.ui.theme import ANSI
from kgai_tui.ui.views.conflicts import CONFLICT_PAGE, ConflictsView
from kgai_tui.ui.views.elements import LINK_ROWS, STORY_ROWS, ElementsView
from kgai_tui.ui.views.graph import GraphView

#: Decisions on ``feature:Hot``: more than a page of the story screen.
DECIDED = STORY_PAGE + 60
#: Links leaving ``feature:Hub``.
LINKED = LINK_ROWS + 30


def _store(tmp_path: Path) -> Path:
    """``feature:Hot`` decided :data:`DECIDED` times, each replacing the one
    before; ``feature:Hub`` linked to :data:`LINKED` elements."""
    w = ShardWriter("i1")
    prev: list[str] = []
    for n in range(DECIDED):
        d = decision(
            f"hot step {n:03d}", [upsert("feature", "Hot", rev=str(n))], supersedes=prev
        )
        w.add(
            d, lamport=n + 1, recorded_at=f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}Z"
        )
        prev = [d.id]
    muts = [upsert("feature", "Hub")]
    for n in range(LINKED):
        muts.append(upsert("service", f"L{n:03d}"))
        muts.append(
            link("add_link", ("feature", "Hub"), ("service", f"L{n:03d}"), "USES")
        )
    w.add(
        decision("the hub", muts),
        lamport=DECIDED + 1,
        recorded_at="2026-01-02T00:00:00Z",
    )
    return write_store(tmp_path / "s", {"i1.ndjson": w.to_bytes()})


def _drive(app: KgaiApp, steps: Callable[[Pilot[None]], Awaitable[None]]) -> None:
    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await steps(pilot)

    asyncio.run(main())


def _counted(widget: object, method: str) -> list[int]:
    """Count the calls of a widget's method from now on (one item a call)."""
    calls: list[int] = []
    real = getattr(widget, method)

    def counted() -> None:
        calls.append(1)
        real()

    setattr(widget, method, counted)
    return calls


def _prompts(options: OptionList) -> list[str]:
    return [
        str(options.get_option_at_index(i).prompt) for i in range(options.option_count)
    ]


def test_the_details_list_the_newest_part_of_a_long_story(tmp_path: Path) -> None:
    app = make_app(_store(tmp_path), live=False)
    seen: list[list[str]] = []

    async def steps(pilot: Pilot[None]) -> None:
        app.open_element(element_id("feature", "Hot"))
        await settle(pilot)
        seen.append(_prompts(app.query_one("#element-links", OptionList)))

    _drive(app, steps)
    (rows,) = seen
    heading = [r for r in rows if r.startswith("Story · ")]
    assert heading == [
        f"Story · the newest {STORY_ROWS} of {DECIDED} decisions, oldest first · s: whole"
    ]
    told = [r for r in rows if "hot step" in r.split("\n")[0]]
    assert len(told) == STORY_ROWS
    assert f"hot step {DECIDED - STORY_ROWS:03d}" in told[0]
    assert f"hot step {DECIDED - 1:03d}" in told[-1]


def test_the_details_list_the_first_links_and_say_how_many_more(tmp_path: Path) -> None:
    app = make_app(_store(tmp_path), live=False)
    seen: list[list[str]] = []

    async def steps(pilot: Pilot[None]) -> None:
        app.open_element(element_id("feature", "Hub"))
        await settle(pilot)
        seen.append(_prompts(app.query_one("#element-links", OptionList)))

    _drive(app, steps)
    (rows,) = seen
    assert sum(r.startswith("→ USES ") for r in rows) == LINK_ROWS
    assert f"… {LINKED - LINK_ROWS} more links out: the Graph view (2)" in rows
    # The first by (kind, target id), as kg lists them.
    by_id = sorted(
        (element_id("service", f"L{n:03d}"), f"L{n:03d}") for n in range(LINKED)
    )
    assert [r for r in rows if r.startswith("→ ")] == [
        f"→ USES service:{name}" for _, name in by_id[:LINK_ROWS]
    ]


def test_the_story_screen_shows_a_page_and_the_page_before_on_enter(
    tmp_path: Path,
) -> None:
    app = make_app(_store(tmp_path), live=False)
    seen: dict[str, object] = {}

    async def steps(pilot: Pilot[None]) -> None:
        app.open_element(element_id("feature", "Hot"))
        await settle(pilot)
        await pilot.press("s")
        await settle(pilot)
        assert isinstance(app.screen, StoryScreen)
        story = app.screen.query_one("#story-list", OptionList)
        seen["first"] = _prompts(story)
        seen["cursor"] = story.highlighted
        await pilot.press("home", "enter")
        await settle(pilot)
        seen["after"] = _prompts(story)
        seen["cursor after"] = story.highlighted
        await pilot.press("y")
        await settle(pilot)
        seen["copied"] = app.clipboard

    _drive(app, steps)
    first = seen["first"]
    assert isinstance(first, list)
    earlier = DECIDED - STORY_PAGE
    assert first[0] == f"… {earlier} earlier decision(s) · enter shows {earlier} more"
    assert len(first) == STORY_PAGE + 1
    assert (
        f"hot step {earlier:03d}" in first[1]
        and f"hot step {DECIDED - 1:03d}" in first[-1]
    )
    assert seen["cursor"] == STORY_PAGE  # the newest, at the bottom
    after = seen["after"]
    assert isinstance(after, list) and len(after) == DECIDED  # no earlier line left
    assert f"hot step {0:03d}" in after[0]
    # The cursor stays on the entry it was on: the first of the page shown before.
    assert seen["cursor after"] == earlier
    assert f"hot step {earlier:03d}" in after[earlier]
    assert isinstance(seen["copied"], str) and seen["copied"].startswith("d_")
    assert seen["copied"] in after[earlier]


def test_hidden_conflicts_are_listed_when_shown_not_at_every_step(
    demo_store: Path,
) -> None:
    """A slider step with Elements in front lists no conflicts; showing Conflicts
    lists those of the moment on screen, and a step in front lists them again."""
    app = make_app(demo_store, live=False)
    seen: dict[str, object] = {}

    async def steps(pilot: Pilot[None]) -> None:
        view = app.query_one(ConflictsView)
        calls = _counted(view, "_list")
        assert app.query_one(ElementsView).display
        await pilot.press("less_than_sign")  # the first moment
        await settle(pilot)
        seen["hidden steps"] = len(calls)
        await pilot.press("4")
        await settle(pilot)
        seen["shown"] = len(calls)
        seen["at the start"] = _prompts(view.query_one("#conflict-list", OptionList))
        await pilot.press("greater_than_sign")  # now
        await settle(pilot)
        seen["now"] = _prompts(view.query_one("#conflict-list", OptionList))

    _drive(app, steps)
    assert seen["hidden steps"] == 0
    assert seen["shown"] == 1
    assert seen["at the start"] == []  # one decision: nothing contested yet
    assert isinstance(seen["now"], list) and seen["now"]  # the demo's open conflicts


def test_a_hidden_graph_is_drawn_when_shown_not_at_every_step(tmp_path: Path) -> None:
    """The Graph draws nothing while Elements is in front; ``2`` and Enter typed
    together walk from the drawing of the moment on screen."""
    app = make_app(_store(tmp_path), live=False)
    seen: dict[str, object] = {}

    async def steps(pilot: Pilot[None]) -> None:
        graph = app.query_one(GraphView)
        calls = _counted(graph, "_layout")
        app.open_element(element_id("feature", "Hub"))
        await settle(pilot)
        await pilot.press("less_than_sign", "greater_than_sign")
        await settle(pilot)
        seen["hidden"] = len(calls)
        # Together, as one terminal read delivers them (see test_key_order).
        app.post_message(events.Key("2", "2"))
        app.post_message(events.Key("enter", "\r"))
        await settle(pilot)
        seen["centre"] = graph.center

    _drive(app, steps)
    assert seen["hidden"] == 0
    first = min(element_id("service", f"L{n:03d}") for n in range(LINKED))
    assert seen["centre"] == first  # the first neighbour of the Hub, walked to


def test_the_diff_dialog_shows_each_sections_first_rows(tmp_path: Path) -> None:
    """From the first moment to now, :data:`DECIDED` decisions were recorded: the
    dialog lists the first :data:`DIFF_ROWS` and counts the rest."""
    app = make_app(_store(tmp_path), live=False)
    seen: list[str] = []

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("m", "less_than_sign")
        await settle(pilot)
        await pilot.press("D")
        await settle(pilot)
        assert isinstance(app.screen, DiffModal)
        seen.append(str(app.screen.query_one("#diff-body", Static).render()))

    _drive(app, steps)
    (body,) = seen
    recorded = body.split("\n\nDecisions recorded\n")[1].split("\n\n")[0].split("\n")
    assert sum(line.startswith("  2026-") for line in recorded) == DIFF_ROWS
    assert (
        recorded[-1]
        == f"  … and {DECIDED - DIFF_ROWS} more: kgai-tui diff prints every one"
    )


def test_the_palette_of_a_large_store_searches_its_decisions(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past :data:`PALETTE_DECISIONS`, the palette matches no title: one hit
    searches the words in the Search view. (The demo store stands for a
    large one: the bound is lowered below its count.)"""
    monkeypatch.setattr(palette, "PALETTE_DECISIONS", 2)
    app = make_app(demo_store, live=False)
    seen: list[object] = []

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"invoice")
        await asyncio.sleep(0.5)
        await pilot.pause()
        hits = app.screen.query_one("CommandList", OptionList)
        prompts = _prompts(hits)
        seen.append(prompts)
        hits.highlighted = next(
            n for n, p in enumerate(prompts) if p.startswith("search decisions: ")
        )
        await pilot.press("enter")
        await settle(pilot)
        seen.append(app.current_view)
        seen.append(app.query_one("#search-input", Input).value)

    _drive(app, steps)
    prompts, view, words = seen
    assert isinstance(prompts, list)
    searches = [p for p in prompts if p.startswith("search decisions: ")]
    assert [s.split("\n")[0] for s in searches] == ["search decisions: invoice"]
    assert not any(p.startswith("decision: ") for p in prompts)
    assert any(p.startswith("element: ") for p in prompts)  # elements still match
    assert (view, words) == ("search", "invoice")


def test_the_palette_yields_to_the_loop_while_it_matches(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A key typed while the palette matches thousands of labels cancels the
    search: the provider awaits the loop every few hundred labels."""
    waits: list[float] = []
    real_sleep = asyncio.sleep

    async def counted(delay: float, *args: object) -> object:
        if delay == 0:
            waits.append(delay)
        return await real_sleep(delay, *args)

    items = [(f"element: feature:E{n:05d}", "e", f"el_{n}") for n in range(4000)]
    monkeypatch.setattr(palette.asyncio, "sleep", counted)
    monkeypatch.setattr(palette.JumpProvider, "_items", lambda self: (items, True))
    app = make_app(demo_store, live=False)

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("ctrl+p")
        await pilot.pause()
        waits.clear()
        await pilot.press("E")
        await real_sleep(0.5)
        await pilot.pause()

    _drive(app, steps)
    assert len(waits) >= len(items) // 400


def test_huge_store_text_is_laid_out_cut_with_a_note(tmp_path: Path) -> None:
    """A title of 100,000 characters and a rationale of 100,000 lines: the record
    and the details lay out the first part of each, then say how much more."""
    title, why = "T" * 100_000, "\n".join(f"line {n}" for n in range(100_000))
    w = ShardWriter("i1")
    w.add(
        decision(title, [upsert("service", "Big", note="x" * 50_000)], rationale=why),
        lamport=1,
        recorded_at="2026-01-01T00:00:00Z",
    )
    root = write_store(tmp_path / "s", {"i1.ndjson": w.to_bytes()})
    v = KgView(open_engine(root).projection)
    (idx,) = v.history(element_id("service", "Big"))
    record = decision_record(v, idx, palette=ANSI).plain
    assert (
        f"{'T' * TITLE_CHARS} … ({100_000 - TITLE_CHARS:,} more characters;" in record
    )
    assert "T" * (TITLE_CHARS + 1) not in record
    assert f"line {PROSE_LINES - 1}" in record and f"line {PROSE_LINES}\n" not in record
    assert f"({100_000 - PROSE_LINES:,} more lines;" in record
    details = element_details(v, element_id("service", "Big"), palette=ANSI).plain
    assert "T" * (TITLE_CHARS + 1) not in details
    assert "x" * (TEXT_CHARS + 1) not in details
    assert f"({50_000 - TEXT_CHARS:,} more characters;" in details
    small = bounded("short", keep_newlines=True)
    assert small.plain == "short"


def test_many_conflicts_are_laid_out_a_page_at_a_time(tmp_path: Path) -> None:
    """With more conflicts than a page, the list lays out one page and a line for
    the rest; Enter on that line lays out the next page, the cursor on its first
    conflict, and Enter on a conflict still opens its element."""
    many = CONFLICT_PAGE + 30
    writers = [ShardWriter("i1"), ShardWriter("i2")]
    for n in range(many):
        for w, who in zip(writers, ("alice", "bob"), strict=True):
            d = decision(
                f"{who} on {n:03d}", [upsert("feature", f"C{n:03d}")], author=who
            )
            w.add(
                d,
                lamport=n + 1,
                recorded_at=f"2026-01-01T00:{n // 60:02d}:{n % 60:02d}Z",
            )
    store = write_store(
        tmp_path / "store",
        {f"i{k}.ndjson": w.to_bytes() for k, w in enumerate(writers, 1)},
    )
    app = make_app(store, live=False)
    seen: dict[str, object] = {}

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("4")
        await settle(pilot)
        options = app.query_one(ConflictsView).query_one("#conflict-list", OptionList)
        seen["first"] = _prompts(options)
        options.highlighted = options.option_count - 1
        await pilot.press("enter")
        await settle(pilot)
        seen["more"] = _prompts(options)
        seen["cursor"] = options.highlighted
        await pilot.press("enter")
        await settle(pilot)
        seen["opened"] = app.query_one(ElementsView).display

    _drive(app, steps)
    first, more = seen["first"], seen["more"]
    assert isinstance(first, list) and isinstance(more, list)
    assert len(first) == CONFLICT_PAGE + 1
    assert first[-1] == "… 30 more conflict(s) · enter shows 30 more"
    assert first[0] == "feature:C000  2 heads"
    assert first[-2] == f"feature:C{CONFLICT_PAGE - 1:03d}  2 heads"
    assert len(more) == many and more[-1] == f"feature:C{many - 1:03d}  2 heads"
    assert seen["cursor"] == CONFLICT_PAGE
    assert seen["opened"] is True
