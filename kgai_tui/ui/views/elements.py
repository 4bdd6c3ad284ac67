"""ElementsView: elements grouped by kind, filter as you type, and one element's story."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Input, OptionList, Static, Tree
from textual.widgets.option_list import Option

from kgai_tui.core.errors import KgaiError
from kgai_tui.core.reads.legend import MARKS, Status
from kgai_tui.core.reads.story import element_story
from kgai_tui.core.reads.view import KgView
from kgai_tui.core.recall.scoring import glob_match
from kgai_tui.ui.commands import bindings
from kgai_tui.ui.render import DIM, absent_element, element_details, story_row
from kgai_tui.ui.safe_text import one_line, plain
from kgai_tui.ui.snapshot import (
    DecisionRequested,
    ElementRequested,
    Snapshot,
    StoryRequested,
)
from kgai_tui.ui.theme import Palette
from kgai_tui.ui.widgets.element_tree import ElementTree

if TYPE_CHECKING:
    from kgai_tui.core.reads.view import KgView


#: Leaves a branch shows at most; the rest are one "more" line (type to narrow).
#: A store of 100k elements drew every one of them: seconds on the UI thread
#: before the first view, for a list nobody scrolls through.
BRANCH_LEAVES = 2000
#: Decisions of an element's story the details list, the newest (``s`` tells it
#: whole), and links each way (the Graph view draws every neighbour). The list is
#: laid out on the UI thread at every slider step: an element decided 5,000 times
#: took 0.3-1.1 s a step there (measured, a 20k-decision store).
STORY_ROWS = 50
LINK_ROWS = 100


class ElementRow(NamedTuple):
    """One leaf of the tree: the element, what it is listed as, what the filter
    matches, and its marks (its label is made only when it is shown). A tuple: a
    store of 100k elements makes 100k of them before its first view."""

    eid: str
    listed: str  # the name, or "(unnamed <id>)"
    name: str  # lower case
    kind: str  # lower case
    contested: bool = False
    new: bool = False
    paths: tuple[str, ...] = ()  # its ``paths`` prop, split (spec 6.4)

    def label(self, palette: Palette, via: str = "") -> Text:
        """The leaf's label: the name on one line, shown, never markup; ``via`` is
        the stored path a filter matched, when it matched only that."""
        label = plain(one_line(self.listed, 60))
        if self.contested:
            label.stylize(palette.contested)
            label.append(f" {MARKS[Status.CONTESTED]}", palette.contested)
        if self.new:
            label.append(" new", palette.new)
        if via:
            label.append("  ")
            label.append_text(plain(one_line(via, 40), DIM))
        return label

    def matched_path(self, needle: str, raw: str) -> str | None:
        """The first stored path the filter matches: containing ``needle`` (lower
        case), or matching ``raw`` as recall's ``--paths`` does (spec 6.4.1)."""
        for stored in self.paths:
            if needle in stored.lower() or glob_match(stored, raw):
                return stored
        return None


#: One branch to draw: its label, its first leaves, how many more match.
Branch = tuple[Text, list[tuple[Text, str]], int]


@dataclass(frozen=True, slots=True)
class ElementRows:
    """The tree of one snapshot, ready to draw: built in a worker, not on the UI.

    At 10,000 elements, looking every element up and sorting them takes a good
    part of a second; the UI thread then only adds the leaves it shows. The
    branches with no filter, the tree every snapshot shows first, are made here
    too (2,000 labels: 10-20 ms a slider step on the UI thread).
    """

    groups: tuple[tuple[str, tuple[ElementRow, ...]], ...]
    palette: Palette
    #: :meth:`filtered` of no filter, made with the rows (a tree copies a label
    #: before it styles it, so they are shared).
    unfiltered: list[Branch] = field(default_factory=list, compare=False)

    def __post_init__(self) -> None:
        self.unfiltered.extend(self.filtered(""))

    def filtered(self, raw: str, cap: int | None = None) -> list[Branch]:
        """Branches of the elements whose name, kind or stored paths match the
        filter ``raw`` (a name is matched ignoring case; a path as recall matches
        ``--paths``, or by containing the filter): each with its count, its first
        ``cap`` leaves (:data:`BRANCH_LEAVES`) and how many it leaves out. A leaf
        matched by a path alone shows that path."""
        if cap is None and not raw.strip() and self.unfiltered:
            return list(self.unfiltered)
        cap = BRANCH_LEAVES if cap is None else cap
        needle = raw.strip().lower()
        raw = raw.strip()
        out: list[Branch] = []
        for kind, rows in self.groups:
            match: list[tuple[ElementRow, str]] = []
            for r in rows:
                if not needle or needle in r.name or needle in r.kind:
                    match.append((r, ""))
                elif r.paths and (via := r.matched_path(needle, raw)) is not None:
                    match.append((r, via))
            if match:
                leaves = [(r.label(self.palette, via), r.eid) for r, via in match[:cap]]
                count = plain(f"{kind} ({len(match)})", "bold")
                out.append((count, leaves, len(match) - len(leaves)))
        return out


def element_rows(
    v: KgView, added: Iterable[str] = (), *, palette: Palette
) -> ElementRows:
    """Group the elements by kind, sorted by name (pure: run it in a worker).

    ``added`` are elements new since the previous slider position (marked ``new``).
    """
    new = set(added)
    contested = v.conflicts()
    paths = v.element_paths()
    by_kind: dict[str, list[tuple[str, str, str, str]]] = {}
    for eid, kind, name in v.element_names():
        by_kind.setdefault(kind or "(stub)", []).append((name.lower(), eid, kind, name))
    groups = []
    for kind in sorted(by_kind):
        members = sorted(by_kind[kind], key=lambda m: (m[0], m[1]))
        rows = tuple(
            ElementRow(
                eid,
                name or f"(unnamed {eid})",
                lower,
                real_kind.lower(),
                eid in contested,
                eid in new,
                tuple(paths.get(eid, ())),
            )
            for lower, eid, real_kind, name in members
        )
        groups.append((kind, rows))
    return ElementRows(tuple(groups), palette)


class ElementsView(Horizontal):
    """Left: the element tree; right: props, decisions in force, links and story."""

    BINDINGS: ClassVar[list[BindingType]] = bindings("elements")

    def __init__(self, *, id: str | None = None) -> None:
        """Start empty; the app sends a snapshot."""
        super().__init__(id=id)
        self.snapshot: Snapshot | None = None
        #: The element the user chose (the tree's cursor, a jump, a walk): kept
        #: across slider steps, also through moments it does not exist at.
        self.chosen: str | None = None
        #: The element shown: the one chosen when it exists at the snapshot's
        #: moment, else the first one listed.
        self.selected: str | None = None
        self._targets: list[tuple[str, str]] = []
        self._looks: list[_Look] | None = None  # what the links list shows
        self._rows: ElementRows | None = None
        self._shown: list[str] = []  # the element ids the tree lists, in order
        self._drawn_width = 0  # the width the details were last drawn for

    def compose(self) -> ComposeResult:
        """Lay out the filter, tree and details."""
        with Vertical(id="element-side"):
            yield Input(placeholder="name, kind or path…", id="element-filter")
            tree = ElementTree("elements", id="element-tree")
            tree.show_root = False
            yield tree
        with Vertical(id="element-main"):
            with VerticalScroll(id="element-scroll"):
                yield Static(id="element-details")
            yield OptionList(id="element-links", markup=False)

    # ------------------------------------------------------------------ keys

    def action_filter(self) -> None:
        """Focus the filter box (type to narrow the tree)."""
        self.query_one("#element-filter", Input).focus()

    def leave_filter(self) -> bool:
        """Leave the filter box for the tree; ``False`` when it was not focused."""
        box = self.query_one("#element-filter", Input)
        if self.screen.focused is not box:
            return False
        self.query_one("#element-tree", Tree).focus()
        return True

    @on(Input.Submitted, "#element-filter")
    def _filter_done(self) -> None:
        self.query_one("#element-tree", Tree).focus()

    def action_story(self) -> None:
        """Open the element's whole story (every decision, oldest first)."""
        if self.snapshot is not None and self.selected is not None:
            self.post_message(StoryRequested(self.selected))

    def action_copy_id(self) -> None:
        """Copy the highlighted decision's id (or the element's) to the clipboard."""
        ident = self.highlighted_id()
        if ident:
            self.app.copy_to_clipboard(ident)
            self.notify(f"copied {ident}", title="Clipboard", markup=False)

    def highlighted_id(self) -> str | None:
        """The id under the cursor: a decision in the list, else the element."""
        links = self.query_one("#element-links", OptionList)
        if (
            self.snapshot is not None
            and self.screen.focused is links
            and links.highlighted is not None
            and 0 <= links.highlighted < len(self._targets)
        ):
            kind, ref = self._targets[links.highlighted]
            if kind == "d":
                return self.snapshot.view.decision(int(ref)).id
            return ref
        return self.selected

    def highlight_decision(self, decision_id: str) -> None:
        """Focus the list on a decision of the element shown (its story row)."""
        if self.snapshot is None:
            return
        index = self.snapshot.view.decision_index(decision_id)
        links = self.query_one("#element-links", OptionList)
        for n, (kind, ref) in enumerate(self._targets):
            if kind == "d" and index is not None and int(ref) == index:
                links.focus()
                links.highlighted = n
                return

    # ------------------------------------------------------------------ data

    def show(self, snapshot: Snapshot, rows: ElementRows) -> None:
        """Render a new snapshot, keeping the selection when it still exists.

        ``rows`` is :func:`element_rows` of the snapshot, computed off the UI thread.
        """
        self.snapshot = snapshot
        if rows != self._rows:  # the same tree keeps its cursor (the whole store
            self._rows = rows  # loaded after the first view, a reload)
            self._fill_tree()
        want = self.chosen if self.chosen is not None else self.selected
        if want is not None and snapshot.view.has_element(want):
            self.selected = want
        else:  # the first listed; none when the filter hides every element
            self.selected = self._shown[0] if self._shown else None
        if self.selected is not None:
            self._cursor_to(self.selected)
        self._show_details()

    @property
    def choice(self) -> str | None:
        """The element the explorer is about: the one chosen, else the one shown
        (the Graph's centre, the place the back stack remembers)."""
        return self.chosen if self.chosen is not None else self.selected

    def select(self, element_id: str) -> None:
        """Show one element, and put the tree's cursor on it (a filter hiding it
        is cleared first: a jump never lands on an element the tree hides)."""
        self.chosen = self.selected = element_id
        if element_id not in self._shown:
            box = self.query_one("#element-filter", Input)
            if box.value:
                with box.prevent(Input.Changed):
                    box.value = ""
                self._fill_tree()
        self._cursor_to(element_id)
        self._show_details()

    def _cursor_to(self, element_id: str) -> None:
        tree = self.query_one("#element-tree", ElementTree)
        with tree.prevent(Tree.NodeHighlighted):  # the lines built on the way too
            for line in range(tree.last_line + 1):
                node = tree.get_node_at_line(line)
                if node is not None and node.data == element_id:
                    tree.cursor_line = line
                    tree.scroll_to_line(line)
                    return

    @on(Input.Changed, "#element-filter")
    def _filter(self) -> None:
        self._fill_tree()
        if self.selected not in self._shown:
            # The detail pane follows the filter: the first element still listed.
            self.chosen = self.selected = self._shown[0] if self._shown else None
            self._show_details()
        if self.selected is not None:
            self._cursor_to(self.selected)  # a tree filled again starts at its top

    def _fill_tree(self) -> None:
        if self._rows is None:
            return
        tree = self.query_one("#element-tree", ElementTree)
        raw = self.query_one("#element-filter", Input).value
        branches = self._rows.filtered(raw)
        self._shown = [eid for _, leaves, _ in branches for _, eid in leaves]
        if branches:
            tree.fill(branches)
        elif raw.strip():
            tree.say(
                Text.assemble(
                    "no element's name, kind or paths matches ",
                    plain(f"“{one_line(raw.strip(), 30)}”"),
                    " · escape clears",
                    style=DIM,
                )
            )
        else:
            tree.say(Text("no elements at this moment", DIM))

    @on(Tree.NodeHighlighted, "#element-tree")
    def _highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        if event.node.data is not None:
            self.chosen = self.selected = event.node.data
            self._show_details()

    @on(Tree.NodeSelected, "#element-tree")
    def _selected(self, event: Tree.NodeSelected[str]) -> None:
        if event.node.data is not None:
            self.chosen = self.selected = event.node.data
            self._show_details()
            self.query_one("#element-links", OptionList).focus()

    def _show_details(self) -> None:
        details = self.query_one("#element-details", Static)
        links = self.query_one("#element-links", OptionList)
        if self.snapshot is None:
            details.update(Text("reading the store…", style=DIM))
            self._no_links(links)
            return
        v = self.snapshot.view
        put = partial(self._put, details, self._absent_note(v))
        if self.selected is None:
            if self._rows is not None and not self._rows.groups:
                put(
                    Text(
                        "This store has no elements yet"
                        + (" at this moment" if self.snapshot.moment else "")
                        + ": a decision's upsert_element creates one.",
                        style=DIM,
                    )
                )
            else:
                put(Text("the filter hides every element", style=DIM))
            self._no_links(links)
            return
        if not v.has_element(self.selected):
            put(Text("this element does not exist at this moment", style=DIM))
            self._no_links(links)
            return
        palette = self.snapshot.palette
        main = self.query_one("#element-main").size.width
        self._drawn_width = main
        width = max((main or self.app.size.width * 2 // 3) - 8, 30)
        try:
            shown = element_details(
                v,
                self.selected,
                palette=palette,
                width=width,
                sets=self._sets(self.selected),
            )
            navigation = _navigation(v, self.selected, palette, width)
        except KgaiError as exc:  # a read model damaged behind its seal
            line = one_line(f"{exc}; {exc.advice}" if exc.advice else str(exc), 300)
            put(plain(line, palette.error))
            self._no_links(links)
            return
        put(shown)
        self._targets = [target for _, target in navigation]
        looks = [_look(option) for option, _ in navigation]
        if looks != self._looks:
            # Laying out a long story costs ~20 ms a slider step at 1M; the same
            # rows stay (and keep the highlighted one) when only a decision's
            # index in the new moment's view changed.
            links.clear_options()
            links.add_options([option for option, _ in navigation])
            self._looks = looks
        links.display = links.option_count > 0

    def _absent_note(self, v: KgView) -> Text | None:
        """Stepped back to before the element chosen existed: a line saying so,
        above what is shown instead (it comes back when the slider does)."""
        chosen = self.chosen
        if self.snapshot is None or chosen is None or v.has_element(chosen):
            return None
        return absent_element(KgView(self.snapshot.engine.projection), chosen)

    @staticmethod
    def _put(details: Static, note: Text | None, shown: Text) -> None:
        details.update(shown if note is None else Text.assemble(note, "\n\n", shown))

    def _no_links(self, links: OptionList) -> None:
        links.clear_options()
        links.display = False
        self._targets = []
        self._looks = None

    def on_resize(self) -> None:
        """Cut the story to the new width (it was drawn for the old one, or while
        the view was hidden and had none)."""
        width = self.query_one("#element-main").size.width
        if width and width != self._drawn_width:
            highlighted = self.query_one("#element-links", OptionList).highlighted
            self._show_details()
            if highlighted is not None:
                self.query_one("#element-links", OptionList).highlighted = highlighted

    def _sets(self, eid: str) -> dict[int, list[tuple[str, str]]]:
        """The props each decision in force sets on ``eid`` (from its event)."""
        assert self.snapshot is not None
        out: dict[int, list[tuple[str, str]]] = {}
        for idx in self.snapshot.view.heads(eid):
            for m in self.snapshot.mutations_of(idx):
                if m.element_id != eid:
                    continue
                if m.op == "set_prop":
                    out.setdefault(idx, []).append((m.key, m.value))
                elif m.op == "upsert_element":
                    out.setdefault(idx, []).extend(m.props)
        return out

    @on(OptionList.OptionSelected, "#element-links")
    def _follow(self, event: OptionList.OptionSelected) -> None:
        if not 0 <= event.option_index < len(self._targets):
            return
        kind, ref = self._targets[event.option_index]
        if kind == "e":
            self.post_message(ElementRequested(ref))
        else:
            self.post_message(DecisionRequested(int(ref)))


#: How an option looks: its text, spans and style, and whether it is disabled.
_Look = tuple[str, tuple[object, ...], str, bool]


def _look(option: Option) -> _Look:
    prompt = option.prompt
    if isinstance(prompt, Text):
        return (prompt.plain, tuple(prompt.spans), str(prompt.style), option.disabled)
    return (str(prompt), (), "", option.disabled)


def _navigation(
    v: KgView, eid: str, palette: Palette, width: int
) -> list[tuple[Option, tuple[str, str]]]:
    """Links to follow, then the element's story (oldest first) to open.

    Each option comes with its target (``("e", element)`` or ``("d", index)``)
    rather than an option id: one neighbour can be reached by several links (a
    self-loop, an edge both ways), and option ids must be unique.
    """
    options: list[tuple[Option, tuple[str, str]]] = []
    for arrow, links, way in (
        ("→ ", v.links_out(eid), "out"),
        ("← ", v.links_in(eid), "in"),
    ):
        for link in links[:LINK_ROWS]:
            line = Text(arrow)
            line.append_text(plain(link.kind, palette.link))
            line.append(" ")
            line.append_text(plain(v.label(link.other)))
            options.append((Option(line), ("e", link.other)))
        if len(links) > LINK_ROWS:
            more = f"… {len(links) - LINK_ROWS:,} more links {way}: the Graph view (2)"
            options.append((Option(Text(more, DIM), disabled=True), ("-", "")))
    history = v.history(eid)
    told = history[-STORY_ROWS:]
    if told:
        heading = (
            f"Story · {len(told)} decision(s), oldest first · s: whole"
            if len(told) == len(history)
            else f"Story · the newest {len(told)} of {len(history):,} decisions,"
            " oldest first · s: whole"
        )
        options.append((Option(Text(heading, "bold"), disabled=True), ("-", "")))
    for entry in element_story(v, eid, told):
        row = story_row(v, entry, palette, width)
        options.append((Option(row), ("d", str(entry.decision.index))))
    return options
