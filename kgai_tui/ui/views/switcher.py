"""The eight views in one ContentSwitcher: which one shows, and handing each a snapshot."""

from __future__ import annotations

from pathlib import Path

from textual.app import ComposeResult
from textual.widgets import ContentSwitcher, Input

from kgai_tui.ui.snapshot import Snapshot
from kgai_tui.ui.views.conflicts import ConflictsView
from kgai_tui.ui.views.elements import ElementRows, ElementsView
from kgai_tui.ui.views.graph import GraphView
from kgai_tui.ui.views.paths import PathsView
from kgai_tui.ui.views.people import PeopleView
from kgai_tui.ui.views.query import QueryView
from kgai_tui.ui.views.search import SearchView
from kgai_tui.ui.views.timeline import TimelineView

FOCUS = {
    "elements": "#element-tree",
    "graph": "#graph",
    "timeline": "#timeline-list",
    "conflicts": "#conflict-list",
    "search": "#search-input",
    "paths": "#paths-input",
    "people": "#people-table",
    "query": "#query-input",
}
"""The widget each view focuses when shown."""

LISTS = {
    "elements": "#element-tree",
    "search": "#search-results",
    "paths": "#paths-results",
    "query": "#query-table",
}
"""Where Escape leaves a view's text box for (its main list)."""


class ViewSwitcher(ContentSwitcher):
    """Elements, Graph, Timeline, Conflicts, Search, Paths, People and Query, one at
    a time."""

    def __init__(self, root: Path, *, id: str | None = None) -> None:
        """Start on Elements; ``root`` is where Conflicts writes resolutions."""
        super().__init__(initial="elements", id=id)
        self.root = root
        #: Per view, the id of the widget that had the focus when it was left:
        #: going back restores it (a box left for its list stays left).
        self._left_focus: dict[str, str] = {}

    def compose(self) -> ComposeResult:
        """The six views."""
        yield ElementsView(id="elements")
        yield GraphView(id="graph")
        yield TimelineView(id="timeline")
        yield ConflictsView(self.root, id="conflicts")
        yield SearchView(id="search")
        yield PathsView(id="paths")
        yield PeopleView(id="people")
        yield QueryView(id="query")

    def show_view(self, key: str, *, back: bool = False) -> None:
        """Show a view by id and focus its main widget; the Graph centred on the
        element chosen in Elements (a walk in the Graph chooses there too).

        ``back``: the view is returned to (Escape, ``q``): the focus goes where it
        was when the view was left, so a search box the user had left for its
        hits does not take the next key typed (``8`` went into the box)."""
        self._note_focus()
        if key == "graph":
            chosen = self.query_one(ElementsView).choice
            graph = self.query_one(GraphView)
            snapshot = graph.snapshot
            if chosen is not None and chosen != graph.center and snapshot is not None:
                graph.show(snapshot, chosen)
        self.current = key
        if key == "graph":  # drawn only while shown
            self.query_one(GraphView).catch_up()
        elif key == "conflicts":
            self.query_one(ConflictsView).catch_up()
        left = self._left_focus.get(key) if back else None
        found = self.query(f"#{left}") if left is not None else None
        target = found.first() if found else None
        if target is not None and target.focusable:
            target.focus()
        else:
            self.query_one(FOCUS[key]).focus()

    def _note_focus(self) -> None:
        """Remember which widget of the view in front has the focus, as it is left."""
        current, focused = self.current, self.screen.focused
        if current is None or focused is None or focused.id is None:
            return
        if any(node.id == current for node in focused.ancestors):
            self._left_focus[current] = focused.id

    def leave_text(self) -> bool:
        """Leave a focused text box of the current view for its main list;
        ``False`` when no text box had the focus (Escape then goes back)."""
        focused = self.screen.focused
        if not isinstance(focused, Input) or self.current not in LISTS:
            return False
        self.query_one(LISTS[self.current]).focus()
        return True

    def present(self, snapshot: Snapshot, rows: ElementRows) -> None:
        """Show a snapshot in every view but the timeline.

        ``rows`` is the Elements tree computed off the UI thread; the timeline is
        left to :meth:`show_timeline`, after this has been painted. The Graph is
        centred on Elements' choice, also at a moment it does not exist at.
        """
        elements = self.query_one(ElementsView)
        elements.show(snapshot, rows)
        self.query_one(GraphView).show(snapshot, elements.choice)
        self.query_one(ConflictsView).show(snapshot)
        self.query_one(SearchView).show(snapshot)
        self.query_one(PathsView).show(snapshot)
        self.query_one(PeopleView).show(snapshot)
        self.query_one(QueryView).show(snapshot)

    def show_timeline(self, snapshot: Snapshot) -> None:
        """Show a snapshot in the timeline (O(decisions), in its worker)."""
        self.query_one(TimelineView).show(snapshot)

    def highlight_decision(self, decision_id: str) -> None:
        """Put the Elements story's cursor on a decision (and the focus there)."""
        self.query_one(ElementsView).highlight_decision(decision_id)

    def select_element(self, snapshot: Snapshot, element_id: str) -> None:
        """Show an element in Elements and centre the Graph on it."""
        self.query_one(ElementsView).select(element_id)
        self.query_one(GraphView).show(snapshot, element_id)
