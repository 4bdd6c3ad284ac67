"""Modal screens: a decision's full record, resolving a conflict, doctor, and help."""

from __future__ import annotations

from typing import ClassVar

from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, OptionList, Static, TextArea
from textual.widgets.option_list import Option

from kgai_tui.core.reads.view import KgView
from kgai_tui.core.wire.model import Mutation
from kgai_tui.ui.commands import help_rows
from kgai_tui.ui.render import decision_record
from kgai_tui.ui.safe_text import one_line, plain
from kgai_tui.ui.theme import Palette


class DecisionModal(ModalScreen[str | None]):
    """The full record of one decision; returns an element or decision to open."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Close")
    ]

    def __init__(
        self,
        view: KgView,
        index: int,
        mutations: tuple[Mutation, ...] = (),
        *,
        palette: Palette,
    ) -> None:
        """Show decision ``index`` of ``view`` and the mutations it carried."""
        super().__init__()
        self.view = view
        self.index = index
        self.mutations = mutations
        self.palette = palette

    def compose(self) -> ComposeResult:
        """The record, then its navigable neighbours."""
        v, d = self.view, self.view.decision(self.index)
        with Vertical(id="modal-box"):
            with VerticalScroll():
                yield Static(
                    decision_record(v, d.index, self.mutations, palette=self.palette),
                    id="decision-record",
                )
                yield Static(self._event_facts(), id="decision-event")
            options = [
                Option(Text.assemble("element ", plain(v.label(e))), id=f"e:{e}")
                for e in d.shapes
            ]
            for word, others in (
                ("replaces ", d.supersedes),
                ("replaced by ", d.superseded_by),
            ):
                for o in map(v.decision, others):
                    options.append(
                        Option(
                            Text.assemble(word, plain(one_line(o.title or o.id, 60))),
                            id=f"d:{o.id}",
                        )
                    )
            yield OptionList(*options, id="decision-links", markup=False)

    def _event_facts(self) -> Text:
        d = self.view.decision(self.index)
        out = Text("\nEvent\n", "bold underline")
        out.append(
            f"  hash     {d.hash or '(stub: its event was not applied)'}\n",
            "dim",
        )
        out.append(f"  lamport  {d.lamport}\n", "dim")
        out.append("  writer   ", "dim")
        out.append_text(plain(d.install or "?", "dim"))
        out.append("\n")
        return out

    @on(OptionList.OptionSelected, "#decision-links")
    def _follow(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)


class ResolveModal(ModalScreen[tuple[str | None, str, str] | None]):
    """Keep one side, or write a new decision; returns ``(keep, title, rationale)``."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Cancel")
    ]

    def __init__(self, view: KgView, element_id: str) -> None:
        """Resolve the conflict on ``element_id``."""
        super().__init__()
        self.view = view
        self.element_id = element_id

    def compose(self) -> ComposeResult:
        """One button per head, then a form for a new decision."""
        v = self.view
        heads = v.heads(self.element_id)
        with Vertical(id="modal-box"):
            title = Text("Resolve ", "bold")
            title.append_text(plain(v.label(self.element_id), "bold"))
            yield Static(title)
            yield Static(Text("Keep one side (the others stay in history):", "dim"))
            for n, idx in enumerate(heads, start=1):
                # A str label is parsed as markup: a title "[/]" would crash.
                button = Button(
                    Text(f"{n}. keep: {one_line(v.title(idx), 60)}"),
                    id=f"keep-{idx}",
                )
                yield button
            yield Static(
                Text("…or record a new decision that replaces all of them:", "dim")
            )
            yield Input(placeholder="title of the new decision", id="resolve-title")
            yield TextArea(id="resolve-rationale")
            with Horizontal(id="resolve-actions"):
                yield Button("Record new decision", id="resolve-new", variant="primary")
                yield Button("Cancel", id="resolve-cancel")

    def on_mount(self) -> None:
        """Focus the first option."""
        self.query(Button).first().focus()

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        button_id = event.button.id or ""
        if button_id.startswith("keep-"):
            idx = int(button_id.removeprefix("keep-"))
            self.dismiss((self.view.decision(idx).id, "", ""))
        elif button_id == "resolve-new":
            title = self.query_one("#resolve-title", Input).value
            if not title.strip():
                self.notify("A new decision needs a title.", severity="error")
                return
            rationale = self.query_one("#resolve-rationale", TextArea).text
            self.dismiss((None, title, rationale))
        else:
            self.dismiss(None)


def doctor_report(problems: list[str], palette: Palette) -> Text:
    """The integrity report: every problem, or that the shards are sound."""
    if not problems:
        return Text(
            "✓ every shard is sound: hashes, decision ids and chains check out.",
            palette.ok,
        )
    body = Text(f"✗ {len(problems)} problem(s)\n\n", palette.error)
    for problem in problems:
        body.append_text(plain(problem))
        body.append("\n")
    return body


class TextModal(ModalScreen[None]):
    """A scrollable read-only report (doctor findings)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss(None)", "Close")
    ]

    def __init__(self, body: Text) -> None:
        """Show ``body``."""
        super().__init__()
        self.body = body

    def compose(self) -> ComposeResult:
        """One scrolling Static."""
        with Vertical(id="modal-box"), VerticalScroll():
            yield Static(self.body)


class HelpScreen(ModalScreen[None]):
    """Every key, and what the marks mean."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "dismiss(None)", "Close"),
    ]

    def __init__(self, palette: Palette) -> None:
        """Draw the keys in ``palette``."""
        super().__init__()
        self.palette = palette

    def compose(self) -> ComposeResult:
        """The key table and the legend."""
        table = Table(title="kgai-tui keys", show_header=True, expand=True)
        table.add_column(
            "key", style=self.palette.field + Style(bold=True), no_wrap=True
        )
        table.add_column("does")
        for key, does in help_rows():
            table.add_row(Text(key), Text(does))
        legend = Text(
            "\n● in force   ○ superseded   ✗ dead end (provenance-only note)   "
            "· touched without authority   ⚠ contested\n",
            "dim",
        )
        with Vertical(id="modal-box"), VerticalScroll():
            yield Static(table)
            yield Static(legend)
