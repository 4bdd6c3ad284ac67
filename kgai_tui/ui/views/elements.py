"""ElementsView: elements grouped by kind, filter as you type, and one element's story."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Input, OptionList, Static, Tree
from textual.widgets.option_list import Option

from kgai_tui.core.reads.view import element_label
from kgai_tui.ui.render import DIM, element_details
from kgai_tui.ui.safe_text import one_line, plain
from kgai_tui.ui.snapshot import DecisionRequested, ElementRequested, Snapshot
from kgai_tui.ui.theme import Palette
from kgai_tui.ui.widgets.element_tree import ElementTree

if TYPE_CHECKING:
    from kgai_tui.core.reads.view import KgView


#: Leaves a branch shows at most; the rest are one "more" line (type to narrow).
#: A store of 100k elements drew every one of them: seconds on the UI thread
#: before the first view, for a list nobody scrolls through.
BRANCH_LEAVES = 2000


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

    def label(self, palette: Palette) -> Text:
        """The leaf's label: the name on one line, shown, never markup."""
        label = plain(one_line(self.listed, 60))
        if self.contested:
            label.stylize(palette.contested)
            label.append(" ⚠", palette.contested)
        if self.new:
            label.append(" new", palette.new)
        return label


#: One branch to draw: its label, its first leaves, how many more match.
Branch = tuple[Text, list[tuple[Text, str]], int]


@dataclass(frozen=True, slots=True)
class ElementRows:
    """The tree of one snapshot, ready to draw: built in a worker, not on the UI.

    At 10,000 elements, looking every element up and sorting them takes a good
    part of a second; the UI thread then only adds the leaves it shows.
    """

    groups: tuple[tuple[str, tuple[ElementRow, ...]], ...]
    first: str | None  # the element shown when nothing is selected
    palette: Palette

    def filtered(self, needle: str, cap: int | None = None) -> list[Branch]:
        """Branches whose name or kind contains ``needle`` (lower case): each
        with its count, its first ``cap`` leaves (:data:`BRANCH_LEAVES`) and how
        many it leaves out."""
        cap = BRANCH_LEAVES if cap is None else cap
        out: list[Branch] = []
        for kind, rows in self.groups:
            match = (
                [r for r in rows if needle in r.name or needle in r.kind]
                if needle
                else rows
            )
            if match:
                leaves = [(r.label(self.palette), r.eid) for r in match[:cap]]
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
    by_kind: dict[str, list[tuple[str, str, str, str]]] = {}
    first: tuple[str, str] | None = None
    for eid, kind, name in v.element_names():
        by_kind.setdefault(kind or "(stub)", []).append((name.lower(), eid, kind, name))
        # The element shown when nothing is selected: the least label, then id.
        shown = element_label(eid, kind, name)
        if first is None or (shown, eid) < first:
            first = (shown, eid)
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
            )
            for lower, eid, real_kind, name in members
        )
        groups.append((kind, rows))
    return ElementRows(tuple(groups), None if first is None else first[1], palette)


class ElementsView(Horizontal):
    """Left: the element tree; right: props, links, decisions in force, history."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("f", "filter", "Filter", show=True),
        Binding("escape", "leave_filter", "Back", show=False),
    ]

    def action_filter(self) -> None:
        """Focus the filter box (type to narrow the tree)."""
        self.query_one("#element-filter", Input).focus()

    def action_leave_filter(self) -> None:
        """Return from the filter box to the tree."""
        self.query_one("#element-tree", Tree).focus()

    @on(Input.Submitted, "#element-filter")
    def _filter_done(self) -> None:
        self.query_one("#element-tree", Tree).focus()

    def __init__(self, *, id: str | None = None) -> None:
        """Start empty; the app sends a snapshot."""
        super().__init__(id=id)
        self.snapshot: Snapshot | None = None
        self.selected: str | None = None
        self._targets: list[tuple[str, str]] = []
        self._rows: ElementRows | None = None

    def compose(self) -> ComposeResult:
        """Lay out the filter, tree and details."""
        with Vertical(id="element-side"):
            yield Input(placeholder="filter elements…", id="element-filter")
            tree = ElementTree("elements", id="element-tree")
            tree.show_root = False
            yield tree
        with Vertical(id="element-main"):
            with VerticalScroll(id="element-scroll"):
                yield Static(id="element-details")
            yield OptionList(id="element-links", markup=False)

    def show(self, snapshot: Snapshot, rows: ElementRows) -> None:
        """Render a new snapshot, keeping the selection when it still exists.

        ``rows`` is :func:`element_rows` of the snapshot, computed off the UI thread.
        """
        self.snapshot = snapshot
        if rows != self._rows:  # the same tree keeps its cursor (the whole store
            self._rows = rows  # loaded after the first view, a reload)
            self._fill_tree()
        if self.selected is None or not snapshot.view.has_element(self.selected):
            self.selected = rows.first
        self._show_details()

    def select(self, element_id: str) -> None:
        """Show one element."""
        self.selected = element_id
        self._show_details()

    @on(Input.Changed, "#element-filter")
    def _filter(self) -> None:
        self._fill_tree()

    def _fill_tree(self) -> None:
        if self._rows is None:
            return
        needle = self.query_one("#element-filter", Input).value.strip().lower()
        self.query_one("#element-tree", ElementTree).fill(self._rows.filtered(needle))

    @on(Tree.NodeHighlighted, "#element-tree")
    def _highlighted(self, event: Tree.NodeHighlighted[str]) -> None:
        if event.node.data is not None:
            self.selected = event.node.data
            self._show_details()

    @on(Tree.NodeSelected, "#element-tree")
    def _selected(self, event: Tree.NodeSelected[str]) -> None:
        if event.node.data is not None:
            self.selected = event.node.data
            self._show_details()
            self.query_one("#element-links", OptionList).focus()

    def _show_details(self) -> None:
        details = self.query_one("#element-details", Static)
        links = self.query_one("#element-links", OptionList)
        links.clear_options()
        self._targets = []
        if self.snapshot is None or self.selected is None:
            details.update(Text("no elements yet", style="dim"))
            return
        v = self.snapshot.view
        if not v.has_element(self.selected):
            details.update(
                Text("this element does not exist at this moment", style="dim")
            )
            return
        palette = self.snapshot.palette
        details.update(
            element_details(
                v,
                self.selected,
                palette=palette,
                width=max(self.size.width - 34, 40),
            )
        )
        navigation = _navigation(v, self.selected, palette)
        self._targets = [target for _, target in navigation]
        links.add_options([option for option, _ in navigation])
        links.display = links.option_count > 0

    @on(OptionList.OptionSelected, "#element-links")
    def _follow(self, event: OptionList.OptionSelected) -> None:
        if not 0 <= event.option_index < len(self._targets):
            return
        kind, ref = self._targets[event.option_index]
        if kind == "e":
            self.post_message(ElementRequested(ref))
        else:
            self.post_message(DecisionRequested(int(ref)))


def _navigation(
    v: KgView, eid: str, palette: Palette
) -> list[tuple[Option, tuple[str, str]]]:
    """Links to follow, then the element's decisions (newest first) to open.

    Each option comes with its target (``("e", element)`` or ``("d", index)``)
    rather than an option id: one neighbour can be reached by several links (a
    self-loop, an edge both ways), and option ids must be unique.
    """
    options: list[tuple[Option, tuple[str, str]]] = []
    for arrow, links in (("→ ", v.links_out(eid)), ("← ", v.links_in(eid))):
        for link in links:
            line = Text(arrow)
            line.append_text(plain(link.kind, palette.link))
            line.append(" ")
            line.append_text(plain(v.label(link.other)))
            options.append((Option(line), ("e", link.other)))
    for idx in reversed(v.history(eid)):
        head = v.is_head(eid, idx)
        d = v.decision(idx)
        line = Text("● " if head else "○ ", palette.head if head else DIM)
        line.append_text(plain(one_line(d.title or d.id, 90)))
        options.append((Option(line), ("d", str(idx))))
    return options
