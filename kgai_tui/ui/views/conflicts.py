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
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from kgai_tui.ui.render import head_card
from kgai_tui.ui.safe_text import one_line, plain
from kgai_tui.ui.screens import ResolveModal
from kgai_tui.ui.snapshot import ReloadRequested, Snapshot

CARD_CHROME: Final = 5
"""Columns a head card takes besides its text: border 2, padding 2, margin 1."""
CARD_MIN_TEXT: Final = 24
"""The narrowest text column worth putting beside another."""


class ConflictsView(Horizontal):
    """Left: contested elements; right: their competing heads."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "resolve", "Resolve", show=True),
    ]

    def __init__(self, root: Path, *, id: str | None = None) -> None:
        """Start empty; resolutions are written to the store at ``root``."""
        super().__init__(id=id)
        self.root = root
        self.snapshot: Snapshot | None = None
        self.selected: str | None = None
        self._card_width = 0  # columns each head card needs to sit side by side

    def compose(self) -> ComposeResult:
        """Lay out the list and the heads."""
        with Vertical(id="conflict-side"):
            yield Static(id="conflict-caption")
            yield OptionList(id="conflict-list", markup=False)
        with VerticalScroll(id="conflict-main"):
            yield Horizontal(id="conflict-heads")

    def show(self, snapshot: Snapshot) -> None:
        """Render the conflicts of a new snapshot."""
        self.snapshot = snapshot
        v = snapshot.view
        contested = sorted(v.conflicts(), key=lambda e: (v.label(e).lower(), e))
        options = OptionList
        lst = self.query_one("#conflict-list", options)
        lst.clear_options()
        lst.add_options(
            [
                Option(
                    Text.assemble(
                        plain(one_line(v.label(e), 40)),
                        (f"  {len(v.heads(e))} heads", "dim"),
                    ),
                    id=e,
                )
                for e in contested
            ]
        )
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
        if self.selected is None or not v.is_contested(self.selected):
            self.selected = contested[0] if contested else None
        if self.selected is not None:
            lst.highlighted = contested.index(self.selected)
        self._show_heads()

    @on(OptionList.OptionHighlighted, "#conflict-list")
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
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
        """Open the resolve dialog for the highlighted conflict."""
        if (
            self.selected is not None
            and self.snapshot is not None
            and self.snapshot.moment is None
        ):
            self.app.push_screen(
                ResolveModal(self.snapshot.view, self.selected),
                partial(self._resolve_chosen, self.selected),
            )
        elif self.snapshot is not None and self.snapshot.moment is not None:
            self.notify(
                "Move the time slider to now (End) to resolve.", severity="warning"
            )

    def _resolve_chosen(
        self, element_id: str, choice: tuple[str | None, str, str] | None
    ) -> None:
        if choice is not None:
            keep, title, rationale = choice
            self._resolve(element_id, keep, title, rationale)

    @work(thread=True, exclusive=True, group="write", exit_on_error=False)
    def _resolve(
        self, element_id: str, keep: str | None, title: str, rationale: str
    ) -> None:
        """Record the resolution, say how it went, and have the app re-read the store."""
        from kgai_tui.core.errors import KgaiError
        from kgai_tui.core.write.writes import resolve_conflict

        app = self.app
        try:
            resolve_conflict(
                self.root,
                element_id,
                keep=keep,
                title=title or None,
                rationale=rationale or None,
            )
        except KgaiError as exc:
            app.call_from_thread(
                app.notify, str(exc).splitlines()[0], severity="error", markup=False
            )
            return
        app.call_from_thread(
            app.notify,
            "Conflict resolved: recorded one decision replacing every side.",
            markup=False,
        )
        app.call_from_thread(self.post_message, ReloadRequested())
