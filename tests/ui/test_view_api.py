"""KgView, the UI's read API, answers alike over the live projection, an as-of view
(the time index) and a fresh replay up to the same moment."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from kgai_tui.core.engine.open import open_engine
from kgai_tui.core.reads.as_of import project_as_of
from kgai_tui.core.reads.moments import TimeCursor
from kgai_tui.core.reads.view import KgView


def _answers(v: KgView) -> dict[str, Any]:
    """Everything the UI asks, with decisions named by id (indices differ by view)."""

    def did(idx: int) -> str:
        return v.decision(idx).id

    def record(idx: int) -> tuple[Any, ...]:
        d = v.decision(idx)
        return (
            d.id, d.title, d.rationale, d.author, d.refs, d.summary, d.time,
            d.lamport, d.install, d.hash, d.shapes, d.stub, v.status(idx),
            sorted(map(did, d.supersedes)), sorted(map(did, d.superseded_by)),
        )  # fmt: skip

    elements = {}
    for eid in sorted(v.element_ids()):
        assert v.has_element(eid)
        elements[eid] = (
            v.element(eid),
            v.label(eid),
            v.links_out(eid),
            v.links_in(eid),
            v.degree(eid),
            [did(i) for i in v.heads(eid)],
            [did(i) for i in v.history(eid)],
            {did(i): bool(a) for i, a in v.decisions_of(eid).items()},
            [record(i) for i in v.heads(eid)],
        )
    recorded = v.recorded()
    assert v.recorded_count() == len(recorded)
    assert all(v.decision_index(did(i)) == i for i in recorded)
    return {
        "elements": elements,
        "count": v.element_count(),
        "conflicts": sorted(v.conflicts()),
        "records": sorted(record(i) for i in recorded),
        "order": [did(i) for i in v.oldest_first(recorded)],
        "heads": sorted(map(did, v.all_heads())),
        "writers": v.writers(recorded),
        "authors": v.authors(recorded),
        "kinds": v.shaped_kinds(recorded),
        "titled": sorted(t for _, t in v.titled()),
    }


def test_the_view_api_agrees_on_every_moment(demo_store: Path) -> None:
    """At every slider moment, and now, the as-of view reads as a fresh replay."""
    engine = open_engine(demo_store)
    cursor = TimeCursor.of_store(engine)
    assert cursor.moments
    for moment in cursor.moments:
        fresh = KgView(project_as_of(engine.shards, moment))
        assert _answers(KgView(cursor.at(moment))) == _answers(fresh), moment
    end = datetime(9999, 1, 1, tzinfo=UTC)
    assert _answers(KgView(engine.projection)) == _answers(
        KgView(project_as_of(engine.shards, end))
    )
    assert KgView(engine.projection).element("el_missing") is None
    assert KgView(engine.projection).decision_index("d_missing") is None
