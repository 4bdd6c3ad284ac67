"""StoryScreen: one element's story, tig-log style: every decision that shaped it,
oldest first, each with its author, day, status, why, what it replaced and what
replaced it on this element (:mod:`kgai_tui.core.reads.story`)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from kgai_tui.core.reads.story import StoryEntry, element_story
from kgai_tui.core.reads.view import KgView
from kgai_tui.ui.commands import bindings
from kgai_tui.ui.render import DIM, day
from kgai_tui.ui.safe_text import one_line, plain
from kgai_tui.ui.theme import Palette
from kgai_tui.ui.widgets.key_bar import KeyBar

#: Lines of a rationale the story shows (the decision's record shows all of it).
WHY_LINES = 6
#: Entries the story lays out at a time, the newest first; a line above them
#: shows the page before. 5,000 entries took 2.1 s on the UI thread (measured).
STORY_PAGE = 200
#: The option id of that line (a decision id never starts with a NUL).
_EARLIER = "\x00earlier"


def story_entry(v: KgView, entry: StoryEntry, palette: Palette, width: int) -> Text:
    """One decision of the story: a header line, then its why and its links."""
    d = entry.decision
    out = palette.mark(entry.status)
    out.append(f" {day(d)}  ", DIM)
    out.append_text(plain(one_line(d.title or "(untitled stub)", width), "bold"))
    out.append("\n  ")
    out.append_text(plain(one_line(d.author or "unknown", 24), palette.field))
    out.append(f" · {entry.status.value} · {d.id}", DIM)
    if d.rationale:
        lines = [line.strip() for line in d.rationale.splitlines() if line.strip()]
        for line in lines[:WHY_LINES]:
            out.append("\n  │ ", DIM)
            out.append_text(plain(one_line(line, width)))
        if len(lines) > WHY_LINES:
            out.append(f"\n  │ … {len(lines) - WHY_LINES} more line(s): enter", DIM)
    for word, others in (
        ("replaces", entry.replaces),
        ("replaced by", entry.replaced_by),
        ("replaced elsewhere by", entry.replaced_elsewhere),
    ):
        for other in others:
            o = v.decision(other)
            out.append(f"\n  {word} ", DIM)
            out.append_text(palette.mark(v.status(other)))
            out.append(f" {day(o)} ", DIM)
            out.append_text(plain(one_line(o.title or o.id, width - 30)))
    return out


class StoryScreen(ModalScreen[str | None]):
    """An element's story; Enter opens a decision's record, ``y`` copies its id."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("story")

    def __init__(self, view: KgView, element_id: str, *, palette: Palette) -> None:
        """Tell the story of ``element_id`` in ``view`` (the slider's moment)."""
        super().__init__()
        self.view = view
        self.element_id = element_id
        self.palette = palette
        self.history = view.history(element_id)
        #: Where in :attr:`history` the entries laid out begin.
        self.first = max(len(self.history) - STORY_PAGE, 0)
        self.entries = element_story(view, element_id, self.history[self.first :])

    def compose(self) -> ComposeResult:
        """A heading and the entries."""
        v = self.view
        with Vertical(id="modal-box"):
            heading = Text("Story of ", "bold")
            heading.append_text(plain(one_line(v.label(self.element_id), 60), "bold"))
            heading.append(
                f" · {len(self.history):,} decision(s), oldest first · "
                "enter opens · y copies the id",
                DIM,
            )
            yield Static(heading, id="story-heading")
            yield OptionList(id="story-list", markup=False)
        yield KeyBar("story")

    def on_mount(self) -> None:
        """Fill the list, newest at the bottom, the cursor on the last entry."""
        story = self.query_one("#story-list", OptionList)
        if self.entries:
            self._fill(len(self.entries) - 1)
        else:
            story.add_option(
                Option(Text("no decision has shaped this element yet", DIM))
            )
        story.focus()

    def _fill(self, cursor: int) -> None:
        """Lay out the entries (after a line for the earlier ones, if any), the
        cursor on entry ``cursor``."""
        width = max(self.app.size.width - 12, 30)
        options = [
            Option(story_entry(self.view, e, self.palette, width), id=e.decision.id)
            for e in self.entries
        ]
        if self.first:
            more = min(self.first, STORY_PAGE)
            line = f"… {self.first:,} earlier decision(s) · enter shows {more} more"
            options.insert(0, Option(Text(line, DIM), id=_EARLIER))
        story = self.query_one("#story-list", OptionList)
        story.clear_options()
        story.add_options(options)
        story.highlighted = cursor + (1 if self.first else 0)

    def _earlier(self) -> None:
        """Lay out the page before the entries shown, the cursor where it was."""
        start = max(self.first - STORY_PAGE, 0)
        told = self.history[start : self.first]
        self.entries = element_story(self.view, self.element_id, told) + self.entries
        self.first = start
        self._fill(len(told))

    def action_copy_id(self) -> None:
        """Copy the highlighted decision's id to the clipboard."""
        story = self.query_one("#story-list", OptionList)
        at = None if story.highlighted is None else story.highlighted - bool(self.first)
        if at is None or not 0 <= at < len(self.entries):
            return
        ident = self.entries[at].decision.id
        self.app.copy_to_clipboard(ident)
        self.notify(f"copied {ident}", title="Clipboard", markup=False)

    @on(OptionList.OptionSelected, "#story-list")
    def _open(self, event: OptionList.OptionSelected) -> None:
        if event.option.id == _EARLIER:
            self._earlier()
        elif event.option.id:
            self.dismiss(f"d:{event.option.id}")
