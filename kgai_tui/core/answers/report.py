"""The ``report`` document's data, now or at a moment, from the read model when it can.

Now: the model's projection (a few queries over the decisions, rows for the
elements). At a moment from the latest recorded time on, when no event was ever
left out of the replay (the moments' ``now``, :func:`~kgai_tui.core.model.moments.
cut_source`), the store as of it is the store now, so the same report answers with
the moment as its date. Any earlier moment reads the model's time index, and the
model keeps the moments for the next read (as ``as-of`` does).
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from kgai_tui.core.reads.store import KeptReads, StoreSource

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection_view import ProjectionView
    from kgai_tui.core.report.report import Report

__all__ = ["report_at"]


def report_at(engine: StoreSource, cut: datetime | None, last: int) -> Report:
    """The report of the store as of ``cut`` (``None``: now) telling ``last``
    decisions' story; ``engine`` may open the read model."""
    from kgai_tui.core.report.report import build_report

    if cut is None:
        return build_report(engine().projection, None, last)
    from kgai_tui.core.answers.moments import at_cut
    from kgai_tui.core.gosem.gotext import format_rfc3339
    from kgai_tui.core.reads.people import people_of_totals

    people: list[list[dict[str, Any]]] = []

    def from_model(model: KeptReads) -> dict[str, Any] | None:
        if not model.answers_now_at(int(cut.timestamp())):
            # The rest is read at the cut, the people rows from the model's
            # per-author steps as `people --as-of` reads them (counting them at
            # the cut walked every decision: 6 of the report's 10 s at 1M); not
            # before the moments are whole: writing them drops the steps.
            parts = None
            if model.moments_whole():
                parts = model.people_at_parts(int(cut.timestamp()))
            if parts is not None:
                people.append(people_of_totals(*parts)["people"])
            return None
        now = build_report(model.projection, None, last)
        return {"report": replace(now, at=format_rfc3339(cut), latest=False)}

    def from_view(view: ProjectionView) -> dict[str, Any]:
        rows = people[0] if people else None
        return {"report": build_report(view, cut, last, rows)}

    answer = at_cut(engine, from_model, from_view, cut)
    report: Report = answer.obj["report"]
    return report
