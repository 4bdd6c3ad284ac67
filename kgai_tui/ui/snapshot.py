"""Snapshot: the immutable state every view renders (the store at the slider)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from textual.message import Message

from kgai_tui.core.reads.view import KgView
from kgai_tui.ui.theme import Palette

if TYPE_CHECKING:
    from kgai_tui.core.reads.moments import GraphDelta
    from kgai_tui.core.reads.store import Store
    from kgai_tui.core.replay.projection_view import ProjectionView
    from kgai_tui.core.wire.model import Mutation


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The store as opened (``engine``), the projection at the slider's moment, its look.

    ``revision`` numbers the data shown: a new theme makes a new snapshot with the
    same revision and a new ``palette``.
    """

    engine: Store
    projection: ProjectionView
    moment: datetime | None
    delta: GraphDelta | None
    revision: int
    palette: Palette

    @property
    def view(self) -> KgView:
        """The projection's read API: elements, decisions, heads, conflicts."""
        return KgView(self.projection)

    def mutations_of(self, index: int) -> tuple[Mutation, ...]:
        """The mutations a decision's event carried (empty for a stub)."""
        p = self.projection
        event = self.engine.event_for(p.dec_hash[index], p.dec_install[index])
        if event is None or event.decision is None:
            return ()
        return event.decision.mutations or ()


class ElementRequested(Message):
    """A view asks the app to show an element (in Elements or Graph)."""

    def __init__(self, element_id: str, *, view: str = "elements") -> None:
        """Carry the element and the view to show it in."""
        super().__init__()
        self.element_id = element_id
        self.view = view


class DecisionRequested(Message):
    """A view asks the app to open the full record of a decision."""

    def __init__(self, decision_index: int) -> None:
        """Carry the decision index in the current projection."""
        super().__init__()
        self.decision_index = decision_index


class StoryRequested(Message):
    """A view asks the app to show an element's whole story."""

    def __init__(self, element_id: str) -> None:
        """Carry the element."""
        super().__init__()
        self.element_id = element_id


class ReloadRequested(Message):
    """A view changed the store (a resolution): the app re-reads it, keeping the
    moment; ``focus`` is an ``(element, decision id)`` to show once it is read."""

    def __init__(self, focus: tuple[str, str] | None = None) -> None:
        """Carry what to show after the reload."""
        super().__init__()
        self.focus = focus
