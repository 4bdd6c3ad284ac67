"""The one legend, an element's story, typed moments and query problems."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from builders import ShardWriter, decision, link, set_prop, upsert

from kgai_tui.core.errors import UsageError
from kgai_tui.core.reads.legend import MARKS, Status, decision_status, status_on
from kgai_tui.core.reads.moment_text import ago, months_back, parse_moment
from kgai_tui.core.reads.story import element_story
from kgai_tui.core.reads.view import KgView
from kgai_tui.core.replay.projection import Projection
from kgai_tui.core.search.query import parse_query, query_problems
from kgai_tui.core.wire.ids import element_id

A = element_id("feature", "A")
B = element_id("feature", "B")


def _store() -> tuple[Projection, dict[str, int]]:
    """Four decisions whose statuses are all different.

    ``first`` decides A; ``second`` decides A and B and supersedes ``first``;
    ``third`` supersedes ``second`` on B only; ``note`` touches A without
    authority (a link's far end) and nothing supersedes it; ``rival`` decides B
    beside ``third`` (a conflict on B).
    """
    w = ShardWriter("i-a")
    first = decision("first", [upsert("feature", "A", size="1")])
    second = decision(
        "second",
        [set_prop("feature", "A", "size", "2"), upsert("feature", "B")],
        supersedes=[first.id],
    )
    third = decision(
        "third", [set_prop("feature", "B", "x", "3")], supersedes=[second.id]
    )
    note = decision(
        "note",
        [
            upsert("feature", "C"),
            link("add_link", ("feature", "C"), ("feature", "A"), "USES"),
        ],
        shapes=[element_id("feature", "C"), A],
        targets=[],
        provenance_only=True,
    )
    rival = decision("rival", [set_prop("feature", "B", "x", "4")])
    for n, d in enumerate((first, second, third, note, rival), start=1):
        w.add(d, lamport=n, recorded_at=f"2026-03-0{n}T00:00:00Z")
    p = Projection()
    p.apply_all(w.events)
    ids = {d.title: p.dec_index[d.id] for d in (first, second, third, note, rival)}
    return p, ids


def test_each_decision_has_one_status_and_they_partition_the_store() -> None:
    """Status on its own: a head anywhere wins, then replaced, else a dead end."""
    p, ids = _store()
    assert decision_status(p, ids["first"]) is Status.SUPERSEDED
    assert decision_status(p, ids["second"]) is Status.IN_FORCE  # a head of A
    assert decision_status(p, ids["third"]) is Status.CONTESTED  # B is contested
    assert decision_status(p, ids["rival"]) is Status.CONTESTED
    assert decision_status(p, ids["note"]) is Status.DEAD_END
    assert set(MARKS) == set(Status)


def test_status_on_an_element_is_about_that_element() -> None:
    """On B, ``second`` is superseded; on A it is in force; ``note`` has no
    authority on A but is a dead end overall, so it reads as one there."""
    p, ids = _store()
    assert status_on(p, B, ids["second"]) is Status.SUPERSEDED
    assert status_on(p, A, ids["second"]) is Status.IN_FORCE
    assert status_on(p, B, ids["third"]) is Status.CONTESTED
    assert status_on(p, A, ids["note"]) is Status.DEAD_END
    assert status_on(p, A, ids["first"]) is Status.SUPERSEDED


def test_no_authority_here_is_a_touch_by_a_decision_in_force_elsewhere() -> None:
    """A decision in force on C that only touches A (a link's far end)."""
    w = ShardWriter("i-a")
    d = decision(
        "c links a",
        [
            upsert("feature", "C"),
            link("add_link", ("feature", "C"), ("feature", "A"), "USES"),
        ],
        targets=[element_id("feature", "C")],
    )
    w.add(d, lamport=1, recorded_at="2026-03-01T00:00:00Z")
    p = Projection()
    p.apply_all(w.events)
    idx = p.dec_index[d.id]
    assert decision_status(p, idx) is Status.IN_FORCE
    assert status_on(p, A, idx) is Status.NO_AUTHORITY


def test_the_story_separates_replacements_here_from_elsewhere() -> None:
    """``second`` was replaced on B by ``third``; on A nothing replaced it."""
    p, ids = _store()
    v = KgView(p)
    on_a = {e.decision.title: e for e in element_story(v, A)}
    on_b = {e.decision.title: e for e in element_story(v, B)}
    assert [e.decision.title for e in element_story(v, A)] == [
        "first",
        "second",
        "note",
    ]
    assert on_a["first"].replaced_by == (ids["second"],)
    assert on_a["second"].replaces == (ids["first"],)
    assert on_a["second"].replaced_by == ()
    assert on_a["second"].replaced_elsewhere == (ids["third"],)
    assert on_b["second"].replaced_by == (ids["third"],)
    assert on_b["second"].status is Status.SUPERSEDED


NOW = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("now", NOW),
        ("-3m", datetime(2026, 3, 15, 12, 0, tzinfo=UTC)),
        ("-1y", datetime(2025, 6, 15, 12, 0, tzinfo=UTC)),
        ("-90d", datetime(2026, 3, 17, 12, 0, tzinfo=UTC)),
        ("-2w", datetime(2026, 6, 1, 12, 0, tzinfo=UTC)),
        ("-12h", datetime(2026, 6, 15, 0, 0, tzinfo=UTC)),
        ("2026-03-31", datetime(2026, 3, 31, 23, 59, 59, tzinfo=UTC)),
        ("2026-03-31 14:00", datetime(2026, 3, 31, 14, 0, tzinfo=UTC)),
        ("2026-03-31T14:00:00+02:00", datetime(2026, 3, 31, 12, 0, tzinfo=UTC)),
    ],
)
def test_moments_as_people_type_them(text: str, expected: datetime) -> None:
    """Relative moments count back from now; dates mean the end of the day."""
    assert parse_moment(text, NOW) == expected


@pytest.mark.parametrize("text", ["yesterday", "-3q", "2026-02-30 10:00", ""])
def test_a_moment_that_cannot_be_read_says_what_can(text: str) -> None:
    """One line naming every accepted form."""
    with pytest.raises(UsageError, match="-3m"):
        parse_moment(text, NOW)


def test_months_back_clamps_the_day_and_ago_says_the_largest_unit() -> None:
    """May 31 minus three months is Feb 28; the gap reads in whole units."""
    assert months_back(datetime(2026, 5, 31, tzinfo=UTC), 3).day == 28
    assert ago(datetime(2026, 3, 15, tzinfo=UTC), NOW) == "3 months ago"
    assert ago(NOW, NOW) == "just now"
    assert ago(datetime(2026, 6, 17, 12, 0, tzinfo=UTC), NOW) == "in 2 days"


def test_query_problems_name_what_cannot_match() -> None:
    """An unclosed quote, an unknown kind, an unknown element; nothing otherwise."""
    problems = query_problems(
        parse_query('kind:foo element:Nope "never closed'),
        kinds=["feature", "service"],
        has_element=lambda name: name == "Known",
    )
    assert [p.split(":")[0] for p in problems] == [
        "unclosed quote",
        "no element kind 'foo' in this store",
        "no element 'Nope'",
    ]
    fine = parse_query('kind:Feature element:Known "closed" invoice')
    assert query_problems(fine, kinds=["feature"], has_element=lambda _: True) == []
