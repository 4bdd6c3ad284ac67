"""The header line (the store, its counts, its health) and the moment banner under it."""

from __future__ import annotations

from datetime import datetime
from time import monotonic
from typing import TYPE_CHECKING

from rich.text import Text
from textual.timer import Timer
from textual.widgets import Static

from kgai_tui.ui.safe_text import one_line, plain

if TYPE_CHECKING:
    from kgai_tui.core.reads.moments import GraphDelta
    from kgai_tui.ui.snapshot import Snapshot
    from kgai_tui.ui.theme import Palette

OPENING_TICK_SECONDS = 0.1


class StoreHeader(Static):
    """``kgai-tui <store> │ counts │ conflicts  health``; abbreviated when narrow."""

    def __init__(self, *, id: str | None = None) -> None:
        """Start with the opening line."""
        super().__init__(Text("kgai-tui · opening…", "bold"), id=id)
        self._clock: Timer | None = None

    def start_opening(self, label: str) -> None:
        """Until :meth:`opened`, say the store is opening and for how long."""
        started = monotonic()

        def tick() -> None:
            text = Text("kgai-tui · opening ", "bold")
            text.append_text(plain(one_line(label, 60), "dim"))
            text.append(f" … {monotonic() - started:.1f} s", "dim")
            self.update(text)

        self._clock = self.set_interval(OPENING_TICK_SECONDS, tick)

    def opened(self) -> None:
        """The open ended (done or failed): stop the opening clock."""
        if self._clock is not None:
            self._clock.stop()
            self._clock = None

    def show_failure(self, error: str, palette: Palette) -> None:
        """The store could not be opened: say why."""
        text = Text("kgai-tui · could not open the store: ", palette.error)
        text.append_text(plain(one_line(error, 100)))
        self.update(text)

    def show_snapshot(
        self,
        label: str,
        snapshot: Snapshot,
        *,
        decisions: int,
        writers: int,
        problems: int,
    ) -> None:
        """The store's counts at the slider and its health (``problems`` found).

        ``decisions`` and ``writers`` are those recorded by the slider's moment.
        """
        self.update(
            header_text(
                label,
                narrow=self.app.size.width < 100,
                elements=snapshot.view.element_count(),
                decisions=decisions,
                writers=writers,
                conflicts=len(snapshot.view.conflicts()),
                problems=problems,
                palette=snapshot.palette,
            )
        )


def header_text(
    label: str,
    *,
    narrow: bool,
    elements: int,
    decisions: int,
    writers: int,
    conflicts: int,
    problems: int,
    palette: Palette,
) -> Text:
    """The header line; ``narrow`` (under 100 columns) abbreviates it."""
    room = 18 if narrow else 34
    if len(label) > room:
        label = "…" + label[-(room - 1) :]
    header = Text("kgai-tui ", "bold")
    header.append_text(plain(one_line(label), "dim"))
    header.append(" │ ", "dim")
    if narrow:
        header.append(f"{elements} el · {decisions} dec · {writers} wr │ ")
    else:
        header.append(
            f"{elements} elements · {decisions} decisions · {writers} writers │ "
        )
    plural = "s" if conflicts != 1 else ""
    header.append(
        f"{conflicts} conflict{plural}"
        if narrow
        else f"{conflicts} open conflict{plural}",
        palette.error if conflicts else palette.ok,
    )
    header.append(" ")
    if problems:
        header.append(f" ✗ {problems} problem(s) · d ", palette.error_badge)
    else:
        header.append(" ✓ healthy ", palette.ok_badge)
    return header


class MomentBanner(Static):
    """``now`` with the slider keys, or the moment shown and what changed since."""

    def show_moment(self, moment: datetime | None, delta: GraphDelta | None) -> None:
        """Show the present (``moment`` ``None``) or a moment in the past."""
        if moment is None:
            self.update(Text("now · End returns here · [ ] step · { } month", "dim"))
            self.remove_class("-past")
            return
        text = Text(f"as of {moment.strftime('%Y-%m-%d %H:%M:%S')} UTC", "bold")
        if delta is not None:
            text.append(f" · since last position: {delta.describe()}")
        self.update(text)
        self.add_class("-past")
