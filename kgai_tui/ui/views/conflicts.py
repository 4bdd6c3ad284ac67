"""ConflictsView: contested elements, their heads side by side, and resolution."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from kgai_tui.ui.render import element_label, head_card
from kgai_tui.ui.safe_text import one_line, plain
from kgai_tui.ui.snapshot import Snapshot


class ResolveRequested(Message):
    """The user chose how to end a conflict."""

    def __init__(
        self, element_id: str, *, keep: str | None, title: str = "", rationale: str = ""
    ) -> None:
        """Carry either the kept decision id or a new decision's text."""
        super().__init__()
        self.element_id = element_id
        self.keep = keep
        self.title = title
        self.rationale = rationale


class ConflictsView(Horizontal):
    """Left: contested elements; right: their competing heads."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "resolve", "Resolve", show=True),
    ]

    class ResolveDialogRequested(Message):
        """Ask the app to open the resolve dialog for an element."""

        def __init__(self, element_id: str) -> None:
            """Carry the contested element."""
            super().__init__()
            self.element_id = element_id

    def __init__(self, *, id: str | None = None) -> None:
        """Start empty."""
        super().__init__(id=id)
        self.snapshot: Snapshot | None = None
        self.selected: str | None = None

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
        p = snapshot.projection
        contested = sorted(p.contested, key=lambda e: (element_label(p, e).lower(), e))
        options = OptionList
        lst = self.query_one("#conflict-list", options)
        lst.clear_options()
        lst.add_options(
            [
                Option(
                    Text.assemble(
                        plain(one_line(element_label(p, e), 40)),
                        (f"  {len(p.heads[e])} heads", "dim"),
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
                    "bold red",
                )
            )
        else:
            caption.update(Text("✓ no open conflicts", "bold green"))
        if self.selected not in p.contested:
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
        p = self.snapshot.projection
        heads = p.heads_of(self.selected)
        cards = [
            Static(
                head_card(p, idx, n, self.snapshot.mutations_of(idx)),
                classes="head-card",
            )
            for n, idx in enumerate(heads, start=1)
        ]
        box.mount(*cards)

    def action_resolve(self) -> None:
        """Open the resolve dialog for the highlighted conflict."""
        if (
            self.selected is not None
            and self.snapshot is not None
            and self.snapshot.moment is None
        ):
            self.post_message(self.ResolveDialogRequested(self.selected))
        elif self.snapshot is not None and self.snapshot.moment is not None:
            self.notify(
                "Move the time slider to now (End) to resolve.", severity="warning"
            )
