"""What changed between two slider positions: mark one with ``m``, show with ``D``.

:class:`DiffMark` remembers the marked position (a moment, or "now"); :class:`DiffModal`
computes ``diff`` between the two positions in a thread worker (two as-of replays) and
shows what ``kgai-tui diff FROM TO`` prints, as literal text (store strings never
become markup), each section's first :data:`DIFF_ROWS` rows.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from kgai_tui.text.diff import render_diff
from kgai_tui.ui.commands import bindings
from kgai_tui.ui.safe_text import plain
from kgai_tui.ui.threads import thread_worker
from kgai_tui.ui.widgets.key_bar import KeyBar
from kgai_tui.ui.widgets.time_slider import TimeSlider

if TYPE_CHECKING:
    from kgai_tui.core.reads.store import Store


#: Rows a section of the diff shows, then a line counting the rest. The whole
#: range of a million-decision store is hundreds of MB of text: laid out in one
#: ``Static``, it froze the explorer for minutes and took 6.6 GB (measured).
DIFF_ROWS = 200


def _name(moment: datetime | None) -> str:
    return "now" if moment is None else moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _ordered(
    a: datetime | None, b: datetime | None
) -> tuple[datetime | None, datetime | None]:
    """Earlier first; ``None`` (now) is the latest position."""
    if a is None or (b is not None and b < a):
        return b, a
    return a, b


class DiffMark:
    """The slider position marked for a diff (one per app)."""

    def __init__(self) -> None:
        """Start with nothing marked."""
        self.marked = False
        self.moment: datetime | None = None

    def mark(self, app: App[Any]) -> None:
        """Remember where the slider is now."""
        self.moment = app.query_one(TimeSlider).moment
        self.marked = True
        app.notify(
            f"Marked {_name(self.moment)}. Move the slider and press D to see what "
            "changed.",
            markup=False,
        )

    def show(self, app: App[Any], engine: Store | None) -> None:
        """Open the diff between the mark and the slider's position."""
        if engine is None:
            app.notify(
                "The store is still loading; press D again in a moment.",
                markup=False,
            )
            return
        if not self.marked:
            app.notify(
                "Press m on one slider position first, then D on another.",
                severity="warning",
                markup=False,
            )
            return
        start, end = _ordered(self.moment, app.query_one(TimeSlider).moment)
        if start is None and end is None:
            app.notify("Both positions are now: nothing to compare.", markup=False)
            return
        app.push_screen(DiffModal(engine, start, end))


class DiffModal(ModalScreen[None]):
    """The diff between two positions, computed off the UI thread."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("diff")

    def __init__(
        self, engine: Store, start: datetime | None, end: datetime | None
    ) -> None:
        """Compare the store at ``start`` with the store at ``end`` (``None``: now)."""
        super().__init__()
        self.engine = engine
        self.start = start
        self.end = end

    def compose(self) -> ComposeResult:
        """A heading and the scrolling diff."""
        with Vertical(id="modal-box"):
            yield Static(
                Text(f"Diff: {_name(self.start)} → {_name(self.end)}", "bold"),
                id="diff-title",
            )
            with VerticalScroll():
                yield Static(Text("computing…", "dim"), id="diff-body")
        yield KeyBar("diff")

    def on_mount(self) -> None:
        """Compare the two moments, off the UI thread."""
        self._compute()

    @thread_worker("diff")
    def _compute(self) -> None:
        """The diff, or the one line saying why there is none."""
        from kgai_tui.core.answers.answer import failure_message
        from kgai_tui.core.errors import KgaiError

        try:
            text = self._diff_text()
        except (KgaiError, OSError) as exc:
            text = f"The diff could not be computed: {failure_message(exc)}"
        self.app.call_from_thread(self._show, text)

    def _diff_text(self) -> str:
        # The store's time index (the whole store's when the model has none yet):
        # off the UI thread.
        from kgai_tui.core.reads.diff import diff_obj
        from kgai_tui.core.reads.store import time_index_of

        obj = diff_obj(time_index_of(self.engine), self.start, self.end)
        text = render_diff(obj, limit=DIFF_ROWS)
        return text.partition("\n")[2]  # its first line says what the title does

    def _show(self, text: str) -> None:
        self.query_one("#diff-body", Static).update(plain(text, keep_newlines=True))
