"""TimeSlider: a one-line track over the store's recorded moments.

Position ``len(moments)`` (the right end) means "now": the full replay. Any other
position ``i`` means "as of moments[i]". Keys step by decision or by month; the mouse
can click or drag anywhere on the track.

A store read through its model has no moments until the history is asked for
(``on_demand``): the first step back, month back, Home or click asks the app for
it (:class:`TimeSlider.HistoryWanted`), which then reads the whole store once.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget


class TimeSlider(Widget, can_focus=True):
    """Pick a moment in the store's history."""

    DEFAULT_CSS = """
    TimeSlider { height: 1; width: 1fr; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "step(-1)", "Earlier", show=False),
        Binding("right", "step(1)", "Later", show=False),
    ]

    position: reactive[int] = reactive(0, init=False)
    """Index into the moments; ``len(moments)`` is now."""

    class Changed(Message):
        """The slider moved."""

        def __init__(self, slider: TimeSlider, position: int) -> None:
            """Carry the new position."""
            super().__init__()
            self.slider = slider
            self.position = position

        def can_replace(self, message: Message) -> bool:
            """A newer move replaces a pending one while the user drags."""
            return isinstance(message, TimeSlider.Changed)

    class HistoryWanted(Message):
        """The user moved an on-demand slider: read the history, then do ``then``.

        ``then`` is ``"step"``, ``"month"`` or ``"start"`` (one moment back, about
        a month back, the first moment), or a moment to go to."""

        def __init__(self, then: str | datetime) -> None:
            """Carry what to do once the moments are there."""
            super().__init__()
            self.then = then

    def __init__(self, *, id: str | None = None) -> None:
        """Start with no moments, at now."""
        super().__init__(id=id)
        self.moments: Sequence[datetime] = []
        self._dragging = False
        self._loading = False
        self._on_demand = False

    @property
    def loading(self) -> bool:
        """Whether the store's history (the moments) is still being read."""
        return self._loading

    @loading.setter
    def loading(self, value: bool) -> None:
        self._loading = value
        self.refresh()

    @property
    def on_demand(self) -> bool:
        """Whether the history is read only when the user first moves the slider."""
        return self._on_demand

    @on_demand.setter
    def on_demand(self, value: bool) -> None:
        self._on_demand = value
        self.refresh()

    def _wants_history(self, then: str | datetime) -> bool:
        """Ask for the history instead of moving, when there is none yet to move in
        (while it is being read, the app keeps the last such move for when it
        comes)."""
        if self.moments or not self._on_demand:
            return False
        self.post_message(self.HistoryWanted(then))
        return True

    def set_moments(self, moments: Sequence[datetime], *, keep: bool = True) -> None:
        """Replace the moments; stay at now unless ``keep`` and a past moment is set."""
        at_now = self.position >= len(self.moments)
        current = None if at_now else self.moments[self.position]
        self.moments = moments
        self._on_demand = False
        if keep and current is not None and current in moments:
            self.set_reactive(TimeSlider.position, moments.index(current))
        else:
            self.set_reactive(TimeSlider.position, len(moments))
        self.refresh()

    @property
    def at_now(self) -> bool:
        """Whether the slider shows the present."""
        return self.position >= len(self.moments)

    @property
    def moment(self) -> datetime | None:
        """The moment shown, or ``None`` for now."""
        return None if self.at_now else self.moments[self.position]

    def move_to(self, position: int) -> None:
        """Move to a position (clamped) and announce it."""
        position = max(0, min(position, len(self.moments)))
        if position != self.position:
            self.position = position

    def watch_position(self, position: int) -> None:
        """Announce every move."""
        self.post_message(self.Changed(self, position))

    def jump(self, *, to_start: bool) -> None:
        """Jump to the first recorded moment, or to now."""
        if to_start and self._wants_history("start"):
            return
        self.move_to(0 if to_start else len(self.moments))

    def go_to(self, moment: datetime) -> None:
        """Go to the store as of ``moment``: the last recorded moment at or before
        it (the same state), the first one when it is earlier, now when it is at
        or after the last."""
        if self._wants_history(moment):
            return
        if not self.moments or moment >= self.moments[-1]:
            self.move_to(len(self.moments))
            return
        self.move_to(max(bisect_right(self.moments, moment) - 1, 0))

    def action_step(self, delta: int) -> None:
        """Step to the previous or next recorded moment."""
        if delta < 0 and self._wants_history("step"):
            return
        self.move_to(self.position + delta)

    def step_month(self, direction: int) -> None:
        """Jump about a month back or forward."""
        if direction < 0 and self._wants_history("month"):
            return
        if not self.moments:
            return
        base = self.moment or self.moments[-1]
        target = base + timedelta(days=30 * direction)
        if direction < 0:
            self.move_to(max(bisect_right(self.moments, target) - 1, 0))
        else:
            self.move_to(bisect_left(self.moments, target))

    def render(self) -> Text:
        """Draw ``first ──●── last``, the knob at the position."""
        width = max(self.size.width, 10)
        if not self.moments:
            if self._loading:
                return Text("reading the history…", style="dim")
            if self._on_demand:
                return Text("now · [ { < or t read the history", style="dim")
            return Text("no history yet", style="dim")
        first = self.moments[0].strftime("%Y-%m-%d")
        last = "now"
        track = max(width - len(first) - len(last) - 2, 4)
        knob = round(self.position / max(len(self.moments), 1) * (track - 1))
        line = Text(first + " ", style="dim")
        line.append("━" * knob, style="bold")
        line.append("●", style="bold reverse" if self.has_focus else "bold")
        line.append("─" * (track - knob - 1), style="dim")
        line.append(" " + last, style="dim")
        return line

    def _position_at(self, x: int) -> int:
        first = len(self.moments[0].strftime("%Y-%m-%d")) + 1 if self.moments else 0
        track = max(self.size.width - first - len("now") - 2, 4)
        fraction = (x - first) / max(track - 1, 1)
        return round(max(0.0, min(fraction, 1.0)) * len(self.moments))

    def on_mouse_down(self, event: events.MouseDown) -> None:
        """Jump to the clicked spot and start dragging."""
        if not self.moments:
            self._wants_history("step")
            return
        self._dragging = True
        self.capture_mouse()
        self.move_to(self._position_at(event.x))

    def on_mouse_move(self, event: events.MouseMove) -> None:
        """Follow the pointer while dragging."""
        if self._dragging:
            self.move_to(self._position_at(event.x))

    def on_mouse_up(self, _: events.MouseUp) -> None:
        """Stop dragging."""
        self._dragging = False
        self.release_mouse()
