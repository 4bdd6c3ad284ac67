"""``diff FROM TO`` on the demo store, checked against two independent as-of replays."""

from __future__ import annotations

import itertools
import json
import shutil
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from kgai_tui.core.engine.engine import Engine
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.errors import UsageError
from kgai_tui.core.gosem.gojson import plain
from kgai_tui.core.gosem.gotext import parse_rfc3339
from kgai_tui.core.reads.as_of import events_as_of, project_as_of
from kgai_tui.core.reads.diff import diff_obj
from kgai_tui.core.reads.kg import parse_as_of
from kgai_tui.core.reads.moments import moments
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.wire.model import Event
from kgai_tui.core.wire.props import parse_props
from kgai_tui.demo import DEMO_STORE
from kgai_tui.text.diff import render_diff

CLI = [sys.executable, "-m", "kgai_tui"]
MONTH_ENDS = [
    "2025-09-30",
    "2025-12-31",
    "2026-01-31",
    "2026-02-28",
    "2026-03-31",
    "2026-04-30",
    "2026-06-30",
]


@pytest.fixture
def demo_store(tmp_path: Path) -> Path:
    """A private copy of the bundled demo store."""
    target = tmp_path / "demo-store"
    shutil.copytree(DEMO_STORE, target)
    return target


def _elements(p: Projection) -> dict[str, tuple[str, str]]:
    return {e: (a["kind"], a["name"]) for e, a in p.graph.nodes(data=True)}


def _links(p: Projection) -> set[tuple[str, str, str]]:
    return {(f, k, t) for f, t, k in p.graph.edges(keys=True)}


def _props(p: Projection) -> dict[tuple[str, str], str]:
    return {
        (e, k): v
        for e, a in p.graph.nodes(data=True)
        for k, v in parse_props(a["props"]).items()
    }


def _window(events: list[Event], start: datetime, end: datetime) -> dict[str, Event]:
    """The events recorded in (start, end], by decision id (last one wins)."""
    out = {}
    for ev in events:
        moment = parse_rfc3339(ev.recorded_at)
        if ev.decision is not None and moment is not None and start < moment <= end:
            out[ev.decision.id] = ev
    return out


def _did(ev: Event, row: dict[str, Any]) -> bool:
    """Whether ``ev``'s mutations produce the prop or link of ``row``."""
    assert ev.decision is not None
    for m in ev.decision.mutations or ():
        if "key" in row and m.element_id == row["element_id"]:
            if m.op == "set_prop" and m.key == row["key"] and m.value == row["new"]:
                return True
            if m.op == "upsert_element" and dict(m.props).get(row["key"]) == row["new"]:
                return True
        if "from_id" in row and (m.from_id, m.link_kind, m.to_id) == (
            row["from_id"],
            row["kind"],
            row["to_id"],
        ):
            return True
    return False


def _check_pair(engine: Engine, start: datetime, end: datetime) -> dict[str, Any]:
    obj = plain(diff_obj(engine.time_index, start, end))
    before = project_as_of(engine.shards, start)
    after = project_as_of(engine.shards, end)
    window = _window(events_as_of(engine.shards, end), start, end)

    old_el, new_el = _elements(before), _elements(after)
    assert {r["element_id"] for r in obj["elements_added"]} == set(new_el) - set(old_el)
    assert {r["element_id"] for r in obj["elements_removed"]} == set(old_el) - set(
        new_el
    )
    relabelled = {e for e in set(old_el) & set(new_el) if old_el[e] != new_el[e]}
    assert {r["element_id"] for r in obj["elements_changed"]} == relabelled

    old_links, new_links = _links(before), _links(after)
    added = {(r["from_id"], r["kind"], r["to_id"]) for r in obj["links_added"]}
    retired = {(r["from_id"], r["kind"], r["to_id"]) for r in obj["links_retired"]}
    assert added == new_links - old_links
    assert retired == old_links - new_links

    old_props, new_props = _props(before), _props(after)
    changed = {
        key
        for key in set(old_props) | set(new_props)
        if old_props.get(key) != new_props.get(key)
    }
    assert {(r["element_id"], r["key"]) for r in obj["props_changed"]} == changed
    for row in obj["props_changed"]:
        key = (row["element_id"], row["key"])
        assert (row["old"], row["new"]) == (old_props.get(key), new_props.get(key))

    assert {r["id"] for r in obj["decisions_recorded"]} == set(window)
    assert {r["element_id"] for r in obj["conflicts_opened"]} == (
        after.contested - before.contested
    )
    assert {r["element_id"] for r in obj["conflicts_resolved"]} == (
        before.contested - after.contested
    )

    # The decision behind each change was recorded in (FROM, TO] and made it.
    for key in ("elements_added", "props_changed", "links_added", "links_retired"):
        for row in obj[key]:
            by = row["by"]
            assert by is not None, (key, row)
            assert by["id"] in window, (key, row)
            assert by["title"] == window[by["id"]].decision.title  # type: ignore[union-attr]
            if key in ("props_changed", "links_added", "links_retired"):
                assert _did(window[by["id"]], row), (key, row)
    for row in obj["decisions_superseded"]:
        assert row["by"] and all(b["id"] in window for b in row["by"])
    for row in obj["conflicts_resolved"]:
        assert row["by"] and all(b["id"] in window for b in row["by"])
    return obj


def test_diff_between_month_ends_equals_two_replays(demo_store: Path) -> None:
    engine = open_engine(demo_store)
    cuts = [parse_as_of(d) for d in MONTH_ENDS]
    total = 0
    for start, end in itertools.pairwise(cuts):
        obj = _check_pair(engine, start, end)
        total += sum(obj["counts"].values())
    assert total > 100
    whole = _check_pair(engine, cuts[0], cuts[-1])
    assert whole["counts"]["conflicts_opened"] == 2


def test_diff_between_every_pair_of_neighbouring_moments(demo_store: Path) -> None:
    engine = open_engine(demo_store)
    stops = moments(engine.shards)
    seen = set()
    for start, end in itertools.pairwise(stops):
        obj = _check_pair(engine, start, end)
        seen |= {k for k, n in obj["counts"].items() if n}
    assert {"links_retired", "conflicts_opened", "conflicts_resolved"} <= seen


def test_output_is_sorted_as_documented(demo_store: Path) -> None:
    obj = plain(diff_obj(open_engine(demo_store).time_index, None, None))
    assert [r["element_id"] for r in obj["elements_added"]] == sorted(
        r["element_id"] for r in obj["elements_added"]
    )
    keys = [(r["element_id"], r["key"]) for r in obj["props_changed"]]
    assert keys == sorted(keys)
    links = [(r["from_id"], r["kind"], r["to_id"]) for r in obj["links_added"]]
    assert links == sorted(links)
    when = [(r["when"]) for r in obj["decisions_recorded"]]
    assert when == sorted(when)
    assert obj["from"] == "beginning" and obj["to"] == "now"


def test_cli_json_and_text(demo_store: Path) -> None:
    args = [*CLI, "diff", "2026-02-28", "2026-03-31", "--store", str(demo_store)]
    done = subprocess.run(
        [*args, "--json"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    expected = plain(
        diff_obj(
            open_engine(demo_store).time_index,
            parse_as_of("2026-02-28"),
            parse_as_of("2026-03-31"),
        )
    )
    assert json.loads(done.stdout) == json.loads(json.dumps(expected))
    text = subprocess.run(args, capture_output=True, text=True, check=False)
    assert text.stdout.rstrip("\n") == render_diff(expected)
    assert "✓ infra:EventBus" in text.stdout  # the conflict resolved in March
    swapped = subprocess.run(
        [*CLI, "diff", "2026-03-31", "2026-01-31", "--store", str(demo_store)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert swapped.returncode == 2 and "is after" in swapped.stderr


def test_same_moment_is_an_empty_diff(demo_store: Path) -> None:
    cut = parse_as_of("2026-02-28")
    obj = plain(diff_obj(open_engine(demo_store).time_index, cut, cut))
    assert not any(obj["counts"].values())
    assert render_diff(obj).endswith("nothing changed")
    with pytest.raises(UsageError):
        plain(
            diff_obj(open_engine(demo_store).time_index, cut, parse_as_of("2026-01-01"))
        )


def test_a_limited_rendering_is_the_whole_cut_to_the_first_rows(
    demo_store: Path,
) -> None:
    """The explorer's: each section its first rows as the whole text has them,
    then a line counting the rest; a limit above every count changes nothing."""
    index = open_engine(demo_store).time_index
    whole = render_diff(diff_obj(index, None, None))
    assert render_diff(diff_obj(index, None, None), limit=10_000) == whole
    limit = 2
    cut = render_diff(diff_obj(index, None, None), limit=limit)
    counts = plain(diff_obj(index, None, None))["counts"]
    sections = {
        "Decisions recorded": "decisions_recorded",
        "Decisions superseded": "decisions_superseded",
        "Elements added": "elements_added",
        "Elements removed": "elements_removed",
        "Elements relabelled": "elements_changed",
        "Props changed": "props_changed",
        "Links added": "links_added",
        "Links retired": "links_retired",
        "Conflicts opened": "conflicts_opened",
        "Conflicts resolved": "conflicts_resolved",
    }
    cut_parts = _sections(cut)
    whole_parts = _sections(whole)
    assert cut_parts.keys() == whole_parts.keys()
    limited = 0
    for title, rows in cut_parts.items():
        count = counts[sections[title]]
        if count <= limit:
            assert rows == whole_parts[title]
            continue
        limited += 1
        assert rows[-1] == [
            f"  … and {count - limit:,} more: kgai-tui diff prints every one"
        ]
        assert rows[:-1] == whole_parts[title][:limit]
    assert limited >= 3  # the demo's sections are longer than two rows


def _sections(text: str) -> dict[str, list[list[str]]]:
    """Each section's rows (a row: its line and the indented lines under it)."""
    out: dict[str, list[list[str]]] = {}
    for block in text.split("\n\n")[1:]:
        title, *lines = block.split("\n")
        rows: list[list[str]] = []
        for line in lines:
            if line.startswith("      ") and rows:
                rows[-1].append(line)
            else:
                rows.append([line])
        out[title] = rows
    return out
