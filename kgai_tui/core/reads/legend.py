"""One legend for every face: what a decision's status is, its mark and its word.

Every list of decisions (the explorer's views, the CLI's text, the report) asks
this module, so a decision never reads ``●`` in one place and "superseded" in
another. Two questions, each with one answer:

* :func:`decision_status`: the decision on its own (timeline, search, people).
  The statuses partition the recorded decisions, so the counts add up:
  ``decisions = in force (contested included) + superseded + dead ends``.

  - **contested** ``⚠``: in force on an element that has another decision in force;
  - **in force** ``●``: a head of some element (spec 4.2);
  - **superseded** ``○``: a head of no element, and another decision supersedes it;
  - **dead end** ``✗``: a head of no element, and nothing supersedes it (a
    provenance-only note, or a decision that never held authority).

* :func:`status_on`: the decision on one element (an element's history and
  story). The same four, where "in force" and "superseded" are on that element,
  plus **no authority here** ``·``: it touched the element (a link's far end, a
  note) without deciding it, and is in force or superseded elsewhere.

Neither needs more than the heads and the supersedes columns, which every
projection (live, as of a moment, the model on disk) holds.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from kgai_tui.core.replay.projection_view import ProjectionView

__all__ = [
    "LEGEND",
    "MARKS",
    "Status",
    "decision_status",
    "legend_line",
    "status_on",
]


class Status(StrEnum):
    """A decision's status; the value is the word every face prints."""

    CONTESTED = "contested"
    IN_FORCE = "in force"
    SUPERSEDED = "superseded"
    DEAD_END = "dead end"
    NO_AUTHORITY = "no authority here"


MARKS: Final[dict[Status, str]] = {
    Status.CONTESTED: "⚠",
    Status.IN_FORCE: "●",
    Status.SUPERSEDED: "○",
    Status.DEAD_END: "✗",
    Status.NO_AUTHORITY: "·",
}
"""The one-character mark of each status (every face, the same)."""

LEGEND: Final[tuple[tuple[Status, str], ...]] = (
    (Status.IN_FORCE, "a decision in force (a head of the element)"),
    (Status.CONTESTED, "in force beside another decision: a conflict to resolve"),
    (Status.SUPERSEDED, "replaced by a later decision"),
    (Status.DEAD_END, "never in force and never replaced (a provenance-only note)"),
    (Status.NO_AUTHORITY, "touched this element without deciding it"),
)
"""Each status and what it means, in the order the help and the docs list them."""


def legend_line() -> str:
    """``● in force   ⚠ contested   …``: the legend on one line."""
    return "   ".join(f"{MARKS[status]} {status.value}" for status, _ in LEGEND)


def decision_status(p: ProjectionView, idx: int) -> Status:
    """The status of decision ``idx`` on its own (see the module docstring).

    A head is always a head of an element its decision shapes, so only those
    elements are asked: a few lookups per row, for lists of thousands of rows.
    """
    heads = p.heads
    held = [eid for eid in p.dec_shapes[idx] if idx in heads.get(eid, ())]
    if held:
        contested = p.contested
        if any(eid in contested for eid in held):
            return Status.CONTESTED
        return Status.IN_FORCE
    if p.dec_superseded_by[idx]:
        return Status.SUPERSEDED
    return Status.DEAD_END


def status_on(p: ProjectionView, eid: str, idx: int) -> Status:
    """The status of decision ``idx`` on element ``eid`` (see the module docstring)."""
    if idx in p.heads.get(eid, ()):
        return Status.CONTESTED if eid in p.contested else Status.IN_FORCE
    if p.el_shapes.get(eid, {}).get(idx):
        return Status.SUPERSEDED  # authority here, unseated by a superseder here
    overall = decision_status(p, idx)
    return Status.DEAD_END if overall is Status.DEAD_END else Status.NO_AUTHORITY
