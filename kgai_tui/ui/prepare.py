"""What a snapshot's first paint needs, computed in the worker that made the snapshot."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from kgai_tui.core.reads.view import KgView
from kgai_tui.ui.theme import Palette
from kgai_tui.ui.views.elements import ElementRows, element_rows

if TYPE_CHECKING:
    from kgai_tui.core.reads.moments import GraphDelta
    from kgai_tui.core.replay.projection_view import ProjectionView


@dataclass(frozen=True, slots=True)
class Prepared:
    """The header's counts and the Elements view's tree, drawn in ``palette``."""

    decisions: int
    writers: int
    elements: ElementRows
    palette: Palette


def prepare(
    projection: ProjectionView, delta: GraphDelta | None, palette: Palette
) -> Prepared:
    """Do a snapshot's O(decisions) work for the header and the Elements view.

    Also builds the projection's lazy per-element index here, which the details
    pane would otherwise build on the UI thread on first use. The read model's
    present has its counts stored and its tree in its element rows: no pass over
    its decisions then (that is what makes it quick at a million of them).
    """
    view = KgView(projection)
    if projection.stored is None:
        view.prepare()
    return Prepared(
        decisions=projection.recorded_count(),
        writers=projection.writer_count(),
        elements=element_rows(
            view, delta.elements_added if delta else (), palette=palette
        ),
        palette=palette,
    )
