"""ConflictsView: contested elements, their heads side by side, and resolution.

The heads sit side by side while each card is wide enough for a whole decision id;
narrower, they stack (class ``-stacked``), so an id is never broken in two.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import ClassVar, Final

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from kgai_tui.ui.commands import bindings
from kgai_tui.ui.render import head_card
from kgai_tui.ui.resolve import ResolveScreen
from kgai_tui.ui.safe_text import one_line, plain
from kgai_tui.ui.snapshot import ElementRequested, ReloadRequested, Snapshot

CARD_CHROME: Final = 5
"""Columns a head card takes besides its text: border 2, padding 2, margin 1."""
CARD_MIN_TEXT: Final = 24
"""The narrowest text column worth putting beside another."""
CONFLICT_PAGE: Final = 200
"""Conflicts laid out at a time: with 3,000 conflicts in front, laying out every
one took 64-102 ms of each slider step (measured); a last line shows more."""
_MORE: Final = "\x00more"


class ConflictsView(Horizontal):
    """Left: contested elements; right: their competing heads."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("conflicts")

    def __init__(self, root: Path, *, id: str | None = None) -> None:
        """Start empty; resolutions are written to the store at ``root``."""
        super().__init__(id=id)
        self.root = root
        self.snapshot: Snapshot | None = None
        self.selected: str | None = None
        self._card_width = 0  # columns each head card needs to sit side by side
        self._stale = False  # a snapshot arrived while hidden
        self._shown = CONFLICT_PAGE  # conflicts laid out (pages shown so far)
        self._contested: list[str] = []

    def compose(self) -> ComposeResult:
        """Lay out the list and the heads."""
        with Vertical(id="conflict-side"):
            yield Static(id="conflict-caption")
            yield OptionList(id="conflict-list", markup=False)
        with VerticalScroll(id="conflict-main"):
            yield Horizontal(id="conflict-heads")

    def show(self, snapshot: Snapshot) -> None:
        """Take a new snapshot; list its conflicts now only while on screen.

        Hidden, every slider step listed them anyway: 64-102 ms of each step on
        the UI thread with 3,000 conflicts (measured). The view lists them when
        it is shown (:meth:`on_show`)."""
        self.snapshot = snapshot
        self._stale = True
        if self.display:
            self._list()

    def on_show(self) -> None:
        """List the conflicts of the snapshot that arrived while hidden."""
        self.catch_up()

    def catch_up(self) -> None:
        """List the conflicts of the snapshot that arrived while hidden, now (the
        switcher calls it as it shows the view: a key typed right after the one
        that showed it comes before :meth:`on_show`)."""
        if self._stale:
            self._list()

    def _list(self) -> None:
        if self.snapshot is None:
            return
        self._stale = False
        snapshot = self.snapshot
        v = snapshot.view
        contested = sorted(v.conflicts(), key=lambda e: (v.label(e).lower(), e))
        self._contested = contested
        if self.selected is None or not v.is_contested(self.selected):
            self.selected = contested[0] if contested else None
        at = None if self.selected is None else contested.index(self.selected)
        if at is not None and at >= self._shown:  # keep the selection laid out
            self._shown = (at // CONFLICT_PAGE + 1) * CONFLICT_PAGE
        self._lay_out(at)
        caption = self.query_one("#conflict-caption", Static)
        if contested:
            caption.update(
                Text(
                    f"⚠ {len(contested)} element(s) decided two ways · r resolves",
                    snapshot.palette.error,
                )
            )
        else:
            caption.update(
                Text("✓ no open conflicts", snapshot.palette.ok + Style(bold=True))
            )
        self._show_heads()

    def _lay_out(self, cursor: int | None) -> None:
        """List the first :attr:`_shown` conflicts, then a line for the rest."""
        assert self.snapshot is not None
        v = self.snapshot.view
        contested = self._contested
        options = [
            Option(
                Text.assemble(
                    plain(one_line(v.label(e), 40)),
                    (f"  {len(v.heads(e))} heads", "dim"),
                ),
                id=e,
            )
            for e in contested[: self._shown]
        ]
        rest = len(contested) - self._shown
        if rest > 0:
            more = min(rest, CONFLICT_PAGE)
            line = f"… {rest:,} more conflict(s) · enter shows {more} more"
            options.append(Option(Text(line, "dim"), id=_MORE))
        lst = self.query_one("#conflict-list", OptionList)
        lst.clear_options()
        lst.add_options(options)
        if cursor is not None:
            lst.highlighted = cursor

    def _more(self) -> None:
        """Lay out the next page, the cursor on its first conflict."""
        first = self._shown
        self._shown += CONFLICT_PAGE
        self._lay_out(first)

    @on(OptionList.OptionHighlighted, "#conflict-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        if event.option.id == _MORE:
            return  # the heads shown stay those of the last conflict
        self.selected = event.option.id
        self._show_heads()

    def _show_heads(self) -> None:
        box = self.query_one("#conflict-heads", Horizontal)
        box.remove_children()
        if self.snapshot is None or self.selected is None:
            box.mount(
                Static(
                    Text(
                        "Nothing to resolve: every element has at most one decision in force.",
                        "dim",
                    )
                )
            )
            return
        v = self.snapshot.view
        heads = v.heads(self.selected)
        longest = max((cell_len(v.decision(idx).id) for idx in heads), default=0)
        self._card_width = max(longest, CARD_MIN_TEXT) + CARD_CHROME
        cards = [
            Static(
                head_card(
                    v,
                    idx,
                    n,
                    self.snapshot.mutations_of(idx),
                    palette=self.snapshot.palette,
                ),
                classes="head-card",
            )
            for n, idx in enumerate(heads, start=1)
        ]
        box.mount(*cards)
        self._arrange(len(cards))
        # A view just shown has not been laid out at its width yet: again after.
        self.call_after_refresh(self._arrange, len(cards))

    def _arrange(self, cards: int) -> None:
        """Stack the cards when side by side they would be too narrow for an id."""
        main = self.query_one("#conflict-main", VerticalScroll)
        width = main.scrollable_content_region.width
        box = self.query_one("#conflict-heads", Horizontal)
        box.set_class(width < cards * self._card_width, "-stacked")

    def on_resize(self) -> None:
        """Decide again between side by side and stacked."""
        self._arrange(len(self.query(".head-card")))

    def action_resolve(self) -> None:
        """Open the resolve screen for the highlighted conflict (at now only)."""
        self.catch_up()
        if self.snapshot is None:
            return
        if self.snapshot.moment is not None:
            self.notify(
                "Resolving writes to the store as it is now: move the slider to "
                "now (>) first.",
                severity="warning",
                markup=False,
            )
            return
        if self.selected is None:
            self.notify("No open conflict to resolve.", markup=False)
            return
        v = self.snapshot.view
        heads = v.heads(self.selected)
        self.app.push_screen(
            ResolveScreen(
                self.root,
                v,
                self.selected,
                [self.snapshot.mutations_of(i) for i in heads],
                palette=self.snapshot.palette,
            ),
            partial(self._resolved, self.selected),
        )

    def _resolved(self, element_id: str, decision_id: str | None) -> None:
        """Say what was appended, re-read the store and show the new decision."""
        if decision_id is None:
            return
        self.notify(
            f"Recorded {decision_id}: the conflict on this element is resolved. "
            "Both sides stay in its story.",
            title="Conflict resolved",
            markup=False,
            timeout=10,
        )
        self.post_message(ReloadRequested(focus=(element_id, decision_id)))

    @on(OptionList.OptionSelected, "#conflict-list")
    def _open(self, event: OptionList.OptionSelected) -> None:
        if event.option.id == _MORE:
            self._more()
        elif event.option.id:
            self.post_message(ElementRequested(event.option.id))
