"""The Query view (key 8, issue 43): Cypher in the explorer, rows in a table, Enter
on an id opens it, the slider's moment applies, saved queries in the palette."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from settle import settle
from textual.widgets import ContentSwitcher, DataTable, Input, Static

from kgai_tui.core.engine.open import open_engine
from kgai_tui.ui.app import make_app
from kgai_tui.ui.views.query import QueryView
from kgai_tui.ui.views.query_examples import QUERY_EXAMPLES


def _caption(app: Any) -> str:
    return str(app.query_one("#query-caption", Static).render())


def test_a_query_runs_its_rows_show_and_an_id_opens(demo_store: Path) -> None:
    p = open_engine(demo_store).projection
    app = make_app(demo_store, live=False)
    seen: dict[str, Any] = {}

    async def main() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            await pilot.press("8")
            await settle(pilot)
            assert app.query_one(ContentSwitcher).current == "query"
            box = app.query_one("#query-input", Input)
            assert box.has_focus
            seen["empty"] = _caption(app)
            box.value = "MATCH (e:Element {name:'Invoice'}) RETURN e.id, e.kind"
            await pilot.press("enter")
            await settle(pilot)
            table = app.query_one("#query-table", DataTable)
            seen["rows"] = table.row_count
            seen["caption"] = _caption(app)
            assert table.has_focus
            await pilot.press("enter")  # the cursor is on the first cell: the id
            await settle(pilot)
            seen["view"] = app.query_one(ContentSwitcher).current
            seen["selected"] = app.selected_element

    asyncio.run(main())
    assert "Type read-only Cypher" in seen["empty"]
    assert seen["rows"] == 1 and seen["caption"].startswith("1 row(s)")
    invoice = next(
        e for e in p.graph.nodes if (p.element(e) or ("", ""))[1] == "Invoice"
    )
    assert seen["view"] == "elements" and seen["selected"] == invoice


def test_errors_and_empty_answers_say_why(demo_store: Path) -> None:
    app = make_app(demo_store, live=False)
    seen: dict[str, str] = {}

    async def main() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            await pilot.press("8")
            view = app.query_one(QueryView)
            for key, text in (
                ("syntax", "MATCH (e:Element RETURN e"),
                ("write", "MATCH (e:Element) DELETE e"),
                ("none", "MATCH (e:Element {name:'Nope'}) RETURN e.id"),
            ):
                view.set_query(text)
                await settle(pilot)
                seen[key] = _caption(app)

    asyncio.run(main())
    assert "did not run" in seen["syntax"] and "offset: 17" in seen["syntax"]
    assert "read-only" in seen["write"]
    assert seen["none"].startswith("no rows")


def test_the_slider_s_moment_applies_and_saved_queries_run(demo_store: Path) -> None:
    app = make_app(demo_store, live=False)
    seen: dict[str, Any] = {}
    count = "MATCH (d:Decision) RETURN count(d) AS n"

    async def main() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            await pilot.press("8")
            view = app.query_one(QueryView)
            view.set_query(count)
            await settle(pilot)
            seen["now"] = view.result.rows if view.result else None
            # back in time: the moment of the latest decision, then the one before
            await pilot.press("left_square_bracket", "left_square_bracket")
            await settle(pilot)
            seen["where"] = app.query_one(ContentSwitcher).current
            seen["then"] = view.result.rows if view.result else None
            seen["caption"] = _caption(app)
            await app.run_action("query_example(0)")
            await settle(pilot)
            seen["example"] = app.query_one("#query-input", Input).value

    asyncio.run(main())
    assert seen["now"] and seen["then"]
    assert seen["where"] == "query"
    assert seen["then"][0]["n"] == seen["now"][0]["n"] - 1
    assert " as of " in seen["caption"]
    assert seen["example"] == QUERY_EXAMPLES[0][1]


def test_a_hidden_query_view_waits_to_be_shown_before_it_runs_again(
    demo_store: Path,
) -> None:
    """Slider steps taken in another view build no moment's graph for the query
    (a minute at a million decisions); coming back runs it for the new moment."""
    app = make_app(demo_store, live=False)
    seen: dict[str, Any] = {}
    count = "MATCH (d:Decision) RETURN count(d) AS n"

    async def main() -> None:
        async with app.run_test(size=(80, 24)) as pilot:
            await settle(pilot)
            await pilot.press("8")
            view = app.query_one(QueryView)
            view.set_query(count)
            await settle(pilot)
            seen["now"] = view.result.rows if view.result else None
            await pilot.press("escape", "1")
            await pilot.press("left_square_bracket", "left_square_bracket")
            await settle(pilot)
            seen["hidden"] = view.result.rows if view.result else None
            seen["built"] = view._moment is not None
            await pilot.press("8")
            await settle(pilot)
            seen["shown"] = view.result.rows if view.result else None

    asyncio.run(main())
    assert seen["hidden"] == seen["now"] and not seen["built"]
    assert seen["shown"] and seen["now"]
    assert seen["shown"][0]["n"] == seen["now"][0]["n"] - 1
