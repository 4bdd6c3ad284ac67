"""The People view (key 7): the table, the supersession flow line, Enter lists elements."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from pathlib import Path

import pytest
from settle import settle
from textual.widgets import ContentSwitcher, DataTable, Static

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.reads.people import people_now, people_obj
from kgai_tui.ui.app import make_app
from kgai_tui.ui.people import (
    elements_shaped,
    monthly_counts,
    spark,
    supersession_flows,
)
from kgai_tui.ui.views import people as people_view


def test_people_view_flow_and_elements(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """7 shows the people; down moves to the second; enter lists what they shaped."""
    monkeypatch.setattr(people_view, "now", lambda: datetime(2026, 12, 1, tzinfo=UTC))
    projection = open_engine(demo_store).projection
    rows = people_obj(projection)["people"]
    assert len(rows) >= 2
    second = rows[1]["author"]
    flow = supersession_flows(projection, rows)[second]
    shaped = elements_shaped(projection, second)
    assert shaped
    app = make_app(demo_store, live=False)
    seen: dict[str, str] = {}

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await pilot.press("7")
            await settle(pilot)
            assert app.query_one(ContentSwitcher).current == "people"
            table = app.query_one("#people-table", DataTable)
            assert table.row_count == len(rows)
            assert table.has_focus
            await pilot.press("down")
            await pilot.pause()
            seen["flow"] = str(app.query_one("#people-flow", Static).render())
            await pilot.press("enter")
            await pilot.pause()
            seen["elements"] = str(app.query_one("#people-elements", Static).render())
            seen["stale"] = str(app.query_one("#people-stale", Static).render())
            for _ in range(3):  # the slider a few months back: the table follows
                await pilot.press("left_curly_bracket")
                await settle(pilot)
            seen["caption"] = str(app.query_one("#people-caption", Static).render())
            assert app.snapshot is not None and app.snapshot.moment is not None
            earlier = people_obj(app.snapshot.projection)["people"]
            seen["earlier"] = str(sum(r["decisions"] for r in earlier))
            assert table.row_count == len(earlier)

    asyncio.run(main())
    assert seen["flow"].startswith(second)
    assert f"{flow.replaced} of {flow.decisions}" in seen["flow"] or (
        not flow.replaced and f"none of {flow.decisions}" in seen["flow"]
    )
    for who, count in flow.by:
        assert f"{who} ×{count}" in seen["flow"]
    assert seen["elements"].splitlines()[1:] == shaped
    assert seen["stale"].startswith("stale (no decision in force for 180+ days)")
    assert " people (authors) · " in seen["caption"]
    assert " · as of 20" in seen["caption"]
    assert int(seen["earlier"]) < sum(r["decisions"] for r in rows)


def test_flow_counts_superseding_authors(demo_store: Path) -> None:
    """The flow agrees with the decision columns, replaced ≤ decisions."""
    p = open_engine(demo_store).projection
    rows = people_obj(p)["people"]
    flows = supersession_flows(p, rows)
    for row in rows:
        flow = flows[row["author"]]
        assert flow.decisions == row["decisions"]
        assert flow.replaced == row["superseded"]
        assert sum(n for _, n in flow.by) >= flow.replaced


def test_monthly_counts_and_spark(demo_store: Path) -> None:
    """Every dated decision lands in one month; the bars scale to the peak."""
    p = open_engine(demo_store).projection
    months, counts = monthly_counts(p)
    dated = sum(1 for h, t in zip(p.dec_hash, p.dec_time, strict=True) if h and t)
    assert sum(sum(c) for c in counts.values()) == dated
    assert all(len(c) == len(months) for c in counts.values())
    assert spark([0, 1, 2, 4]) == " ▂▄█"
    assert spark([]) == ""


def test_people_are_counted_only_while_their_view_is_shown(
    demo_store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Counting at the slider's moment reads every decision (seconds at a million);
    hidden, the view must not do it on every slider move, only when shown."""
    counted: list[datetime] = []
    real = people_view.people_data

    def counting(snapshot: object, at: datetime) -> object:
        counted.append(at)
        return real(snapshot, at)  # type: ignore[arg-type]

    monkeypatch.setattr(people_view, "people_data", counting)
    app = make_app(demo_store, live=False)

    async def main() -> None:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            for key in (
                "left_square_bracket",
                "left_curly_bracket",
                "greater_than_sign",
            ):
                await pilot.press(key)
                await settle(pilot)
            assert counted == [], "the hidden People view counted"
            await pilot.press("7")
            await settle(pilot)
            assert len(counted) == 1
            caption = str(app.query_one("#people-caption", Static).render())
            assert "· as of now" in caption
            await pilot.press("left_curly_bracket")
            await settle(pilot)
            assert len(counted) == 2
            caption = str(app.query_one("#people-caption", Static).render())
            assert "· as of 20" in caption
            await pilot.press("1")
            await settle(pilot)
            await pilot.press("greater_than_sign")
            await settle(pilot)
            assert len(counted) == 2
            await pilot.press("7")
            await settle(pilot)
            assert len(counted) == 3
            caption = str(app.query_one("#people-caption", Static).render())
            assert "· as of now" in caption

    asyncio.run(main())


def test_the_views_reads_from_the_model_equal_the_whole_stores(
    demo_store: Path, tmp_path: Path
) -> None:
    """The model answers the months (its rows grouped by day), the flow lines
    (grouped by author and superseder) and what a person shaped (its per-author
    counts) in a few queries; each is the walk's over the whole store, around
    1970 and a new year too."""
    from builders import ShardWriter, decision, upsert, write_store

    from kgai_tui.core.model.open import open_model

    w = ShardWriter("i1")
    times = ["1969-12-31T23:59:59Z", "1970-01-01T00:00:00Z", "2025-12-31T23:59:59Z",
             "2026-01-01T00:00:00Z", "2026-03-15T12:00:00Z"]  # fmt: skip
    prev: list[str] = []
    for n, when in enumerate(times, start=1):
        d = decision(
            f"d{n}",
            [upsert("feature", f"F{n % 2}")],
            author=f"a{n % 3}",
            supersedes=prev if n % 2 else (),
        )
        w.add(d, lamport=n, recorded_at=when)
        prev = [d.id]
    edges = write_store(tmp_path / "edges", {"i1.ndjson": w.to_bytes()})
    for root in (demo_store, edges):
        model = open_model(root)
        try:
            assert model.projection.stored is not None
            whole = open_engine(root).projection
            assert monthly_counts(model.projection) == monthly_counts(whole)
            flows = supersession_flows(
                model.projection, people_now(model.projection)["people"]
            )
            whole_flows = supersession_flows(whole, people_obj(whole)["people"])
            assert flows == whole_flows
            for author in flows:
                assert elements_shaped(model.projection, author) == elements_shaped(
                    whole, author
                )
                assert flows[author] == whole_flows[author]
        finally:
            model.close()
    months, counts = monthly_counts(open_engine(edges).projection)
    assert months[0] == "1969-12" and months[-1] == "2026-03"
    assert sum(map(sum, counts.values())) == len(times)
