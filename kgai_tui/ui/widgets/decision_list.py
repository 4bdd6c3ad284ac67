"""DecisionList: a virtualised list of decisions (one line each, any number of rows).

Rows are rendered on demand through the line API, so a million decisions cost one
list of integers, not a million widgets.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import ClassVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip


class DecisionList(ScrollView, can_focus=True):
    """Rows of decision indices drawn by a row renderer."""

    DEFAULT_CSS = """
    DecisionList { height: 1fr; overflow-x: hidden; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "move(-1)", "Up", show=False),
        Binding("down", "move(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home,ctrl+home", "jump(0)", "First", show=False),
        Binding("end,ctrl+end", "jump(-1)", "Last", show=False),
        Binding("enter", "open", "Open", show=False),
    ]

    cursor: reactive[int] = reactive(0, init=False)
    """The highlighted row."""

    class Opened(Message):
        """A row was opened (enter or double click)."""

        def __init__(self, index: int) -> None:
            """Carry the decision index of the row."""
            super().__init__()
            self.index = index

    def __init__(self, *, id: str | None = None) -> None:
        """Start empty."""
        super().__init__(id=id)
        self.rows: Sequence[int] = []
        self.render_row: Callable[[int, int], Text] = lambda idx, width: Text(str(idx))

    def set_rows(
        self, rows: Sequence[int], render_row: Callable[[int, int], Text]
    ) -> None:
        """Show new rows; keep the cursor in range."""
        self.rows = rows
        self.render_row = render_row
        # As wide as the view, never wider: a horizontal scrollbar would sit
        # on the last row (rows are cut to the width, never scrolled sideways).
        self.virtual_size = Size(0, len(rows))
        self.set_reactive(DecisionList.cursor, min(self.cursor, max(len(rows) - 1, 0)))
        self.refresh()

    def render_line(self, y: int) -> Strip:
        """Render one visible line."""
        row = self.scroll_offset.y + y
        width = self.scrollable_content_region.width
        if row >= len(self.rows):
            return Strip.blank(width)
        text = self.render_row(self.rows[row], width)
        text.truncate(width, pad=True)
        if row == self.cursor:
            text.stylize(
                Style(reverse=True) if self.has_focus else Style(underline=True)
            )
        segments = [
            Segment(seg.text, seg.style) for seg in text.render(self.app.console)
        ]
        return Strip(segments, width).crop(0, width)

    def watch_cursor(self, old: int, new: int) -> None:
        """Keep the cursor visible and redraw."""
        self.scroll_to_region_if_needed(new)
        self.refresh()

    @property
    def page(self) -> int:
        """Rows on screen (what PageUp and PageDown move by)."""
        return max(self.scrollable_content_region.height, 1)

    def scroll_to_region_if_needed(self, row: int) -> None:
        """Scroll so that ``row`` is on screen."""
        top = self.scroll_offset.y
        height = self.page
        if row < top:
            self.scroll_to(y=row, animate=False)
        elif row >= top + height:
            self.scroll_to(y=row - height + 1, animate=False)

    def action_move(self, delta: int) -> None:
        """Move the cursor."""
        if self.rows:
            self.cursor = max(0, min(self.cursor + delta, len(self.rows) - 1))

    def action_page(self, direction: int) -> None:
        """Move the cursor by a screenful."""
        self.action_move(direction * self.page)

    def action_jump(self, where: int) -> None:
        """Jump to the first or last row."""
        if self.rows:
            self.cursor = 0 if where == 0 else len(self.rows) - 1

    def action_open(self) -> None:
        """Open the highlighted row."""
        if self.rows:
            self.post_message(self.Opened(self.rows[self.cursor]))

    def on_click(self, event: events.Click) -> None:
        """Click selects; a double click opens."""
        row = self.scroll_offset.y + event.y
        if 0 <= row < len(self.rows):
            self.cursor = row
            if event.chain >= 2:
                self.action_open()

    def on_focus(self) -> None:
        """Redraw the cursor style."""
        self.refresh()

    def on_blur(self) -> None:
        """Redraw the cursor style."""
        self.refresh()

    def on_resize(self) -> None:
        """Keep the cursor on screen at the new height."""
        self.virtual_size = Size(0, len(self.rows))
        self.call_after_refresh(self.scroll_to_region_if_needed, self.cursor)
