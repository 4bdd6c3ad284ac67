"""The explorer driven through Textual's Pilot: views, slider, resolve, live, safety."""

from __future__ import annotations

import asyncio
import io
import json
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from builders import ShardWriter, decision, link, upsert, write_store
from settle import settle
from textual import events
from textual.pilot import Pilot
from textual.widgets import ContentSwitcher, Input, OptionList, Static, Tree

from kgai_tui.core.engine import open as engine_open
from kgai_tui.core.engine.engine import Engine
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.model.open import open_model
from kgai_tui.core.reads.as_of import project_as_of
from kgai_tui.core.reads.export import export_parts
from kgai_tui.core.reads.kg import conflicts_obj
from kgai_tui.core.reads.moments import TimeCursor
from kgai_tui.core.wire.codec import decode_line
from kgai_tui.ui.app import KgaiApp, make_app
from kgai_tui.ui.widgets.decision_list import DecisionList
from kgai_tui.ui.widgets.time_slider import TimeSlider

SIZE = (120, 40)


def _drive(app: KgaiApp, steps: Callable[[Pilot[None]], Awaitable[None]]) -> None:
    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await steps(pilot)

    asyncio.run(main())


def _screen_text(app: KgaiApp) -> str:
    """Everything the current screen shows: statics, tree labels, list rows."""
    parts = [str(static.render()) for static in app.screen.query(Static)]
    for tree in app.screen.query(Tree):
        stack = list(tree.root.children)
        while stack:
            node = stack.pop()
            parts.append(node.label.plain)
            stack.extend(node.children)
    for options in app.screen.query(OptionList):
        parts += [
            str(options.get_option_at_index(i).prompt)
            for i in range(options.option_count)
        ]
    for rows in app.screen.query(DecisionList):
        parts += [rows.render_row(idx, 200).plain for idx in rows.rows]
    return "\n".join(parts)


def test_keys_one_to_five_switch_views(demo_store: Path) -> None:
    """1-5 show Elements, Graph, Timeline, Conflicts and Search."""
    app = make_app(demo_store, live=False)
    seen: list[str | None] = []

    async def steps(pilot: Pilot[None]) -> None:
        for key in "12345":
            await pilot.press(key)
            await pilot.pause()
            seen.append(app.query_one(ContentSwitcher).current)
        await pilot.press("escape", "1")
        await pilot.pause()
        seen.append(app.query_one(ContentSwitcher).current)

    _drive(app, steps)
    assert seen == ["elements", "graph", "timeline", "conflicts", "search", "elements"]


def test_going_back_to_a_view_restores_where_its_focus_was(demo_store: Path) -> None:
    """Escape returns to the previous view with the focus where the user left it:
    a Paths box left for its list stays left, so the next digit switches views
    instead of being typed into the box (``6``, escape, ``7``, escape, ``8``
    typed "8" into the paths box). Entered by its key, a view focuses its box."""
    app = make_app(demo_store, live=False)
    seen: list[tuple[str | None, str | None]] = []
    typed: list[str] = []

    def place() -> tuple[str | None, str | None]:
        focused = app.screen.focused
        return app.query_one(ContentSwitcher).current, focused and focused.id

    async def steps(pilot: Pilot[None]) -> None:
        for keys in (("6",), ("escape",), ("7",), ("escape",), ("8",), ("escape",)):
            await pilot.press(*keys)
            await pilot.pause()
            seen.append(place())
        await pilot.press("escape", "escape", "6")  # back to People, then Paths
        await pilot.pause()
        seen.append(place())
        typed.append(app.query_one("#paths-input", Input).value)

    _drive(app, steps)
    assert seen == [
        ("paths", "paths-input"),
        ("paths", "paths-results"),
        ("people", "people-table"),
        ("paths", "paths-results"),  # not the box: the 8 below is a view key
        ("query", "query-input"),
        ("query", "query-table"),
        ("paths", "paths-input"),  # entered by its key: the box, to type in
    ]
    assert typed == [""]


def test_header_counts_match_the_engine(demo_store: Path) -> None:
    """The header shows the store's elements, decisions, writers and conflicts."""
    app = make_app(demo_store, live=False)
    header: list[str] = []

    async def steps(pilot: Pilot[None]) -> None:
        header.append(str(app.query_one("#header", Static).render()))

    _drive(app, steps)
    engine = open_engine(demo_store)
    p = engine.projection
    assert f"{p.graph.number_of_nodes()} elements" in header[0]
    assert f"{len(p.dec_id)} decisions" in header[0]
    assert "4 writers" in header[0]
    assert f"{len(p.contested)} open conflicts" in header[0]
    assert "healthy" in header[0]


def test_resolving_a_conflict_end_to_end(demo_store: Path) -> None:
    """Keep one side in the dialog: the event lands in the log, verifies, list updates."""
    before = conflicts_obj(open_engine(demo_store).projection)
    app = make_app(demo_store, live=False)
    counts: list[int] = []

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("4")
        await pilot.pause()
        await pilot.press("r")
        await pilot.pause()
        await pilot.press("1")  # keep side 1: a preview, nothing written yet
        await settle(pilot)
        assert not (demo_store / "log" / "i0de0000000000001.ndjson").exists()
        await pilot.press("a")  # append what the preview shows
        await settle(pilot)
        await asyncio.sleep(0.2)
        await settle(pilot)
        assert app.snapshot is not None
        counts.append(len(app.snapshot.projection.contested))

    _drive(app, steps)
    after = conflicts_obj(open_engine(demo_store).projection)
    assert after["count"] == before["count"] - 1
    assert counts == [after["count"]]
    own = demo_store / "log" / "i0de0000000000001.ndjson"
    lines = own.read_bytes().splitlines()
    assert len(lines) == 1
    decoded = decode_line(lines[0])
    assert decoded.hash_ok and decoded.decision_id_ok


def test_slider_shows_the_graph_as_of_that_moment(demo_store: Path) -> None:
    """After stepping back, the projection shown equals `as-of` at the slider moment."""
    app = make_app(demo_store, live=False)
    seen: list[tuple[datetime | None, object]] = []

    async def steps(pilot: Pilot[None]) -> None:
        for _ in range(12):
            await pilot.press("left_square_bracket")
        await settle(pilot)
        slider = app.query_one(TimeSlider)
        assert app.snapshot is not None
        seen.append((slider.moment, export_parts(app.snapshot.projection)))
        banner = str(app.query_one("#banner", Static).render())
        assert banner.startswith("as of ")
        await pilot.press("left_curly_bracket")
        await settle(pilot)
        seen.append((slider.moment, export_parts(app.snapshot.projection)))
        await pilot.press("greater_than_sign")
        await settle(pilot)
        assert slider.moment is None

    _drive(app, steps)
    engine = open_engine(demo_store)
    for moment, parts in seen:
        assert moment is not None
        assert parts == export_parts(project_as_of(engine.shards, moment))
    assert seen[1][0] is not None and seen[0][0] is not None
    assert seen[1][0] < seen[0][0]


@pytest.mark.parametrize(
    ("burst", "months_back"),
    [(("{", ">", "{", "{", ">"), 0), (("{", "{", ">", "{"), 1)],
)
def test_slider_keys_in_one_burst_act_in_the_order_typed(
    demo_store: Path, burst: tuple[str, ...], months_back: int
) -> None:
    """A paste or a fast macro delivers keys in one read, as a terminal does. `>`
    (now) must not jump ahead of the `{` keys before it."""
    names = {"{": "left_curly_bracket", ">": "greater_than_sign"}
    app = make_app(demo_store, live=False)

    async def steps(pilot: Pilot[None]) -> None:
        slider = app.query_one(TimeSlider)
        assert slider.moments  # the time index is read
        expected = len(slider.moments)
        for _ in range(months_back):
            slider.step_month(-1)
            expected = slider.position
        slider.jump(to_start=False)
        await settle(pilot)
        for key in burst:  # all queued before the app handles the first
            char = key if len(key) == 1 else None
            app.post_message(events.Key(names[key], char))
        await settle(pilot)
        assert slider.position == expected, (slider.position, expected)

    _drive(app, steps)


def _record_in_another_process(store: Path, payload: str) -> None:
    """Record one decision with `kgai-tui record`, as another process would."""
    subprocess.run(
        [sys.executable, "-m", "kgai_tui", "record", "--store", str(store), "-"],
        input=payload.encode(),
        check=True,
        capture_output=True,
    )


def test_a_slow_past_projection_never_takes_the_screen_back_from_now(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`{` then `>` at once: the past moment's projection, slower than the present,
    lands last, and the screen still shows now (the last place asked for)."""
    real_at = TimeCursor.at

    def slow_at(self: TimeCursor, moment: datetime) -> object:
        projection = real_at(self, moment)
        time.sleep(0.4)
        return projection

    monkeypatch.setattr(TimeCursor, "at", slow_at)
    app = make_app(demo_store, live=False)

    async def steps(pilot: Pilot[None]) -> None:
        slider = app.query_one(TimeSlider)
        assert slider.moments  # the time index is read
        await pilot.press("left_curly_bracket")
        await pilot.pause()
        await pilot.press("greater_than_sign")
        await asyncio.sleep(0.8)  # the cancelled worker runs on to its end
        await settle(pilot)
        assert slider.moment is None
        assert app.snapshot is not None and app.snapshot.moment is None
        banner = str(app.query_one("#banner", Static).render())
        assert not banner.startswith("as of "), banner

    _drive(app, steps)


def _second_read_lands_last(
    read: Callable[..., Any],
) -> tuple[Callable[..., Any], list[int], threading.Event]:
    """``read`` made slow once: the second open (the first reload) waits until the
    third (the reload after a write) has read, then lands after it. Returns the
    slow read, the opens so far and the event set when the second one has read."""
    opened: list[int] = []
    first_reload_read, second_reload_read = threading.Event(), threading.Event()

    def slowly_once(root: Path, **options: Any) -> Any:
        got = read(root, **options)
        opened.append(len(opened))
        if len(opened) == 2:
            first_reload_read.set()
            second_reload_read.wait(10)
            time.sleep(0.3)
        elif len(opened) == 3:
            second_reload_read.set()
        return got

    return slowly_once, opened, first_reload_read


def _race_two_reloads(
    demo_store: Path,
    opened: list[int],
    first_reload_read: threading.Event,
    title: str,
    check: Callable[[KgaiApp], None],
) -> None:
    """Reload, record ``title`` in another process once that reload has read,
    reload again; then ``check`` the app, three opens later."""
    app = make_app(demo_store, live=False)
    mutation = {"op": "upsert_element", "kind": "feature", "name": "Between"}
    payload = json.dumps({"decision": {"title": title, "mutations": [mutation]}})

    async def steps(pilot: Pilot[None]) -> None:
        app.action_reload()
        await asyncio.to_thread(first_reload_read.wait, 10)
        _record_in_another_process(demo_store, payload)
        app.action_reload()
        await asyncio.sleep(1.0)  # the first reload's worker runs on to its end
        await settle(pilot)
        assert len(opened) == 3
        check(app)

    _drive(app, steps)


def test_a_reload_begun_before_a_write_never_replaces_the_one_after_it(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two reloads in flight: the older one, slower, lands last and is dropped, so
    the explorer holds the store as it is after the write (the whole store read:
    the write's model is not used; the model's twin is the next test)."""
    monkeypatch.setenv("KGAI_TUI_READ_MODEL", "off")
    real_open = engine_open.open_engine

    def read_whole(root: Path) -> Engine:
        engine = real_open(root)
        engine.projection  # noqa: B018  (read the whole log now: an engine is lazy)
        return engine

    slow, opened, first_read = _second_read_lands_last(read_whole)
    monkeypatch.setattr(engine_open, "open_engine", slow)

    def check(app: KgaiApp) -> None:
        assert app.engine is not None and app.snapshot is not None
        assert "Written between two reloads" in app.engine.projection.dec_title
        assert "Written between two reloads" in app.snapshot.projection.dec_title

    _race_two_reloads(
        demo_store, opened, first_read, "Written between two reloads", check
    )


def test_two_model_reads_in_flight_keep_the_one_after_the_write(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same race through the read model: a reload that read the model before
    another process's write lands last and is dropped."""
    from kgai_tui.core.model import open as model_open
    from kgai_tui.core.model.open import ModelEngine

    open_model(demo_store).close()  # built, so every load reads it
    slow, opened, first_read = _second_read_lands_last(model_open.open_model)
    monkeypatch.setattr(model_open, "open_model", slow)

    def check(app: KgaiApp) -> None:
        assert isinstance(app.engine, ModelEngine)
        assert app.snapshot is not None
        assert "Written between two model reads" in list(
            app.snapshot.projection.dec_title
        )

    _race_two_reloads(
        demo_store, opened, first_read, "Written between two model reads", check
    )


def test_a_reload_at_now_shows_the_new_present_before_the_history(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Events arrive while the present is shown: the new present is on screen
    while the history (the time index, folding the appended lines and saved
    again: seconds at 1M) is still being brought up to date; the slider says
    so, keeps a step asked for meanwhile, then gets every moment, the new one
    included, and takes the step."""
    payload = json.dumps(
        {
            "decision": {
                "title": "Shown before the history",
                "mutations": [
                    {"op": "upsert_element", "kind": "feature", "name": "Early"}
                ],
            }
        }
    )
    of_store = TimeCursor.of_store.__func__  # type: ignore[attr-defined]
    asked, gate = threading.Event(), threading.Event()

    def held(cls: type[TimeCursor], store: Any) -> TimeCursor:
        asked.set()
        gate.wait(10)
        return of_store(cls, store)  # type: ignore[no-any-return]

    app = make_app(demo_store, live=False)

    async def steps(pilot: Pilot[None]) -> None:
        slider = app.query_one(TimeSlider)
        assert slider.moments and slider.at_now
        last = max(slider.moments)
        monkeypatch.setattr(TimeCursor, "of_store", classmethod(held))
        try:
            _record_in_another_process(demo_store, payload)
            app.action_reload()
            await asyncio.to_thread(asked.wait, 10)
            shown = False
            for _ in range(100):
                await pilot.pause(0.05)
                snap = app.snapshot
                if snap is not None and "Shown before the history" in list(
                    snap.projection.dec_title
                ):
                    shown = True
                    break
            assert shown, "the new present waited for the history"
            assert not gate.is_set()
            assert slider.loading and not slider.moments
            assert "reading the history" in str(slider.render())
            await pilot.press("left_square_bracket")  # kept until it comes
        finally:
            gate.set()
        await settle(pilot)
        assert not slider.loading
        assert max(slider.moments) > last  # the recorded moment is there
        assert slider.moment == max(slider.moments)  # and the step back taken
        assert app.snapshot is not None and app.snapshot.moment == slider.moment

    _drive(app, steps)


def test_a_history_that_fails_after_the_present_leaves_the_slider_usable(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The history fails to come after a reload showed the present: the slider
    stops saying it is on its way, and the next step asks for it again."""
    of_store = TimeCursor.of_store

    def broken(store: Any) -> TimeCursor:
        raise OSError("the cache directory went away")

    app = make_app(demo_store, live=False)

    async def steps(pilot: Pilot[None]) -> None:
        slider = app.query_one(TimeSlider)
        assert slider.moments and slider.at_now
        monkeypatch.setattr(TimeCursor, "of_store", broken)
        app.action_reload()
        await settle(pilot)
        assert not slider.loading and not slider.moments and slider.on_demand
        assert app.snapshot is not None and app.snapshot.moment is None
        monkeypatch.setattr(TimeCursor, "of_store", of_store)
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert slider.moments and not slider.at_now  # one step back, as asked
        assert app.snapshot is not None and app.snapshot.moment is not None

    _drive(app, steps)


def test_live_pickup_of_an_event_recorded_by_another_process(demo_store: Path) -> None:
    """A decision recorded by `kgai-tui record` in another process shows within 2 s."""
    app = make_app(demo_store, live=True)
    payload = '{"decision": {"title": "Live pickup works", "mutations": [{"op": "upsert_element", "kind": "feature", "name": "LiveThing"}]}}'
    found: list[float] = []

    async def steps(pilot: Pilot[None]) -> None:
        _record_in_another_process(demo_store, payload)
        start = time.monotonic()
        while time.monotonic() - start < 2.0:
            await asyncio.sleep(0.1)
            await pilot.pause()
            snap = app.snapshot
            if snap is not None and "Live pickup works" in snap.projection.dec_title:
                found.append(time.monotonic() - start)
                break

    _drive(app, steps)
    assert found, "the new decision did not appear within 2 seconds"


HOSTILE = [
    "[bold red]x[/]",
    "[link=file:///etc/passwd]y[/link]",
    "[@click=app.quit]click me[/]",
    "[/]",
    "esc \x1b[31mred\x1b[0m bell\x07",
]


def test_store_text_is_never_markup(tmp_path: Path) -> None:
    """Markup and control characters in a store show literally and cannot act."""
    w = ShardWriter("i1")
    for n, name in enumerate(HOSTILE, start=1):
        d = decision(
            name,
            [
                upsert("feature", name, note=name),
                link("add_link", ("feature", name), ("feature", HOSTILE[0]), "[/]"),
            ],
            rationale=name,
        )
        w.add(d, lamport=n, recorded_at=f"2026-01-0{n}T00:00:00Z")
    root = write_store(tmp_path / "s", {"i1.ndjson": w.to_bytes()})
    app = make_app(root, live=False)
    texts: list[str] = []

    async def steps(pilot: Pilot[None]) -> None:
        for key in "12345":
            await pilot.press(key)
            await settle(pilot)
            texts.append(_screen_text(app))
        await pilot.press("1")
        await pilot.pause()
        await pilot.click("#element-details")
        await pilot.pause()
        assert app.is_running

    _drive(app, steps)
    joined = "\n".join(texts)
    assert "[bold red]x[/]" in joined
    assert "[link=file:///etc/passwd]y[/link]" in joined
    assert "\x1b" not in joined and "\x07" not in joined
    assert "␛[31mred␛[0m" in joined


def test_search_finds_and_opens_a_hit(demo_store: Path) -> None:
    """Typing a query lists hits (debounced); Enter on an element hit opens it."""
    app = make_app(demo_store, live=False)
    seen: list[str] = []

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("slash", *"invoice")
        await asyncio.sleep(0.4)
        await settle(pilot)
        results = app.query_one("#search-results", OptionList)
        assert results.option_count > 0
        seen.append(str(results.get_option_at_index(0).prompt))
        await pilot.press("enter")
        await pilot.pause()
        assert app.focused is results
        view = app.query_one("#search")
        hits = view._hits  # type: ignore[attr-defined]
        first_element = next(n for n, hit in enumerate(hits) if hit.kind == "element")
        results.highlighted = first_element
        await pilot.press("enter")
        await settle(pilot)
        seen.append(app.query_one(ContentSwitcher).current or "")
        seen.append(app.selected_element or "")
        seen.append(hits[first_element].id)

    _drive(app, steps)
    assert "Invoice" in seen[0]
    assert seen[1] == "elements"
    assert seen[2] == seen[3]


def test_graph_walks_to_a_neighbour_and_back(demo_store: Path) -> None:
    """In the Graph view, down + enter re-centres on a neighbour; backspace returns."""
    app = make_app(demo_store, live=False)
    centres: list[str | None] = []

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("2")
        await settle(pilot)
        graph = app.query_one("#graph")
        centres.append(graph.center)  # type: ignore[attr-defined]
        await pilot.press("down", "enter")
        await settle(pilot)
        centres.append(graph.center)  # type: ignore[attr-defined]
        await pilot.press("backspace")
        await settle(pilot)
        centres.append(graph.center)  # type: ignore[attr-defined]

    _drive(app, steps)
    assert centres[0] is not None and centres[1] is not None
    assert centres[1] != centres[0]
    assert centres[2] == centres[0]


def test_timeline_enter_opens_the_decision_record(demo_store: Path) -> None:
    """Enter on a timeline row opens the decision's full record with its event hash."""
    app = make_app(demo_store, live=False)
    shown: list[str] = []

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("3")
        await settle(pilot)
        await pilot.press("down", "enter")
        await settle(pilot)
        shown.append(type(app.screen).__name__)
        shown.append(str(app.screen.query_one("#decision-event", Static).render()))
        await pilot.press("escape")
        await pilot.pause()
        shown.append(type(app.screen).__name__)

    _drive(app, steps)
    assert shown[0] == "DecisionModal"
    assert "sha256:" in shown[1]
    assert shown[2] != "DecisionModal"


def test_palette_jumps_to_an_element(demo_store: Path) -> None:
    """ctrl+p, a name, enter: the element is selected in the Elements view."""
    app = make_app(demo_store, live=False)
    chosen: list[str | None] = []

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"element: service:Billing")
        await asyncio.sleep(0.5)
        await pilot.pause()
        await pilot.press("enter")
        await settle(pilot)
        chosen.append(app.selected_element)

    _drive(app, steps)
    from kgai_tui.core.wire.ids import element_id

    assert chosen == [element_id("service", "Billing")]


def test_enter_in_the_search_box_goes_to_the_first_hit(demo_store: Path) -> None:
    """Enter leaves the box for the hits at once: a `1` typed with it switches view."""
    app = make_app(demo_store, live=False)
    seen: list[object] = []

    def typed_together(*keys: str) -> None:
        # Every key is queued before any is handled: a fast typist, a paste, tmux.
        for key in keys:
            app.post_message(events.Key(key, "\r" if key == "enter" else key))

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("5")
        await pilot.pause()
        box = app.query_one("#search-input", Input)
        assert app.focused is box
        typed_together(*"invoice", "enter", "1")
        await settle(pilot)
        seen.append(app.query_one(ContentSwitcher).current)
        seen.append(box.value)
        await pilot.press("5")
        await pilot.pause()
        typed_together(*"typst", "enter")
        await asyncio.sleep(0.4)  # past the debounce of the keys handled late
        await settle(pilot)
        results = app.query_one("#search-results", OptionList)
        focused: object = app.focused
        seen.append(box.value)
        seen.append(focused is results)
        seen.append(results.highlighted)
        seen.append(results.option_count > 0)
        seen.append("Typst" in str(results.get_option_at_index(0).prompt))
        await pilot.press("1")
        await pilot.pause()
        seen.append(app.query_one(ContentSwitcher).current)

    _drive(app, steps)
    assert seen == ["elements", "invoice", "typst", True, 0, True, True, "elements"]


def test_enter_on_a_hit_still_opens_it(demo_store: Path) -> None:
    """Enter on the hits (not in the box) opens the highlighted hit."""
    app = make_app(demo_store, live=False)
    seen: list[str] = []

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("slash", *"invoice", "enter")
        await settle(pilot)
        await pilot.press("enter")
        await settle(pilot)
        seen.append(app.query_one(ContentSwitcher).current or "")
        seen.append(app.selected_element or "")

    _drive(app, steps)
    from kgai_tui.core.wire.ids import element_id

    assert seen == ["elements", element_id("feature", "Invoice")]


def test_header_writers_follow_the_slider(demo_store: Path) -> None:
    """The writer count is of writers that had recorded a decision by the moment."""
    app = make_app(demo_store, live=False)
    seen: list[tuple[datetime | None, str]] = []

    async def steps(pilot: Pilot[None]) -> None:
        for key in ("less_than_sign", "right_square_bracket", "right_square_bracket"):
            await pilot.press(key)
            await settle(pilot)
            seen.append(
                (
                    app.query_one(TimeSlider).moment,
                    str(app.query_one("#header", Static).render()),
                )
            )
        for _ in range(8):
            await pilot.press("right_square_bracket")
        await settle(pilot)
        seen.append(
            (
                app.query_one(TimeSlider).moment,
                str(app.query_one("#header", Static).render()),
            )
        )
        await pilot.press("greater_than_sign")
        await settle(pilot)
        seen.append((None, str(app.query_one("#header", Static).render())))

    _drive(app, steps)
    engine = open_engine(demo_store)
    counts = []
    for moment, header in seen:
        p = (
            engine.projection
            if moment is None
            else project_as_of(engine.shards, moment)
        )
        writers = {w for w, h in zip(p.dec_install, p.dec_hash, strict=True) if h}
        assert f"{len(writers)} writers" in header
        counts.append(len(writers))
    assert counts[0] == 1 and counts[-1] == 4 and counts[0] < counts[-2]


def test_conflict_cards_never_break_a_decision_id(demo_store: Path) -> None:
    """Cards sit side by side when an id fits on one line of each, else they stack."""
    stacked: dict[tuple[int, int], bool] = {}

    async def main() -> None:
        for size in ((60, 20), (80, 24), (120, 40)):
            app = make_app(demo_store, live=False)
            async with app.run_test(size=size) as pilot:
                await settle(pilot)
                await pilot.press("4")
                await settle(pilot)
                heads = app.query_one("#conflict-heads")
                stacked[size] = heads.has_class("-stacked")
                assert app.snapshot is not None
                v = app.snapshot.view
                ids = {
                    v.decision(i).id
                    for e in v.conflicts()
                    for i in v.heads(e)
                    if e == app.query_one("#conflicts").selected  # type: ignore[attr-defined]
                }
                lines = _screen_lines(app)
                shown = [did for did in ids if any(did in line for line in lines)]
                assert shown, size  # (at 60x20 the second card is below the fold)
                for did in ids:  # wherever an id starts, all of it is on that line
                    for line in lines:
                        assert did[:10] not in line or did in line, (size, line)

    asyncio.run(main())
    assert stacked == {(60, 20): True, (80, 24): True, (120, 40): False}


def _screen_lines(app: KgaiApp) -> list[str]:
    """The text of every line on the screen, as drawn."""
    from rich.console import Console

    console = Console(width=app.size.width, record=True, file=io.StringIO())
    console.print(app.screen._compositor.render_update(full=True))
    return console.export_text().splitlines()


def test_a_long_branch_shows_its_first_leaves_and_counts_the_rest(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A kind with more elements than a branch shows lists its first ones and one
    line counting the rest; typing narrows to the matches, all of them listed."""
    from kgai_tui.ui.views import elements

    monkeypatch.setattr(elements, "BRANCH_LEAVES", 2)
    app = make_app(demo_store, live=False)
    engine = open_engine(demo_store)
    kinds: dict[str, list[str]] = {}
    for node, attrs in engine.projection.graph.nodes(data=True):
        kinds.setdefault(attrs["kind"] or "(stub)", []).append(attrs["name"] or node)
    kind, names = max(kinds.items(), key=lambda kv: len(kv[1]))
    assert len(names) > 2
    seen: dict[str, list[str]] = {}

    def branch(tree: Tree[str]) -> list[str]:
        for node in tree.root.children:
            if node.label.plain.startswith(f"{kind} ("):
                return [child.label.plain for child in node.children]
        return []

    async def steps(pilot: Pilot[None]) -> None:
        tree = app.query_one("#element-tree", Tree)
        seen["all"] = branch(tree)
        target = sorted(names, key=str.lower)[-1]
        app.query_one("#element-filter", Input).value = target.lower()
        await settle(pilot)
        seen["narrow"] = [c.label.plain for n in tree.root.children for c in n.children]
        seen["target"] = [target]

    _drive(app, steps)
    assert len(seen["all"]) == 3
    assert seen["all"][-1] == f"… {len(names) - 2:,} more: type to filter"
    assert seen["target"][0] in seen["narrow"]
    assert not any(line.startswith("…") for line in seen["narrow"])


def test_graph_follows_the_element_chosen_in_elements(demo_store: Path) -> None:
    """An element chosen in Elements is the Graph's centre when the Graph is shown
    next; a walk in the Graph chooses its centre in Elements too, so it stays."""
    app = make_app(demo_store, live=False)
    seen: list[Any] = []

    async def steps(pilot: Pilot[None]) -> None:
        await settle(pilot)
        graph = app.query_one("#graph")
        seen.append(graph.center)  # type: ignore[attr-defined]
        await pilot.press("f", *"Refunds", "enter")
        await settle(pilot)
        seen.append(app.query_one("#elements").selected)  # type: ignore[attr-defined]
        await pilot.press("2")
        await settle(pilot)
        seen.append(graph.center)  # type: ignore[attr-defined]
        await pilot.press("down", "enter")  # walk to a neighbour
        await settle(pilot)
        walked = graph.center  # type: ignore[attr-defined]
        await pilot.press("1")
        await settle(pilot)
        await pilot.press("2")
        await settle(pilot)
        seen.append((walked, graph.center))  # type: ignore[attr-defined]
        # A step of the slider keeps the Graph on the element chosen in Elements.
        await pilot.press("1", "f", *"Refunds", "enter", "2", "[")
        await settle(pilot)
        seen.append((graph.center, app.selected_element))  # type: ignore[attr-defined]

    _drive(app, steps)
    first, chosen, centred, (walked, again), (stepped, app_choice) = seen
    assert chosen is not None and chosen != first
    assert centred == chosen
    assert walked != chosen and again == walked
    assert stepped == app_choice == chosen


def test_tab_in_the_timeline_goes_through_its_filters_and_back(
    demo_store: Path,
) -> None:
    """The key bar says ``tab filters``: Tab goes from the list to each filter in
    turn and back to the list, shift+Tab the other way (the default focus chain
    took the first Tab to the slider, and nothing visible happened); a filter
    chosen with Enter narrows the list."""
    app = make_app(demo_store, live=False)
    seen: list[str | None] = []

    async def steps(pilot: Pilot[None]) -> None:
        await pilot.press("3")
        await settle(pilot)
        seen.append(app.screen.focused.id if app.screen.focused else None)
        for key in ("tab",) * 5 + ("shift+tab",) * 2:
            await pilot.press(key)
            seen.append(app.screen.focused.id if app.screen.focused else None)
        before = len(app.query_one("#timeline-list", DecisionList).rows)
        await pilot.press("tab", "enter", "down", "enter")  # status: in force
        await settle(pilot)
        seen.append(
            str(len(app.query_one("#timeline-list", DecisionList).rows) < before)
        )

    _drive(app, steps)
    assert seen == [
        "timeline-list",
        "filter-writer",
        "filter-author",
        "filter-kind",
        "filter-status",
        "timeline-list",
        "filter-status",
        "filter-kind",
        "True",
    ]
