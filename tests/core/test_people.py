"""people and stale count what the log says (issue 21).

Generated stores (hypothesis); every count is compared with a brute-force pass over
the replayed events themselves (who recorded each decision, when, from where, what
it shapes, whether anything supersedes it), at several as-of moments, through the
live projection, the as-of view and the model on disk alike.
"""

from __future__ import annotations

import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from test_replay_properties import Chooser, Generated, stores, temp_store

from kgai_tui.core.answers.people import people_answer
from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.gosem.gotext import format_rfc3339, recorded_epoch
from kgai_tui.core.model.disk import DiskProjection
from kgai_tui.core.model.open import open_model
from kgai_tui.core.reads.as_of import as_of_view, events_as_of
from kgai_tui.core.reads.people import parse_age, people_obj, stale_obj
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.wire.model import Event

SETTINGS = settings(max_examples=30, deadline=None)


def brute_force(events: list[Event], p: Projection) -> list[dict[str, Any]]:
    """The people rows from the events in canonical order, plus the heads of ``p``."""
    first: dict[str, Event] = {}
    seen: set[str] = set()  # a decision known first as a supersedes target stays
    shapes: dict[str, set[str]] = {}  # a placeholder (spec 3: fields set on create)
    superseded: set[str] = set()
    for ev in events:
        d = ev.decision
        if d is None:
            continue
        if d.id not in seen:
            first[d.id] = ev
            seen.add(d.id)
        shapes.setdefault(d.id, set()).update(e for e in d.shapes if e)
        superseded.update(s for s in d.supersedes if s)
        seen.update(s for s in d.supersedes if s)
    in_force: dict[str, set[str]] = {}
    for eid, held in p.heads.items():
        for i in held:
            in_force.setdefault(p.dec_id[i], set()).add(eid)
    rows: dict[str, dict[str, Any]] = {}
    for dec_id, ev in first.items():
        d = ev.decision
        assert d is not None
        row = rows.setdefault(
            d.author,
            {
                "author": d.author,
                "decisions": 0,
                "in_force": 0,
                "superseded": 0,
                "dead_ends": 0,
                "elements": set(),
                "conflicts": set(),
                "times": [],
                "writers": set(),
            },
        )
        row["decisions"] += 1
        # The one legend: in force wins; else replaced or never (reads.legend).
        row["in_force"] += dec_id in in_force
        row["superseded"] += dec_id not in in_force and dec_id in superseded
        row["dead_ends"] += dec_id not in in_force and dec_id not in superseded
        row["elements"] |= shapes[dec_id]
        row["conflicts"] |= {e for e in in_force.get(dec_id, ()) if e in p.contested}
        stamp = recorded_epoch(ev.recorded_at)
        if stamp is not None and stamp != -62135596800:
            row["times"].append(stamp)
        row["writers"].add(ev.install_id)
    out = []
    for row in rows.values():
        times = row.pop("times")
        row["elements"] = len(row["elements"])
        row["conflicts"] = len(row["conflicts"])
        row["first"] = _rfc(min(times)) if times else None
        row["last"] = _rfc(max(times)) if times else None
        row["writers"] = sorted(row["writers"])
        out.append(row)
    out.sort(key=lambda r: (-r["decisions"], r["author"]))
    return out


def _rfc(stamp: int) -> str:
    return format_rfc3339(datetime.fromtimestamp(stamp, tz=UTC))


def replay(events: list[Event]) -> Projection:
    p = Projection()
    p.apply_all(events)
    return p


def _cuts(gen: Generated, c: Chooser) -> list[datetime]:
    moments = sorted({m for m in gen.moments.values() if m is not None})
    picks = [c.choice(moments) for _ in range(3)] if moments else []
    return [*picks, datetime(2020, 1, 1, tzinfo=UTC), datetime(2100, 1, 1, tzinfo=UTC)]


@SETTINGS
@given(gen=stores(), data=st.data())
def test_people_counts_equal_a_brute_force_pass_over_the_log(
    gen: Generated, data: st.DataObject
) -> None:
    c = Chooser(draw=data.draw)
    with temp_store(gen.files()) as root:
        engine = open_engine(root)
        events = engine.events
        now = people_obj(engine.projection)
        assert now["people"] == brute_force(events, engine.projection)
        with tempfile.TemporaryDirectory() as cache:
            model = open_model(root, Path(cache))
            assert people_obj(model.projection) == now
            # What `people` (no --as-of) answers through the model: its totals.
            assert isinstance(model.projection, DiskProjection)
            assert people_answer(lambda: model).obj == now
            model.close()
        for cut in _cuts(gen, c):
            kept = events_as_of(engine.shards, cut)
            fresh = replay(kept)
            at = people_obj(as_of_view(engine, cut), cut)
            assert at == people_obj(fresh, cut), cut
            assert at["people"] == brute_force(kept, fresh), cut


@SETTINGS
@given(gen=stores(), days=st.integers(0, 400))
def test_stale_lists_exactly_the_elements_whose_newest_head_is_older(
    gen: Generated, days: int
) -> None:
    now = datetime(2026, 9, 1, tzinfo=UTC)
    with temp_store(gen.files()) as root:
        p = open_engine(root).projection
        got = stale_obj(p, parse_age(f"{days}d"), now)
        limit = int((now - timedelta(days=days)).timestamp())
        expected = []
        for eid, held in p.heads.items():
            if not held:
                continue
            times = [p.dec_time[i] for i in held if p.dec_time[i] is not None]
            newest = max(times) if times else None
            if newest is None or newest <= limit:
                expected.append(eid)
        assert sorted(r["element_id"] for r in got["stale"]) == sorted(expected)
        ages = [r["age_days"] for r in got["stale"] if r["age_days"] is not None]
        assert ages == sorted(ages, reverse=True)  # oldest first
        assert all(age >= days for age in ages)
