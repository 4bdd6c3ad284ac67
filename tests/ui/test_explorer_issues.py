"""The explorer's users' problems (issue 39), each pinned by a Pilot test.

One test per problem: a self-contradicting resolution, a write without a confirm,
the timeline's hidden last row, marks that meant different things, search that
trapped the focus, keys you could not see, no path view, a stale Elements view,
time travel by keys only, and People disagreeing with the header.
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from rich.console import Console
from rich.text import Text
from settle import settle
from textual.pilot import Pilot
from textual.widgets import ContentSwitcher, Input, OptionList, Static, Tree

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.reads.legend import MARKS, Status
from kgai_tui.core.reads.people import people_obj
from kgai_tui.core.reads.timeline import timeline_columns, timeline_select
from kgai_tui.core.reads.view import KgView
from kgai_tui.core.wire.codec import decode_line
from kgai_tui.core.wire.ids import element_id
from kgai_tui.core.wire.props import parse_props
from kgai_tui.ui.app import KgaiApp, make_app
from kgai_tui.ui.resolve import ResolveScreen
from kgai_tui.ui.widgets.decision_list import DecisionList
from kgai_tui.ui.widgets.key_bar import KeyBar
from kgai_tui.ui.widgets.time_slider import TimeSlider

PRODUCT_SEARCH = element_id("feature", "ProductSearch")
OWN_SHARD = "i0de0000000000001.ndjson"


def _drive(
    app: KgaiApp,
    steps: Callable[[Pilot[None]], Awaitable[None]],
    size: tuple[int, int] = (120, 40),
) -> None:
    async def main() -> None:
        async with app.run_test(size=size) as pilot:
            await settle(pilot)
            await steps(pilot)

    asyncio.run(main())


def _text(app: KgaiApp, selector: str) -> str:
    """What a Static shows, as plain text (a Group or Table rendered wide)."""
    content = app.screen.query_one(selector, Static).content
    if isinstance(content, str | Text):
        return str(content)
    console = Console(width=200, file=io.StringIO(), record=True)
    console.print(content)
    return console.export_text()


# 1 ------------------------------------------------------------------ resolution


def test_a_new_resolving_decision_sets_the_contested_property(
    demo_store: Path,
) -> None:
    """The new decision carries the contested prop as edited: the element then
    says what the resolution says, and the appended line verifies."""
    app = make_app(demo_store, live=False)
    seen: dict[str, object] = {}

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("4", "r")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ResolveScreen)
        # Both sides' values are offered, the element's value pre-filled.
        assert [p.key for p in screen.props] == ["show_sold_out"]
        assert screen.props[0].differs
        await pilot.press("n")
        await pilot.pause()
        await pilot.press(*"Sold-out products stay 30 days, marked")
        await pilot.press("tab", *"SEO keeps the page; support gets clarity.")
        await pilot.press("tab")
        box = screen.query_one("#prop-0", Input)
        assert app.focused is box
        box.value = "first 30 days, marked"
        await pilot.press("ctrl+n")
        await settle(pilot)
        seen["preview"] = _text(app, "#resolve-preview")
        assert not (demo_store / "log" / OWN_SHARD).exists()
        await pilot.press("a")
        await settle(pilot)
        await asyncio.sleep(0.3)
        await settle(pilot)
        seen["view"] = app.query_one(ContentSwitcher).current
        seen["selected"] = app.selected_element
        seen["details"] = _text(app, "#element-details")

    _drive(app, steps)
    preview = str(seen["preview"])
    assert "set_prop feature:ProductSearch show_sold_out = first 30 days, marked" in (
        preview
    )
    assert "author" in preview and "you  (the store's actor" in preview
    assert "supersedes" in preview and "d_15dcbf1e96607e3dd9b8166c" in preview
    assert seen["view"] == "elements" and seen["selected"] == PRODUCT_SEARCH
    assert "show_sold_out = first 30 days, marked" in str(seen["details"])
    p = open_engine(demo_store).projection
    props = (p.element(PRODUCT_SEARCH) or ("", "", ""))[2]
    assert parse_props(props)["show_sold_out"] == "first 30 days, marked"
    assert PRODUCT_SEARCH not in p.contested
    line = (demo_store / "log" / OWN_SHARD).read_bytes().splitlines()
    assert len(line) == 1
    decoded = decode_line(line[0])
    assert decoded.hash_ok and decoded.decision_id_ok


# 2 ------------------------------------------------------------------ confirm


def test_enter_never_writes_and_a_resolution_needs_a_why(demo_store: Path) -> None:
    """r then Enter previews; Enter again goes back; an empty why is refused;
    the preview names the store's actor and the shard; after `a` the new
    decision is selected in the element's story and its id is said."""
    app = make_app(demo_store, live=False)
    seen: dict[str, object] = {}
    shard = demo_store / "log" / OWN_SHARD

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("4", "r", "enter")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ResolveScreen) and screen.step == "confirm"
        seen["preview"] = _text(app, "#resolve-preview")
        await pilot.press("enter")  # the focus starts on Back
        await settle(pilot)
        assert screen.step == "choose" and not shard.exists()
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ResolveScreen)
        await pilot.press("r", "n", *"A title without a why", "ctrl+n")
        await settle(pilot)
        seen["step"] = screen = app.screen
        assert isinstance(screen, ResolveScreen) and screen.step == "write"
        assert not shard.exists()
        await pilot.press("escape", "1", "a")
        await settle(pilot)
        await asyncio.sleep(0.3)
        await settle(pilot)
        links = app.query_one("#element-links", OptionList)
        seen["focused"] = app.focused is links
        seen["row"] = str(links.get_option_at_index(links.highlighted or 0).prompt)
        seen["notes"] = [n.message for n in app._notifications]

    _drive(app, steps)
    preview = str(seen["preview"])
    assert f"log/{OWN_SHARD.removesuffix('.ndjson')}.ndjson" in preview
    assert "a new shard" in preview and "you  (the store's actor" in preview
    p = open_engine(demo_store).projection
    ours = [i for i, w in enumerate(p.dec_install) if w == "i0de0000000000001"]
    assert len(ours) == 1
    new = p.dec_id[ours[0]]
    assert seen["focused"] is True
    assert p.dec_title[ours[0]] in str(seen["row"])
    assert any(new in str(note) for note in seen["notes"])  # type: ignore[attr-defined]


# 3 ------------------------------------------------------------------ timeline


def test_the_timeline_shows_its_newest_decision_at_any_size(demo_store: Path) -> None:
    """End puts the cursor on the last row, inside the visible rows (no scrollbar
    on it); after a resize to 80x24 PageDown reaches the last decision."""
    app = make_app(demo_store, live=False)
    seen: list[tuple[int, int, int, int]] = []

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("3")
        await settle(pilot)
        rows = app.query_one("#timeline-list", DecisionList)
        await pilot.press("end")
        await pilot.pause()
        seen.append((rows.cursor, len(rows.rows), rows.scroll_offset.y, rows.page))
        await pilot.press("home")
        await pilot.pause()
        await pilot.resize_terminal(80, 24)
        await settle(pilot)
        for _ in range(10):
            await pilot.press("pagedown")
        await pilot.pause()
        seen.append((rows.cursor, len(rows.rows), rows.scroll_offset.y, rows.page))
        assert rows.scrollbar_size_horizontal == 0 or not rows.show_horizontal_scrollbar

    _drive(app, steps)
    for cursor, count, top, page in seen:
        assert cursor == count - 1
        assert top <= cursor < top + page


# 4 ------------------------------------------------------------------ one legend


def test_every_view_and_the_counts_use_one_legend(demo_store: Path) -> None:
    """A decision's mark is its legend status in the timeline, the decision
    record and search; on an element it is its status there, in the story and
    the CLI's history; People's counts add up and equal the timeline's filters."""
    engine = open_engine(demo_store)
    v = KgView(engine.projection)
    columns = timeline_columns(v)
    by_status = {
        status: list(timeline_select(v, columns, (None, None, None, status))[0])
        for status in ("head", "superseded", "dead")
    }
    people = people_obj(engine.projection)["people"]
    for status, key in (("head", "in_force"), ("superseded", "superseded")):
        assert len(by_status[status]) == sum(row[key] for row in people)
    assert len(by_status["dead"]) == sum(row["dead_ends"] for row in people)
    assert sum(map(len, by_status.values())) == v.recorded_count()
    for idx in by_status["superseded"]:
        assert v.status(idx) is Status.SUPERSEDED
    for idx in by_status["dead"]:
        assert v.status(idx) is Status.DEAD_END

    app = make_app(demo_store, live=False)
    seen: dict[str, list[str]] = {}

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("3")
        await settle(pilot)
        rows = app.query_one("#timeline-list", DecisionList)
        seen["timeline"] = [rows.render_row(i, 200).plain for i in rows.rows]
        seen["ids"] = [v.decision(i).id for i in rows.rows]

    _drive(app, steps)
    for line, did in zip(seen["timeline"], seen["ids"], strict=True):
        idx = v.decision_index(did)
        assert idx is not None
        assert line[11] == MARKS[v.status(idx)], (line, v.status(idx))

    from click.testing import CliRunner

    from kgai_tui.cli.main import main

    for eid in sorted(v.element_ids())[:12]:
        out = CliRunner().invoke(
            main, ["history", eid, "--store", str(demo_store), "--text"]
        )
        if out.exit_code:
            continue
        for idx in v.history(eid):
            status = v.status_on(eid, idx)
            title = v.title(idx)
            mark = f"{MARKS[status]} {status.value}"
            assert any(title in ln and mark in ln for ln in out.output.splitlines())


# 5 ------------------------------------------------------------------ search focus


def test_search_keeps_the_focus_where_typing_goes_and_explains_zero_hits(
    demo_store: Path,
) -> None:
    """5 then a habitual / types nothing; Enter with no hits stays in the box;
    an unknown kind and an unclosed quote are said, not just "0 hits"."""
    app = make_app(demo_store, live=False)
    seen: dict[str, object] = {}

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("5", "slash", *"zzqx", "enter")
        await asyncio.sleep(0.4)
        await settle(pilot)
        box = app.query_one("#search-input", Input)
        seen["value"] = box.value
        seen["focus"] = app.focused is box
        box.value = 'kind:foo "never closed'
        await asyncio.sleep(0.4)
        await settle(pilot)
        seen["caption"] = _text(app, "#search-caption")

    _drive(app, steps)
    assert seen["value"] == "zzqx" and seen["focus"] is True
    caption = str(seen["caption"])
    assert "no element kind 'foo'" in caption
    assert "unclosed quote" in caption


# 6 ------------------------------------------------------------------ keys


@pytest.mark.parametrize("size", [(80, 24), (60, 20), (120, 40)])
def test_every_view_shows_its_keys_and_help_and_quit(
    demo_store: Path, size: tuple[int, int]
) -> None:
    """The key bar names the view, shows its own keys, and always ? and q; the
    header keeps its health badge at every width, after a resize too. A view that
    opens on its text box (Search, Paths) lists only the keys that act while
    typing, and Escape to leave the box: its other keys would be typed."""
    app = make_app(demo_store, live=False)
    bars: dict[str, str] = {}
    typing: dict[str, str] = {}
    headers: list[str] = []

    async def steps(pilot: Pilot[None]) -> None:
        for key in "1234567":
            await pilot.press(key)
            await settle(pilot)
            if app.current_view in ("search", "paths"):
                typing[app.current_view] = str(app.query_one(KeyBar).render())
                await pilot.press("escape")  # "key" would go into the box
                await settle(pilot)
            bars[app.current_view] = str(app.query_one(KeyBar).render())
        headers.append(_text(app, "#header"))
        await pilot.resize_terminal(size[0] - 10, size[1])
        await settle(pilot)
        headers.append(_text(app, "#header"))

    _drive(app, steps, size)
    own = {
        "elements": "f filter",
        "graph": "↑ ↓ pick",
        "timeline": "tab filters",
        "conflicts": "r resolve",
        "search": "hits/open",
        "paths": "element",
        "people": "shaped",
    }
    assert sorted(bars) == sorted(own)  # every view was shown
    for view, bar in bars.items():
        assert "? help" in bar and ("q quit" in bar or "q back" in bar), bar
        assert own[view] in bar, bar
        assert view.capitalize() in bar
    assert sorted(typing) == ["paths", "search"]
    for view, bar in typing.items():
        assert view.capitalize() in bar and "esc leave box" in bar, bar
        assert "? help" not in bar and "1-8" not in bar and "q " not in bar, bar
    assert "⏎ hits" in typing["search"] and "^t +superseded" in typing["search"]
    assert "⏎ answer" in typing["paths"]
    assert all("✓ healthy" in h for h in headers), headers


def test_a_dialogs_text_box_leaves_the_views_key_bar_as_it_was(
    demo_store: Path,
) -> None:
    """``t`` opens a dialog with its own box; typing there is the dialog's. Back on
    the view (the tree still focused), its bar lists its keys again, not the
    typing bar (it kept that, as focus came back without an event)."""
    app = make_app(demo_store, live=False)
    bars: list[str] = []

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("t", *"-1m", "enter")
        await settle(pilot)
        bars.append(str(app.query_one(KeyBar).render()))

    _drive(app, steps)
    assert "f filter" in bars[0] and "esc leave box" not in bars[0], bars


# 7 ------------------------------------------------------------------ paths


def test_a_path_reaches_the_decisions_that_govern_it(demo_store: Path) -> None:
    """6, a path: the elements whose paths match and their decisions in force, as
    context --paths answers; Enter shows the element. The Elements filter matches
    paths too, and an empty filter result says why."""
    app = make_app(demo_store, live=False)
    seen: dict[str, object] = {}

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("6", *"services/checkout/order/api.go")
        await asyncio.sleep(0.4)
        await settle(pilot)
        results = app.query_one("#paths-results", OptionList)
        seen["rows"] = [
            str(results.get_option_at_index(i).prompt)
            for i in range(results.option_count)
        ]
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        seen["view"] = app.current_view
        seen["selected"] = app.selected_element
        await pilot.press("f", *"services/checkout")
        await settle(pilot)
        tree = app.query_one("#element-tree", Tree)
        seen["tree"] = [n.label.plain for n in tree.root.children]
        seen["details"] = _text(app, "#element-details")
        box = app.query_one("#element-filter", Input)
        box.value = "no-such-thing"
        await settle(pilot)
        seen["empty"] = [n.label.plain for n in tree.root.children]
        seen["empty details"] = _text(app, "#element-details")

    _drive(app, steps)
    rows = [str(r) for r in seen["rows"]]  # type: ignore[attr-defined]
    order = [r for r in rows if r.startswith("business object:Order")]
    assert order and "services/checkout/order/*" in order[0] and "● " in order[0]
    assert any(r.startswith("service:Checkout  services/checkout/**") for r in rows)
    kind, _, name = rows[0].split("  ")[0].partition(":")
    assert seen["view"] == "elements"
    assert seen["selected"] == element_id(kind, name)
    assert any("business object" in b for b in seen["tree"])  # type: ignore[attr-defined]
    assert "Order" in str(seen["details"]) or "Checkout" in str(seen["details"])
    assert seen["empty"] == [
        "no element's name, kind or paths matches “no-such-thing” · escape clears"
    ]
    assert "filter hides every element" in str(seen["empty details"])


# 8 ------------------------------------------------------------------ elements


def test_the_elements_view_follows_the_filter_jumps_and_goes_back(
    demo_store: Path,
) -> None:
    """The detail pane follows the filter at once; a jump to an element the filter
    hides clears it; Escape after a jump from the timeline goes back there; the
    story says who, when and what replaced what."""
    app = make_app(demo_store, live=False)
    seen: dict[str, object] = {}
    refunds = element_id("feature", "Refunds")

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("f", *"tracing")
        await settle(pilot)
        seen["filtered"] = _text(app, "#element-details").splitlines()[0]
        app.open_element(refunds)
        await settle(pilot)
        seen["filter"] = app.query_one("#element-filter", Input).value
        seen["jumped"] = _text(app, "#element-details").splitlines()[0]
        await pilot.press("3")
        await settle(pilot)
        await pilot.press("enter")  # the first decision's record
        await settle(pilot)
        await pilot.press("escape")
        await pilot.pause()
        app.open_element(refunds)  # as following a decision's element does
        await settle(pilot)
        await pilot.press("escape")
        await settle(pilot)
        seen["back"] = app.current_view
        await pilot.press("1", "s")
        await settle(pilot)
        story = app.screen.query_one("#story-list", OptionList)
        seen["story"] = [
            str(story.get_option_at_index(i).prompt) for i in range(story.option_count)
        ]

    _drive(app, steps)
    assert str(seen["filtered"]).startswith("Tracing")
    assert seen["filter"] == "" and str(seen["jumped"]).startswith("Refunds")
    assert seen["back"] == "timeline"
    story = "\n".join(str(s) for s in seen["story"])  # type: ignore[attr-defined]
    assert "replaced by" in story and "│ " in story and " · superseded · d_" in story


# 9 ------------------------------------------------------------------ time travel


async def _go_to(
    app: KgaiApp, pilot: Pilot[None], text: str, seen: dict[str, object]
) -> None:
    """``t``, then ``text``: the line under the box (``meaning``), then Enter: the
    slider's moment (``moment``; ``None`` is now)."""
    await pilot.press("t", *text)
    await pilot.pause()
    seen["meaning"] = _text(app, "#moment-meaning")
    await pilot.press("enter")
    await settle(pilot)
    seen["moment"] = app.query_one(TimeSlider).moment


def test_time_travel_by_a_typed_moment_and_home_stays_in_the_list(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """t and -3m go three calendar months back from now (the slider at the last
    decision at or before it); Home in the tree moves the tree, not the slider;
    reading the history leaves no notification behind."""
    monkeypatch.setenv("KGAI_TUI_NOW", "2026-06-15T00:00:00Z")
    app = make_app(demo_store, live=False)
    seen: dict[str, object] = {}

    async def steps(pilot: Pilot[None]) -> None:
        tree = app.query_one("#element-tree", Tree)
        await pilot.press("down", "down", "down", "home")
        await settle(pilot)
        seen["tree"] = tree.cursor_line
        seen["slider"] = app.query_one(TimeSlider).moment
        await _go_to(app, pilot, "-3m", seen)
        seen["banner"] = _text(app, "#banner")
        seen["notes"] = [n.message for n in app._notifications]

    _drive(app, steps)
    assert seen["tree"] == 0 and seen["slider"] is None
    assert str(seen["meaning"]).startswith("2026-03-15 00:00 UTC · 3 months ago")
    moment = seen["moment"]
    assert isinstance(moment, datetime)
    assert moment <= datetime(2026, 3, 15, tzinfo=UTC)
    engine = open_engine(demo_store)
    later = [
        t
        for t, h in zip(
            engine.projection.dec_time, engine.projection.dec_hash, strict=True
        )
        if h and t is not None and moment.timestamp() < t <= 1773532800
    ]
    assert later == []  # no decision between the slider and the moment asked for
    assert "months ago" in str(seen["banner"])
    assert not any("whole store" in str(n) for n in seen["notes"])  # type: ignore[attr-defined]


def test_a_moment_after_the_last_decision_says_it_is_the_store_now(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo's last decision is months before this clock: -3m is after it, so
    the slider lands on now, and the line under the box says so before Enter."""
    monkeypatch.setenv("KGAI_TUI_NOW", "2026-12-07T00:00:00Z")
    app = make_app(demo_store, live=False)
    seen: dict[str, object] = {}

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("left_square_bracket")  # the history: the moments known
        await settle(pilot)
        seen["last"] = app.query_one(TimeSlider).moments[-1]
        await _go_to(app, pilot, "-3m", seen)

    _drive(app, steps)
    last = seen["last"]
    assert isinstance(last, datetime) and last < datetime(2026, 9, 7, tzinfo=UTC)
    assert str(seen["meaning"]) == (
        "2026-09-07 00:00 UTC · 3 months ago · nothing recorded since "
        f"{last:%Y-%m-%d %H:%M} UTC: the store as it is now"
    )
    assert seen["moment"] is None  # now


# 10 ----------------------------------------------------------------- people


def test_people_say_what_they_count_and_show_every_column_at_80(
    demo_store: Path,
) -> None:
    """People are authors, writers are installs, both counted in the caption; the
    last column is on screen at 80x24; the flow counts what the table counts."""
    app = make_app(demo_store, live=False)
    seen: dict[str, str] = {}

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("7")
        await settle(pilot)
        seen["caption"] = _text(app, "#people-caption")
        seen["flow"] = _text(app, "#people-flow")
        table = app.query_one("#people-table")
        seen["width"] = str(table.virtual_size.width <= table.size.width)

    _drive(app, steps, (80, 24))
    rows = people_obj(open_engine(demo_store).projection)["people"]
    writers = {w for r in rows for w in r["writers"]}
    assert (
        f"{len(rows)} people (authors) · {len(writers)} writer(s) (installs)"
        in (seen["caption"])
    )
    assert seen["width"] == "True"
    first = rows[0]
    assert (
        f"{first['superseded']} of {first['decisions']} decision(s) superseded"
        in (seen["flow"])
    )


def test_a_read_model_damaged_behind_its_seal_is_a_line_not_a_crash(
    demo_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An element whose decision rows another program removed from the cached
    model (its seal written again) shows one line saying what to run, where the
    explorer died with a traceback; it keeps running."""
    import sqlite3

    import orjson

    from kgai_tui.core.model.open import open_model
    from kgai_tui.core.model.schema import model_path
    from kgai_tui.core.model.seal import model_lock, write_seal

    cache = tmp_path / "cache"
    monkeypatch.setenv("KGAI_TUI_CACHE_DIR", str(cache))
    open_model(demo_store, cache).close()
    path = model_path(demo_store, cache)
    bus = element_id("infra", "EventBus")
    with model_lock(path):
        db = sqlite3.connect(path, isolation_level=None)
        (shapes,) = db.execute("SELECT shapes FROM el WHERE id = ?", (bus,)).fetchone()
        first = orjson.loads(shapes)[0][0]
        db.execute("DELETE FROM dec WHERE ix = ?", (first,))
        db.close()
        write_seal(path)
    app = make_app(demo_store, live=False)
    seen: dict[str, str] = {}

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("f", *"EventBus", "enter")
        await settle(pilot)
        seen["bus"] = _text(app, "#element-details")
        seen["running"] = str(app.is_running)

    _drive(app, steps, size=(100, 30))
    assert "read model kept for this store is damaged" in seen["bus"]
    assert "kgai-tui rebuild" in seen["bus"]
    assert seen["running"] == "True"
