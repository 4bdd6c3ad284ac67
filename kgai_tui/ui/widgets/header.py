"""The header (the store, its counts, its health; the remote and its last sync) and
the moment banner under it."""

from __future__ import annotations

from datetime import UTC, datetime
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
    """``kgai-tui <store> │ counts │ conflicts  health``; abbreviated when narrow.

    A second line, only when the store has a remote: ``remote: <url> · synced …``
    (or ``· syncing …`` with the seconds while a sync runs).
    """

    def __init__(self, *, id: str | None = None) -> None:
        """Start with the opening line."""
        self._main = Text("kgai-tui · opening…", "bold")
        self._sync: Text | None = None
        super().__init__(self._main, id=id)
        self._clock: Timer | None = None
        self._sync_clock: Timer | None = None

    def _show(self, main: Text | None = None) -> None:
        if main is not None:
            self._main = main
        self.set_class(self._sync is not None, "-remote")
        if self._sync is None:
            self.update(self._main)
            return
        # Two lines, each cut at the edge (never wrapped onto the other).
        text = self._main.copy()
        text.append("\n")
        text.append_text(self._sync)
        text.no_wrap = True
        text.overflow = "crop"
        self.update(text)

    def show_remote(self, remote: str, synced: datetime | None, now: datetime) -> None:
        """The remote (already redacted) and its last sync; ``""`` hides the line."""
        if self._sync_clock is not None:
            return  # a sync is running: its line stays until it ends
        room = max(24, self.app.size.width - 44)
        self._sync = sync_text(remote, synced, now, room=room) if remote else None
        self._show()

    def start_syncing(self, remote: str) -> None:
        """Until :meth:`show_remote`, say a sync with ``remote`` runs, and how long."""
        started = monotonic()

        def tick() -> None:
            text = Text("syncing with ", "bold")
            text.append_text(plain(middle_cut(one_line(remote), 80)))
            text.append(f" … {monotonic() - started:.1f} s", "dim")
            self._sync = text
            self._show()

        self.sync_ended()
        tick()
        self._sync_clock = self.set_interval(OPENING_TICK_SECONDS, tick)

    def sync_ended(self) -> None:
        """The sync ended (done or failed): stop its clock."""
        if self._sync_clock is not None:
            self._sync_clock.stop()
            self._sync_clock = None

    def start_opening(self, label: str) -> None:
        """Until :meth:`opened`, say the store is opening and for how long."""
        started = monotonic()

        def tick() -> None:
            text = Text("kgai-tui · opening ", "bold")
            text.append_text(plain(one_line(label, 60), "dim"))
            text.append(f" … {monotonic() - started:.1f} s", "dim")
            self._show(text)

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
        self._show(text)

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
        self._show(
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


def middle_cut(text: str, room: int) -> str:
    """``text`` in at most ``room`` characters: its start, ``…``, its end."""
    if len(text) <= room:
        return text
    head = (room - 1) // 3
    return text[:head] + "…" + text[len(text) - (room - 1 - head) :]


def sync_text(
    remote: str, synced: datetime | None, now: datetime, *, room: int = 80
) -> Text:
    """``remote: <url> · synced 12:03 UTC`` (a date too when not today, UTC).

    A URL longer than ``room`` keeps its start (the host) and its end (the name).
    """
    text = Text("remote: ", "dim")
    text.append_text(plain(middle_cut(one_line(remote), room)))
    if synced is None:
        text.append(" · not synced in this session", "dim")
        return text
    synced = synced.astimezone(UTC)
    same_day = synced.date() == now.astimezone(UTC).date()
    when = synced.strftime("%H:%M" if same_day else "%Y-%m-%d %H:%M")
    text.append(f" · synced {when} UTC", "dim")
    return text


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
