"""The header (the store, its counts, its health; the remote and its last sync) and
the moment banner under it."""

from __future__ import annotations

from dataclasses import dataclass
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
        self._counts: HeaderCounts | None = None

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
        pending: bool = False,
    ) -> None:
        """The store's counts at the slider and its health (``problems`` found);
        ``pending``: the project's ``.kgairc`` waits for approval on this machine.

        ``decisions`` and ``writers`` are those recorded by the slider's moment.
        The line is fitted again whenever the header is resized.
        """
        self._counts = HeaderCounts(
            label,
            elements=snapshot.view.element_count(),
            decisions=decisions,
            writers=writers,
            conflicts=len(snapshot.view.conflicts()),
            problems=problems,
            palette=snapshot.palette,
            pending=pending,
        )
        self._fit()

    def _fit(self) -> None:
        if self._counts is not None and self._clock is None:
            width = self.content_size.width or self.app.size.width - 2
            self._show(header_text(self._counts, width))

    def on_resize(self) -> None:
        """Fit the line to the new width (the health badge always stays)."""
        self._fit()


@dataclass(frozen=True, slots=True)
class HeaderCounts:
    """What the header says about the store at the slider."""

    label: str
    elements: int
    decisions: int
    writers: int
    conflicts: int
    problems: int
    palette: Palette
    pending: bool = False


def header_text(counts: HeaderCounts, width: int) -> Text:
    """The header line in ``width`` cells: the longest wording that fits, words
    dropped first, the store's name next; the health badge is never dropped."""
    c, palette = counts, counts.palette
    if c.problems:
        badge = Text(f" ✗ {c.problems} problem(s) · d ", palette.error_badge)
    else:
        badge = Text(" ✓ healthy ", palette.ok_badge)
    if c.pending:  # as loud as the badge, and as lasting: it decides where writes go
        badge = Text.assemble((" .kgairc unapproved ", palette.error_badge), " ", badge)
    plural = "s" if c.conflicts != 1 else ""
    wordings = (
        (
            f"{c.elements} elements · {c.decisions} decisions · {c.writers} writers",
            f"{c.conflicts} open conflict{plural}",
            34,
        ),
        (f"{c.elements} el · {c.decisions} dec · {c.writers} wr",
         f"{c.conflicts} conflict{plural}", 18),
        (f"{c.elements} el · {c.decisions} dec", f"{c.conflicts} ⚠", 12),
        (f"{c.decisions} dec", f"{c.conflicts} ⚠", 0),
    )  # fmt: skip
    room = max(width, 10)
    for counts_text, conflicts_text, label_room in wordings:
        header = Text("kgai-tui ", "bold")
        if label_room:
            label = c.label
            if len(label) > label_room:
                label = "…" + label[-(label_room - 1) :]
            header.append_text(plain(one_line(label), "dim"))
            header.append(" │ ", "dim")
        header.append(f"{counts_text} │ ")
        header.append(conflicts_text, palette.error if c.conflicts else palette.ok)
        header.append(" ")
        header.append_text(badge)
        if header.cell_len <= room:
            return header
    header.truncate(max(room - badge.cell_len, 1))
    header.append_text(badge)
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
    """``now`` with the slider keys, or the moment shown, how long ago, and what
    changed since the previous position."""

    def show_moment(self, moment: datetime | None, delta: GraphDelta | None) -> None:
        """Show the present (``moment`` ``None``) or a moment in the past."""
        if moment is None:
            self.update(
                Text(
                    "now · [ ] step · { } month · t go to a moment (-3m, a date)",
                    "dim",
                )
            )
            self.remove_class("-past")
            return
        from kgai_tui.core.clock import now
        from kgai_tui.core.reads.moment_text import ago

        text = Text(f"as of {moment.strftime('%Y-%m-%d %H:%M')} UTC", "bold")
        text.append(f" · {ago(moment, now())} · > now")
        if delta is not None:
            text.append(f" · since last position: {delta.describe()}")
        text.no_wrap = True
        text.overflow = "ellipsis"
        self.update(text)
        self.add_class("-past")
