"""MomentScreen: type where the time slider should go (a date, ``-3m``, ``now``).

Returns the moment typed, or ``None``; a line under the box says what the text
means as it is typed (``2026-09-05 00:00 UTC · 3 months ago``) or why it cannot
be read, so Enter never jumps somewhere unexpected.
"""

from __future__ import annotations

from datetime import datetime
from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

from kgai_tui.core.errors import UsageError
from kgai_tui.core.reads.moment_text import ago, parse_moment
from kgai_tui.ui.commands import bindings
from kgai_tui.ui.render import DIM
from kgai_tui.ui.widgets.key_bar import KeyBar


def stamp(moment: datetime) -> str:
    """``2026-09-05 14:00 UTC``."""
    return moment.strftime("%Y-%m-%d %H:%M UTC")


class MomentScreen(ModalScreen[datetime | None]):
    """A one-line box for a moment, with what it means under it."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("moment")

    def __init__(
        self, now: datetime, first: datetime | None, last: datetime | None = None
    ) -> None:
        """``now`` anchors relative moments; ``first`` and ``last`` are the first
        and the last recorded moments (``None``: not known yet)."""
        super().__init__()
        self.now = now
        self.first = first
        self.last = last

    def compose(self) -> ComposeResult:
        """The box and the line that explains it."""
        with Vertical(id="moment-box"):
            yield Static(Text("Go to a moment", "bold"))
            yield Input(
                placeholder="2026-03-31 · 2026-03-31 14:00 · -3m · -90d · now",
                id="moment-input",
            )
            yield Static(self._meaning(""), id="moment-meaning")
        yield KeyBar("moment")

    def on_mount(self) -> None:
        """Focus the box."""
        self.query_one("#moment-input", Input).focus()

    def _meaning(self, text: str) -> Text:
        if not text.strip():
            first = f" · the first decision: {stamp(self.first)}" if self.first else ""
            return Text(f"now is {stamp(self.now)}{first}", DIM)
        try:
            moment = parse_moment(text, self.now)
        except UsageError as exc:
            return Text(str(exc), "bold red")
        line = Text(f"{stamp(moment)} · {ago(moment, self.now)}", "bold")
        if self.first is not None and moment < self.first:
            line.append(" · before the first decision: the store was empty", DIM)
        elif moment >= self.now:
            line.append(" · that is now", DIM)
        elif self.last is not None and moment >= self.last:
            line.append(
                f" · nothing recorded since {stamp(self.last)}: the store as it is now",
                DIM,
            )
        return line

    @on(Input.Changed, "#moment-input")
    def _typed(self, event: Input.Changed) -> None:
        self.query_one("#moment-meaning", Static).update(self._meaning(event.value))

    @on(Input.Submitted, "#moment-input")
    def _go(self, event: Input.Submitted) -> None:
        try:
            moment = parse_moment(event.value, self.now)
        except UsageError:
            return  # the line under the box already says why
        self.dismiss(moment)
