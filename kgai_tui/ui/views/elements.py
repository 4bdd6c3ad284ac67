"""ElementsView: elements grouped by kind, filter as you type, and one element's story."""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Input, OptionList, Static, Tree
from textual.widgets.option_list import Option

from kgai_tui.ui.render import CONTESTED, DIM, HEAD, element_details, element_label
from kgai_tui.ui.safe_text import one_line, plain

if TYPE_CHECKING:
    from kgai_tui.core.projection_view import ProjectionView
from kgai_tui.ui.snapshot import DecisionRequested, ElementRequested, Snapshot


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

    def compose(self) -> ComposeResult:
        """Lay out the filter, tree and details."""
        with Vertical(id="element-side"):
            yield Input(placeholder="filter elements…", id="element-filter")
            tree: Tree[str] = Tree("elements", id="element-tree")
            tree.show_root = False
            yield tree
        with Vertical(id="element-main"):
            with VerticalScroll(id="element-scroll"):
                yield Static(id="element-details")
            yield OptionList(id="element-links", markup=False)

    def show(self, snapshot: Snapshot) -> None:
        """Render a new snapshot, keeping the selection when it still exists."""
        self.snapshot = snapshot
        self._fill_tree()
        p = snapshot.projection
        if self.selected is None or self.selected not in p.graph:
            self.selected = next(
                iter(sorted(p.graph.nodes, key=lambda e: element_label(p, e))), None
            )
        self._show_details()

    def select(self, element_id: str) -> None:
        """Show one element."""
        self.selected = element_id
        self._show_details()

    @on(Input.Changed, "#element-filter")
    def _filter(self) -> None:
        self._fill_tree()

    def _fill_tree(self) -> None:
        if self.snapshot is None:
            return
        p = self.snapshot.projection
        needle = self.query_one("#element-filter", Input).value.strip().lower()
        tree: Tree[str] = self.query_one("#element-tree", Tree)
        tree.clear()
        by_kind: dict[str, list[str]] = {}
        for eid in p.graph.nodes:
            kind, name, _ = p.element(eid) or ("", "", "")
            if needle and needle not in name.lower() and needle not in kind.lower():
                continue
            by_kind.setdefault(kind or "(stub)", []).append(eid)
        added = (
            set(self.snapshot.delta.elements_added) if self.snapshot.delta else set()
        )
        for kind in sorted(by_kind):
            members = sorted(
                by_kind[kind],
                key=lambda e: ((p.element(e) or ("", "", ""))[1].lower(), e),
            )
            branch = tree.root.add(
                plain(f"{kind} ({len(members)})", "bold"), expand=True
            )
            for eid in members:
                name = (p.element(eid) or ("", "", ""))[1] or f"(unnamed {eid})"
                label = plain(one_line(name, 60))
                if eid in p.contested:
                    label.stylize(CONTESTED)
                    label.append(" ⚠", CONTESTED)
                if eid in added:
                    label.append(" new", "bold green")
                branch.add_leaf(label, data=eid)

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
        if self.snapshot is None or self.selected is None:
            details.update(Text("no elements yet", style="dim"))
            return
        p = self.snapshot.projection
        if self.selected not in p.graph:
            details.update(
                Text("this element does not exist at this moment", style="dim")
            )
            return
        details.update(
            element_details(p, self.selected, width=max(self.size.width - 34, 40))
        )
        links.add_options(_navigation(p, self.selected))
        links.display = links.option_count > 0

    @on(OptionList.OptionSelected, "#element-links")
    def _follow(self, event: OptionList.OptionSelected) -> None:
        kind, _, ref = (event.option.id or "").partition(":")
        if kind == "e" and ref:
            self.post_message(ElementRequested(ref))
        elif kind == "d" and ref:
            self.post_message(DecisionRequested(int(ref)))


def _navigation(p: ProjectionView, eid: str) -> list[Option]:
    """Links to follow, then the element's decisions (newest first) to open."""
    from kgai_tui.core.reads import history_order

    graph = p.graph
    options: list[Option] = []
    outs = sorted(graph.out_edges(eid, keys=True), key=lambda e: (e[2], e[1]))
    for _, t, k in outs:
        line = Text("→ ")
        line.append_text(plain(k, "magenta"))
        line.append(" ")
        line.append_text(plain(element_label(p, t)))
        options.append(Option(line, id=f"e:{t}"))
    ins = sorted(graph.in_edges(eid, keys=True), key=lambda e: (e[2], e[0]))
    for f, _, k in ins:
        line = Text("← ")
        line.append_text(plain(k, "magenta"))
        line.append(" ")
        line.append_text(plain(element_label(p, f)))
        options.append(Option(line, id=f"e:{f}"))
    heads = set(p.heads.get(eid, ()))
    for idx in reversed(history_order(p, list(p.el_shapes.get(eid, {})))):
        line = Text("● " if idx in heads else "○ ", HEAD if idx in heads else DIM)
        line.append_text(plain(one_line(p.dec_title[idx] or p.dec_id[idx], 90)))
        options.append(Option(line, id=f"d:{idx}"))
    return options
