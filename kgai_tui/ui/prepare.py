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
    """Do a snapshot's work for the header and the Elements view, off the UI thread.

    The counts are the projection's own: the model's present keeps them in its
    people tables, a moment bisects them in its time index, a replay in memory
    walks its columns. A projection in memory also builds its lazy per-element
    index here, which the details pane would otherwise build on the UI thread.
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
