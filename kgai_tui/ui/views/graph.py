"""GraphView: the selected element's neighbourhood, drawn as boxes and labelled edges."""

from __future__ import annotations

from typing import ClassVar

from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

from kgai_tui.core.reads.view import KgView
from kgai_tui.ui.render import GraphLine, absent_element, neighbourhood
from kgai_tui.ui.snapshot import ElementRequested, Snapshot


class GraphView(ScrollView, can_focus=True):
    """Arrow keys pick a neighbour, Enter walks to it, Backspace walks back."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "pick(-1)", "Previous neighbour", show=False),
        Binding("down", "pick(1)", "Next neighbour", show=False),
        Binding("enter,right", "walk", "Go to neighbour", show=True),
        Binding("backspace,left", "back", "Back", show=True),
        Binding("plus,equals_sign", "depth(1)", "Depth +", show=True),
        Binding("minus", "depth(-1)", "Depth −", show=True),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        """Start with nothing to draw."""
        super().__init__(id=id)
        self.snapshot: Snapshot | None = None
        self.center: str | None = None
        self.depth = 1
        self.selected = 0
        self.trail: list[str] = []
        self._lines: list[GraphLine] = []
        self._order: list[str] = []
        self._stale = False  # a snapshot arrived while hidden

    def show(self, snapshot: Snapshot, center: str | None) -> None:
        """Draw around ``center`` in a new snapshot."""
        self.snapshot = snapshot
        if center is not None and center != self.center:
            self.center = center
            self.selected = 0
        # Hidden, it is drawn when shown: a slider step pays for the view in front.
        self._stale = not self.display
        if self.display:
            self._layout()

    def on_show(self) -> None:
        """Draw the snapshot that arrived while hidden."""
        self.catch_up()

    def catch_up(self) -> None:
        """Draw the snapshot that arrived while hidden, now (the switcher calls
        it as it shows the view, before a key typed next reads the drawing)."""
        if self._stale:
            self._stale = False
            self._layout()

    def _layout(self) -> None:
        if self.snapshot is None or self.center is None:
            self._lines, self._order = (
                [GraphLine(Text("select an element first (1)", "dim"), None)],
                [],
            )
        elif not self.snapshot.view.has_element(self.center):
            now = KgView(self.snapshot.engine.projection)
            absent = absent_element(now, self.center)
            self._lines, self._order = ([GraphLine(absent, None)], [])
        else:
            width = max(self.size.width, 40)
            self._lines, self._order = neighbourhood(
                self.snapshot.view,
                self.center,
                depth=self.depth,
                selected=self.selected,
                width=width,
                palette=self.snapshot.palette,
            )
            header = Text(
                f"depth {self.depth} · {len(self._order)} neighbour(s) · ↑↓ pick · enter go · ⌫ back · +/- depth",
                "dim",
            )
            self._lines.insert(0, GraphLine(header, None))
        self.virtual_size = Size(self.size.width, len(self._lines))
        self.refresh()

    def render_line(self, y: int) -> Strip:
        """Render one line of the drawing."""
        row = self.scroll_offset.y + y
        width = self.size.width
        if row >= len(self._lines):
            return Strip.blank(width)
        text = self._lines[row].text.copy()
        text.truncate(width, pad=True)
        return Strip(
            [Segment(s.text, s.style) for s in text.render(self.app.console)], width
        ).crop(0, width)

    def action_pick(self, delta: int) -> None:
        """Highlight the previous or next neighbour."""
        if self._order:
            self.selected = (self.selected + delta) % len(self._order)
            self._layout()
            self._scroll_to_selected()

    def _scroll_to_selected(self) -> None:
        if not self._order:
            return
        target = self._order[self.selected]
        for row, line in enumerate(self._lines):
            if line.target == target:
                top, height = self.scroll_offset.y, self.size.height or 1
                if row < top or row >= top + height:
                    self.scroll_to(y=max(row - height // 2, 0), animate=False)
                return

    def action_walk(self) -> None:
        """Move the centre to the highlighted neighbour."""
        if self._order and self.center is not None:
            self.trail.append(self.center)
            self.post_message(
                ElementRequested(self._order[self.selected], view="graph")
            )

    def action_back(self) -> None:
        """Return to the previous centre."""
        if self.trail:
            self.post_message(ElementRequested(self.trail.pop(), view="graph"))

    def action_depth(self, delta: int) -> None:
        """Show one ring more or less (1 to 3)."""
        self.depth = max(1, min(3, self.depth + delta))
        self._layout()

    def on_click(self, event: events.Click) -> None:
        """Clicking a neighbour walks to it."""
        row = self.scroll_offset.y + event.y
        if 0 <= row < len(self._lines):
            target = self._lines[row].target
            if target is not None and self.center is not None:
                self.trail.append(self.center)
                self.post_message(ElementRequested(target, view="graph"))

    def on_resize(self) -> None:
        """Re-layout for the new width."""
        self._layout()
