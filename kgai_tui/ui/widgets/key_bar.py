"""KeyBar: the keys of what has the focus, on one line, help and quit always there.

It replaces Textual's footer, which lists the focused widget's bindings as they
happen to be declared: views 6 and 7, the slider and the marks never showed, and at
80 columns ``? Help`` and ``q Quit`` fell off the end. Here the line is built from
the command registry (:func:`kgai_tui.ui.commands.bar_items`) for one scope, and
when it is too wide the lowest-ranked entries go first; help and quit (rank 100)
never go.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from kgai_tui.ui.commands import VIEWS, BarItem, bar_items

_GAP = "  "


def bar_text(items: list[BarItem], width: int, *, tag: str = "") -> Text:
    """The bar for ``items`` in ``width`` cells: ``tag`` (the view's name) first,
    then as many entries as fit, dropping the lowest ranks."""
    shown = list(items)

    def cells(kept: list[BarItem]) -> int:
        body = sum(len(i.keys) + 1 + len(i.label) for i in kept)
        lead = len(tag) + 3 if tag else 0  # " tag " and a space
        return 1 + lead + body + len(_GAP) * max(len(kept) - 1, 0)

    kept = list(shown)
    for rank in sorted({i.rank for i in shown if i.rank < 100}):
        if cells(kept) <= width:
            break
        kept = [i for i in kept if i.rank != rank]
    out = Text(" ")
    if tag:
        out.append(f" {tag} ", "reverse bold")
        out.append(" ")
    for n, item in enumerate(kept):
        if n:
            out.append(_GAP)
        out.append(item.keys, "bold")
        out.append(" " + item.label, "dim")
    out.truncate(width)
    return out


class KeyBar(Static):
    """The key bar of one scope (a view id, or a dialog's name)."""

    DEFAULT_CSS = """
    KeyBar { height: 1; background: $panel; color: $text; }
    """

    def __init__(self, scope: str, *, id: str | None = None) -> None:
        """Show the keys of ``scope``."""
        super().__init__(id=id)
        self.scope = scope
        self.back = False
        self.typing = False

    def show_scope(
        self, scope: str, *, back: bool = False, typing: bool = False
    ) -> None:
        """Show another scope's keys; ``back`` when ``q`` goes back, ``typing``
        while a text box has the focus."""
        if (scope, back, typing) != (self.scope, self.back, self.typing):
            self.scope, self.back, self.typing = scope, back, typing
            self.refresh()

    def render(self) -> Text:
        """The line, fitted to the width."""
        tag = dict(VIEWS).get(self.scope, "")
        return bar_text(
            bar_items(self.scope, back=self.back, typing=self.typing),
            self.size.width or 80,
            tag=tag,
        )
