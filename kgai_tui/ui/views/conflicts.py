"""ConflictsView: contested elements, their heads side by side, and resolution."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import ClassVar

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
                    "bold red",
                )
            )
        else:
            caption.update(Text("✓ no open conflicts", "bold green"))
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
        cards = [
            Static(
                head_card(v, idx, n, self.snapshot.mutations_of(idx)),
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
