"""Modal screens: a decision's full record, doctor, and help."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from kgai_tui.core.reads.legend import LEGEND
from kgai_tui.core.reads.view import KgView
from kgai_tui.core.wire.model import Mutation
from kgai_tui.ui.commands import bindings, help_sections
from kgai_tui.ui.render import DIM, decision_record
from kgai_tui.ui.safe_text import one_line, plain
from kgai_tui.ui.theme import Palette
from kgai_tui.ui.widgets.key_bar import KeyBar


class DecisionModal(ModalScreen[str | None]):
    """The full record of one decision; returns an element or decision to open."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("decision")

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
        yield KeyBar("decision")

    def action_copy_id(self) -> None:
        """Copy the decision's id to the clipboard."""
        ident = self.view.decision(self.index).id
        self.app.copy_to_clipboard(ident)
        self.notify(f"copied {ident}", title="Clipboard", markup=False)

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
        Binding("escape,q", "dismiss(None)", "Close")
    ]

    def __init__(self, body: Text) -> None:
        """Show ``body``."""
        super().__init__()
        self.body = body

    def compose(self) -> ComposeResult:
        """One scrolling Static."""
        with Vertical(id="modal-box"), VerticalScroll():
            yield Static(self.body)
        yield KeyBar("diff")


class HelpScreen(ModalScreen[None]):
    """Every key, by where it acts, and what the marks mean (from the registry)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,question_mark,q", "dismiss(None)", "Close"),
    ]

    def __init__(self, palette: Palette) -> None:
        """Draw the keys in ``palette``."""
        super().__init__()
        self.palette = palette

    def compose(self) -> ComposeResult:
        """The key tables, then the legend."""
        with Vertical(id="modal-box"), VerticalScroll(id="help-scroll"):
            yield Static(help_text(self.palette), id="help-body")
        yield KeyBar("diff")


def help_text(palette: Palette) -> Group:
    """The help screen: each scope's keys (what they do wraps in its column),
    then the one legend."""
    key_style = palette.field + Style(bold=True)
    parts: list[RenderableType] = [
        Text.assemble(
            ("kgai-tui keys", "bold underline"), ("  (esc, ? or q closes)", DIM)
        )
    ]
    for heading, rows in help_sections():
        parts.append(Text(f"\n{heading}", "bold"))
        table = Table.grid(padding=(0, 2))
        table.add_column(style=key_style, no_wrap=True)
        table.add_column(overflow="fold")
        for keys, does in rows:
            table.add_row(f" {keys}", does)
        parts.append(table)
    parts.append(Text("\nMarks", "bold"))
    legend = Table.grid(padding=(0, 2))
    legend.add_column(no_wrap=True)
    legend.add_column(overflow="fold")
    for status, means in LEGEND:
        mark = Text(" ")
        mark.append_text(palette.mark(status))
        mark.append(f" {status.value}", "bold")
        legend.add_row(mark, means)
    parts.append(legend)
    parts.append(
        Text(
            "\nA writer is an install (one shard of the log); a person is a "
            "decision's author.",
            DIM,
        )
    )
    return Group(*parts)
